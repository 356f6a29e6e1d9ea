"""Activation offload by layer (Megatron-Core cpu_offloading_num_layers): memory, step cost, the
planner's fewest-layers choice and the intake rules (perf/offload.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workload_compiler import compile_workload
from workload_compiler.arch.presets import preset_arch as preset
from workload_compiler.catalog.frameworks import framework_profile
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.perf.layout import Layout, TrainingSetup
from workload_compiler.perf.memory import training_memory_bytes, training_memory_detail
from workload_compiler.perf.offload import (
    applies,
    copy_efficiency,
    exposed_s,
    fewest_layers_to_fit,
    kept_fraction,
    most_layers,
)
from workload_compiler.perf.step_time import training_step
from workload_compiler.spine.training_setup import check_host_link


def _gb300_recipe(**parallelism: Any) -> dict[str, Any]:
    """Megatron-Bridge's Llama 3 70B BF16 GB300 base config: 64 GPUs, Megatron-FSDP, mbs 2, no
    recompute, cpu_offloading_num_layers 30 (scripts/performance/configs/llama/llama3_workload_base_configs.py)."""
    return {"kind": "training", "model": {"preset": "llama3-70b"},
            "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 128, "precision": "bf16",
                         "framework": "nemo"},
            "compute": {"accelerator": "gb300", "gpus": 64,
                        "parallelism": {"tp": 1, "pp": 1, "dp": 64, "zero_stage": 3, "micro_batch_size": 2,
                                        "recompute": "none", **parallelism}}}


def test_kept_fraction_keeps_one_offloaded_layer_in_transit() -> None:
    assert float(kept_fraction(np.asarray(0), np.asarray(80.0))) == 1.0
    assert float(kept_fraction(np.asarray(30), np.asarray(80.0))) == pytest.approx(51 / 80)


def test_offload_applies_at_pp1_without_recompute_and_needs_two_layers_to_free_any() -> None:
    """Megatron-Core: pp 1, no recompute, fewer layers than the model's; with one layer always in
    transit (kept_fraction), offloading 1 of 2 layers frees nothing."""
    assert applies(np.asarray([1, 1, 2]), np.asarray([0, 2, 0])).tolist() == [True, False, False]
    assert most_layers(80) == 79 and most_layers(3) == 2
    assert most_layers(2) is None and float(kept_fraction(np.asarray(1), np.asarray(2.0))) == 1.0


def test_memory_drops_by_the_offloaded_layers_stored_activations() -> None:
    arch = preset("llama3-70b")
    setup = TrainingSetup(seq_len=8192, global_batch_size=128, precision="bf16", framework=framework_profile("nemo"))
    base = Layout.of(tp=1, pp=1, dp=64, cp=1, ep=1, etp=1, vp=1, mbs=2, recompute=0, sp=False, zero=3)
    d0 = training_memory_detail(arch, setup, base)
    d30 = training_memory_detail(arch, setup, dataclasses.replace(base, offload=np.asarray(30)))
    stored = float(d0["activations_stored_first"])
    assert float(d30["activations_stored_first"]) == pytest.approx(stored * 51 / 80)
    assert float(d0["weights"]) == float(d30["weights"])


def test_fewest_layers_to_fit_is_the_smallest_count_under_the_cap() -> None:
    arch = preset("llama3-70b")
    setup = TrainingSetup(seq_len=8192, global_batch_size=128, precision="bf16")
    base = Layout.of(tp=1, pp=1, dp=64, cp=1, ep=1, etp=1, vp=1, mbs=2, recompute=0, sp=False, zero=3)
    total = training_memory_bytes(arch, setup, base)["total"]
    cap = 0.7 * float(total)
    n = int(fewest_layers_to_fit(arch, setup, base, np.asarray(total), cap, training_memory_bytes))
    assert 1 < n < arch.layers

    def at(k: int) -> float:
        return float(training_memory_bytes(arch, setup, dataclasses.replace(base, offload=np.asarray(k)))["total"])

    assert at(n) <= cap < at(n - 1)
    # a recompute mode or pp > 1 is never offloaded (Megatron-Core refuses both)
    for other in (dataclasses.replace(base, recompute=np.asarray(2)), dataclasses.replace(base, pp=np.asarray(2))):
        assert int(fewest_layers_to_fit(arch, setup, other, np.asarray(total), cap, training_memory_bytes)) == 0


def test_copies_cost_only_what_the_neighbouring_layers_compute_does_not_hide() -> None:
    hw = load_catalog().hardware("gb200")
    rate = hw.host_link_bytes_per_s * copy_efficiency()
    copy = 4.0e9 / rate
    hidden = exposed_s(np.asarray(4.0e9), np.asarray(copy), np.asarray(10), np.asarray(2.0), hw)
    assert float(hidden) == 0.0        # out under one forward, in under one backward (2 forwards)
    fwd = copy / 4
    cost = exposed_s(np.asarray(4.0e9), np.asarray(fwd), np.asarray(10), np.asarray(2.0), hw)
    assert float(cost) == pytest.approx(2.0 * 10 * ((copy - fwd) + (copy - 2 * fwd)))


def test_the_step_pays_the_exposed_copies() -> None:
    arch, catalog = preset("llama3-70b"), load_catalog()
    hw = catalog.hardware("b200")       # PCIe Gen5: the copies do not hide under a layer's compute
    setup = TrainingSetup(seq_len=8192, global_batch_size=128, precision="bf16")
    base = Layout.of(tp=1, pp=1, dp=64, cp=1, ep=1, etp=1, vp=1, mbs=2, recompute=0, sp=False, zero=3)
    t0 = training_step(arch, setup, base, hw)
    t10 = training_step(arch, setup, dataclasses.replace(base, offload=np.asarray(10)), hw)
    assert float(t0.breakdown_s["offload_exposed"]) == 0.0
    extra = float(t10.breakdown_s["offload_exposed"])
    assert extra > 0.0
    assert float(t10.step_time_s) == pytest.approx(float(t0.step_time_s) + extra)


def test_the_gb300_recipe_fits_by_offloading_as_its_config_does() -> None:
    """Without offload the recipe's layout needs ~406 GB of GB300's 279: 'does not fit' for a run
    that ran. Free to offload, the planner offloads a count near the config's 30; pinned to the
    config's 30 it fits; pinned to 0 it does not, with memory named."""
    auto = compile_workload(_gb300_recipe())
    assert auto.feasible
    chosen = auto.compute.parallelism.activation_offload_layers
    assert 20 <= chosen <= 40
    assert auto.compute.memory_per_gpu_bytes <= auto.compute.hbm_bytes
    pinned = compile_workload(_gb300_recipe(activation_offload_layers=30))
    assert pinned.feasible and pinned.compute.parallelism.activation_offload_layers == 30
    none = compile_workload(_gb300_recipe(activation_offload_layers=0))
    assert not none.feasible and "memory" in (none.binding_constraint or "")


@pytest.mark.parametrize(("extra", "framework", "match"), [
    ({"activation_offload_layers": 80}, "nemo", "fewer than the model's 80 layers"),
    ({"activation_offload_layers": 10, "recompute": "full"}, "nemo", "recompute"),
    ({"activation_offload_layers": 10, "pp": 2, "dp": 32}, "nemo", "pp 1"),
    ({"activation_offload_layers": 10}, "torchtitan", "offloads no whole layers"),
])
def test_offload_outside_megatron_cores_rules_is_refused_with_the_key_named(
        extra: dict[str, Any], framework: str, match: str) -> None:
    intake = _gb300_recipe(**extra)
    intake["training"]["framework"] = framework
    if "recompute" in extra:
        intake["compute"]["parallelism"]["recompute"] = extra["recompute"]
    with pytest.raises(InputError, match=r"compute\.parallelism\.activation_offload_layers.*" + match):
        compile_workload(intake)


def test_grace_superchips_offload_over_nvlink_c2c() -> None:
    catalog = load_catalog()
    assert catalog.hardware("gb200").host_link_bytes_per_s == 225e9
    assert catalog.hardware("gh200").host_link_bytes_per_s == 450e9
    assert catalog.hardware("b200").host_link_bytes_per_s == 64e9      # PCIe Gen5 x16


def test_pinned_offload_without_a_known_host_link_is_refused_with_the_key_named() -> None:
    """Every packaged accelerator that compiles has a host link; a user catalog's entry may not."""
    hw = dataclasses.replace(load_catalog().hardware("h100-sxm"), host_link_bytes_per_s=None)
    check_host_link(0, hw)
    with pytest.raises(InputError, match=r"activation_offload_layers.*no host link bandwidth for h100-sxm"):
        check_host_link(10, hw)


def test_plan_names_the_offloaded_layers_in_the_table_and_the_json(tmp_path: Path) -> None:
    import yaml
    from typer.testing import CliRunner

    from workload_compiler.cli.main import app
    path = tmp_path / "gb300.yaml"
    path.write_text(yaml.safe_dump(_gb300_recipe(activation_offload_layers=30)), encoding="utf-8")
    runner = CliRunner()
    text = runner.invoke(app, ["plan", str(path)])
    assert text.exit_code == 0 and "offload 30" in text.output
    doc = json.loads(runner.invoke(app, ["plan", str(path), "--json"]).output)
    assert doc["layouts"][0]["activation_offload_layers"] == 30
    assert doc["layouts"][0]["step_breakdown_s"]["offload_exposed"] > 0


@pytest.mark.parametrize(("accelerator", "precision", "mbs", "layers"), [
    ("gb300", "bf16", 2, 30), ("gb300", "fp8", 2, 20), ("gb200", "bf16", 1, 20), ("gb200", "fp8", 2, 40),
    ("b200", "fp8", 1, 5)])
def test_every_megatron_bridge_llama3_70b_offload_config_fits_as_configured(
        accelerator: str, precision: str, mbs: int, layers: int) -> None:
    """The runs of llama3_workload_base_configs.py that offload (Megatron-FSDP on 64 GPUs, no
    recompute): each fits with its configured count, and the fewest the planner finds is at most
    a couple of layers above it (the configs keep a margin where the micro-batch is 1)."""
    intake = _gb300_recipe(micro_batch_size=mbs)
    intake["compute"]["accelerator"] = accelerator
    intake["training"]["precision"] = precision
    auto = compile_workload(intake)
    assert auto.feasible
    assert auto.compute.parallelism.activation_offload_layers <= layers + 2
    intake["compute"]["parallelism"]["activation_offload_layers"] = layers
    assert compile_workload(intake).feasible


@pytest.mark.parametrize(("accelerator", "precision", "layers"), [("gb300", "bf16", 40), ("gb300", "fp8", 10),
                                                                  ("gb200", "fp8", 95)])
def test_every_megatron_bridge_llama31_405b_offload_config_fits_as_configured(
        accelerator: str, precision: str, layers: int) -> None:
    """llama31_workload_base_configs.py: 128 GPUs, tp 2, Megatron-FSDP, global batch 64, no recompute,
    cpu_offloading_num_layers 40 / 10 / 95. Each fits with its count (a tight fit, within the memory
    model's error, is a fit)."""
    intake = _gb300_recipe(tp=2, micro_batch_size=1, activation_offload_layers=layers)
    intake["model"]["preset"] = "llama3.1-405b"
    intake["training"] |= {"precision": precision, "global_batch_size": 64}
    intake["compute"] |= {"accelerator": accelerator, "gpus": 128}
    assert compile_workload(intake).feasible


def test_the_record_memory_invariant_judges_with_the_planners_offload() -> None:
    """validation/record_layout.py least_memory: a record stating no recompute at pp 1 is judged
    with the leanest offload where the planner may offload, and without it where it may not."""
    from workload_compiler.validation.record_layout import MemoryCase, least_memory
    arch = preset("llama3-70b")
    fw = framework_profile("nemo")
    setup = TrainingSetup(seq_len=8192, global_batch_size=128, precision="bf16", framework=fw)
    layout = Layout.of(tp=1, pp=1, dp=64, cp=1, ep=1, etp=1, vp=1, mbs=2, recompute=0, sp=False, zero=3)
    hbm = load_catalog().accelerators["gb300"].process_memory_bytes
    case = MemoryCase(id="gb300-recipe", arch=arch, setup=setup, layout=layout, hbm_bytes=hbm,
                      accelerator="gb300", framework=fw, recompute_codes=(0,), notes=())
    without, _ = least_memory(case)
    with_offload, code = least_memory(dataclasses.replace(case, offload_allowed=True))
    assert without["total"] > hbm > with_offload["total"] and code == 0
    expected = training_memory_bytes(arch, setup, dataclasses.replace(layout, offload=np.asarray(79)))["total"]
    assert with_offload["total"] == pytest.approx(float(expected))
