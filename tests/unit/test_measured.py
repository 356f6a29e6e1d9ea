"""The `measured` block: entry checks, binding to the sized machine, and the hook through the
hardware view into the training, inference and HPC models."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest

from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.intake.load import parse_workload
from workload_compiler.intake.measured import MachineRef, MeasuredValue
from workload_compiler.measure import fields
from workload_compiler.measure.apply import bind, entry, rates, sized_machines
from workload_compiler.perf import collectives
from workload_compiler.perf.efficiency import HBM_EFFICIENCY
from workload_compiler.perf.fitted import FITTED
from workload_compiler.perf.gemm_precision import gemm_speed
from workload_compiler.perf.layout import Layout, MeasuredRates, TrainingSetup
from workload_compiler.perf.step_time import training_step

CAT = load_catalog()
DAY = dt.date(2026, 5, 1)


def mv(value: float, unit: str, kind: str, machine: str) -> MeasuredValue:
    return MeasuredValue(value=value, unit=unit, machine=MachineRef(kind=kind, id=machine), date=DAY,  # type: ignore[arg-type]
                         tool="test")


def training(**compute: Any) -> Any:
    return parse_workload({"kind": "training", "model": {"preset": "llama3-8b"}, "compute": compute})


def test_every_field_key_resolves_and_unknown_keys_name_the_nearest() -> None:
    for key in fields.field_keys():
        spec, choice = fields.lookup(key)
        assert spec.key.format(choice=choice) == key if choice else spec.key == key
    with pytest.raises(InputError) as exc:
        fields.lookup("accelerator.hbm_bandwidth_byte_per_s")
    assert "accelerator.hbm_bandwidth_bytes_per_s" in str(exc.value)


@pytest.mark.parametrize(("key", "value", "why"), [
    (mv(2.9e12, "GB/s", "accelerator", "h100-sxm"), "unit", "B/s"),
    (mv(2.9e12, "B/s", "cpu", "h100-sxm"), "machine.kind", "accelerator"),
    (mv(2.9e3, "B/s", "accelerator", "h100-sxm"), "value", "unit slip"),
    (mv(2.9e12, "B/s", "accelerator", "h100-sxn"), "machine.id", "h100-sxm"),
])
def test_an_entry_with_a_wrong_unit_kind_range_or_machine_is_refused(key: MeasuredValue, value: str,
                                                                      why: str) -> None:
    with pytest.raises(InputError) as exc:
        entry("accelerator.hbm_bandwidth_bytes_per_s", key, CAT, "intake")
    assert exc.value.field.endswith(value) and why in str(exc.value)


def test_machine_ids_go_through_catalog_aliases_and_cpu_models_compare_case_folded() -> None:
    e = entry("accelerator.hbm_bandwidth_bytes_per_s", mv(2.9e12, "B/s", "accelerator", "H100_SXM"), CAT, "intake")
    assert e.machine_id == "h100-sxm"
    c = entry("host.read_bytes_per_s", mv(1e9, "B/s", "cpu", "  AMD  EPYC 7B13 "), CAT, "intake")
    assert c.machine_id == "amd epyc 7b13"


def test_sized_machines_follow_the_archetypes_precedence() -> None:
    assert sized_machines(training(accelerator="a100-sxm-80gb"), CAT).accelerators == {"a100-sxm-80gb"}
    by_system = sized_machines(training(system="dgx-b200"), CAT)
    assert by_system.accelerators == {"b200"} and by_system.systems == {"dgx-b200"}
    default = sized_machines(training(), CAT)
    assert default.accelerators == {"h100-sxm"} and default.systems == {"dgx-h100"} and "assumed" in default.why
    served = sized_machines(parse_workload({"kind": "inference", "model": {"preset": "llama3-8b"}}), CAT)
    assert len(served.accelerators) > 1 and "search" in served.why


def test_an_intake_measurement_of_another_accelerator_is_refused_naming_both() -> None:
    w = training(accelerator="a100-sxm-80gb")
    w.measured.values["accelerator.hbm_bandwidth_bytes_per_s"] = mv(2.9e12, "B/s", "accelerator", "h100-sxm")
    with pytest.raises(InputError) as exc:
        bind(w, CAT, [])
    assert "h100-sxm" in str(exc.value) and "a100-sxm-80gb" in str(exc.value)


def test_a_library_file_for_another_accelerator_is_not_refused_and_not_applied() -> None:
    lib = [("h100.yaml", "accelerator.hbm_bandwidth_bytes_per_s", mv(2.9e12, "B/s", "accelerator", "h100-sxm"))]
    bound = bind(training(accelerator="a100-sxm-80gb"), CAT, lib)
    assert bound.catalog.hardware("a100-sxm-80gb").measured == MeasuredRates()
    assert bound.catalog.hardware("h100-sxm").measured.hbm_bytes_per_s == 2.9e12


def test_rates_need_both_gemm_constants_and_key_bus_bandwidth_by_tier() -> None:
    es = [entry("accelerator.gemm_e_max.bf16", mv(0.78, "1", "accelerator", "h100-sxm"), CAT, "intake"),
          entry("accelerator.gemm_e_max.fp8", mv(0.7, "1", "accelerator", "h100-sxm"), CAT, "intake"),
          entry("accelerator.gemm_kernel_overhead_s.bf16", mv(1e-5, "s", "accelerator", "h100-sxm"), CAT, "intake"),
          entry("fabric.scale_out_busbw_bytes_per_s.all_reduce", mv(4.5e10, "B/s", "node", "dgx-h100"), CAT,
                "intake")]
    r = rates(es)
    assert r[("accelerator", "h100-sxm")].gemm == (("bf16", 0.78, 1e-5),)   # fp8 lacks its t0: not applied
    assert r[("node", "dgx-h100")].bus_bandwidth("scale_out", "all_reduce") == 4.5e10
    assert r[("node", "dgx-h100")].bus_bandwidth("scale_up", "all_reduce") is None


def _step(hw: Any) -> float:
    from workload_compiler.arch.presets import preset_arch
    arch = preset_arch("llama3-8b")
    lay = Layout.of(tp=2, pp=1, dp=4, cp=1, ep=1, etp=1, vp=1, mbs=1, recompute=0, sp=True, zero=1)
    return float(training_step(arch, TrainingSetup(seq_len=8192, global_batch_size=64, precision="bf16"), lay,
                               hw).step_time_s)


def test_measured_rates_equal_to_the_fitted_constants_change_nothing() -> None:
    hw = CAT.hardware("h100-sxm")
    # the model's own GEMM ceiling on this GPU: the fitted one times the GPU's measured gap to the median
    e_max = FITTED.gemm_e_max * gemm_speed(hw, TrainingSetup(seq_len=8192, global_batch_size=64, precision="bf16"))
    same = dataclasses.replace(hw, measured=MeasuredRates(
        gemm=(("bf16", e_max, FITTED.gemm_kernel_overhead_s),),
        hbm_bytes_per_s=hw.hbm_bandwidth_bytes_per_s * HBM_EFFICIENCY,
        busbw=(("scale_up.all_reduce", hw.scale_up_bandwidth_bytes_per_s * collectives.NVLINK_EFFICIENCY),)))
    assert _step(same) == pytest.approx(_step(hw), rel=1e-12)


def test_a_faster_measured_gemm_hbm_or_nvlink_shortens_the_step_and_a_slower_one_lengthens_it() -> None:
    hw = CAT.hardware("h100-sxm")
    base = _step(hw)
    for scale in (0.8, 1.25):
        m = MeasuredRates(gemm=(("bf16", FITTED.gemm_e_max * scale, FITTED.gemm_kernel_overhead_s),))
        t = _step(dataclasses.replace(hw, measured=m))
        assert (t < base) if scale > 1 else (t > base)
    slow_hbm = MeasuredRates(hbm_bytes_per_s=0.5 * hw.hbm_bandwidth_bytes_per_s)
    assert _step(dataclasses.replace(hw, measured=slow_hbm)) > base
    slow_link = MeasuredRates(busbw=(("scale_up.all_reduce", 50e9),))
    assert _step(dataclasses.replace(hw, measured=slow_link)) > base
    # an fp8 measurement does not touch a bf16 run
    fp8 = MeasuredRates(gemm=(("fp8", 0.99, 0.0),))
    assert _step(dataclasses.replace(hw, measured=fp8)) == base


def test_measured_bus_bandwidth_is_per_collective() -> None:
    hw = dataclasses.replace(CAT.hardware("h100-sxm"), measured=MeasuredRates(busbw=(("scale_up.all_to_all", 1e11),)))
    assert collectives.scale_up_bw(hw, "all_to_all") == 1e11
    assert collectives.scale_up_bw(hw) == hw.scale_up_bandwidth_bytes_per_s * collectives.NVLINK_EFFICIENCY


def test_measured_hbm_reaches_the_inference_and_hpc_models() -> None:
    from workload_compiler.hpc.device import hpc_device
    from workload_compiler.hpc.fitted import FITTED as HPC
    from workload_compiler.hpc.roofline import memory_rate
    lib = [("f", "accelerator.hbm_bandwidth_bytes_per_s", mv(3.0e12, "B/s", "accelerator", "h100-sxm"))]
    cat = bind(training(accelerator="h100-sxm"), CAT, lib).catalog
    dev = hpc_device(cat, "h100-sxm")
    assert memory_rate(dev, "stream", "benchmark") == pytest.approx(3.0e12)
    # a stencil keeps its fitted ratio to streaming
    assert memory_rate(dev, "stencil", "benchmark") == pytest.approx(3.0e12 * HPC.stencil_fraction
                                                                          / HPC.stream_fraction)
    assert memory_rate(hpc_device(CAT, "h100-sxm"), "stream", "benchmark") == pytest.approx(
        CAT.accelerator("h100-sxm").memory_bandwidth_bytes_per_s * HPC.stream_fraction)
    from workload_compiler.inference.device import serving_device
    assert serving_device(cat, "h100-sxm", None, "fp8", "fp8").device.hw.measured.hbm_bytes_per_s == 3.0e12


def test_the_readme_and_docstring_examples_of_the_block_validate() -> None:
    import re
    import textwrap
    from pathlib import Path

    import yaml

    from workload_compiler.intake import measured as module
    from workload_compiler.intake.measured import MeasuredIntake
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if b.startswith("measured:")]
    doc = module.__doc__ or ""
    blocks.append(textwrap.dedent(doc[doc.index("    measured:"):doc.index("The key is")]))
    assert len(blocks) == 2
    for text in blocks:
        block = MeasuredIntake.model_validate(yaml.safe_load(text)["measured"])
        (key, value), = block.values.items()
        assert entry(key, value, CAT, "intake").machine_id == "h100-sxm"


def test_a_calibration_directory_the_file_system_refuses_is_an_input_error() -> None:
    """A path too long for the file system (ENAMETOOLONG; the fuzz suite's 5,000-character value) is
    answered as a bad input naming the key, never an OSError."""
    from workload_compiler import compile_workload
    intake = {"kind": "training", "model": {"preset": "llama3-8b"}, "compute": {"gpus": 8},
              "measured": {"calibration_dir": "z" * 5000}}
    with pytest.raises(InputError) as exc:
        compile_workload(intake)
    assert exc.value.field == "measured.calibration_dir" and len(str(exc.value)) < 500
