"""The generic archetype's data path (starter article): stage rates, the binding stage named with
its numbers, what would unbind it, open stages never guessed, the GPU count for a target."""

from __future__ import annotations

import math

import pytest
from engagement_builders import IMAGE, compiled, intake

from workload_compiler import compile_workload
from workload_compiler.errors import InputError
from workload_compiler.generic.pipeline import PipelineInputs, stages, unbind, verdict


def inputs(**over: object) -> PipelineInputs:
    base: dict[str, object] = dict(
        gpus=1, gpus_per_node=8, sample_bytes=110e3, device_bytes_per_sample=150528.0, output_bytes_per_sample=None,
        cores_per_gpu=8.0, decode_rate_per_core=262.5, pcie_bytes_per_s=64e9, h2d_efficiency=0.8,
        gpu_samples_per_s=5800.0, batch_size_per_gpu=256, allreduce_s=0.0, backward_share=2 / 3, training=True,
        storage_read_bytes_per_s=40e9, storage_node_read_bytes_per_s=40e9, storage_write_bytes_per_s=20e9)
    base.update(over)
    return PipelineInputs(**base)  # type: ignore[arg-type]


def test_the_articles_sentence_input_bound_with_both_rates() -> None:
    s = stages(inputs())
    binding, sentence, input_bound = verdict(s)
    assert binding == "cpu_decode" and input_bound is True
    assert sentence == "the CPU decode and preparation feeds 2,100 samples/s, the GPUs consume 5,800: input-bound"
    fixes = unbind(binding, s, inputs())
    # 5,800 / 262.5 = 22.1 cores per GPU keep up; the article's remedies follow
    assert fixes[0].startswith("22.1 decode cores per GPU instead of 8")
    assert any("DALI" in f for f in fixes)


def test_compute_bound_when_the_loader_keeps_up() -> None:
    s = stages(inputs(decode_rate_per_core=1000.0))
    binding, sentence, input_bound = verdict(s)
    assert binding == "gpu_compute" and input_bound is False and "compute-bound" in sentence


def test_storage_and_host_link_stages_follow_their_formulas() -> None:
    s = {x.name: x for x in stages(inputs(gpus=16, storage_read_bytes_per_s=0.5e9, storage_node_read_bytes_per_s=1e9))}
    assert s["storage_read"].samples_per_s == pytest.approx(min(0.5e9, 2 * 1e9) / 110e3)
    assert s["host_to_device"].samples_per_s == pytest.approx(16 * 64e9 * 0.8 / 150528)
    assert verdict(list(s.values()))[0] == "storage_read"


def test_an_open_stage_is_not_guessed_and_the_threshold_is_named() -> None:
    s = stages(inputs(decode_rate_per_core=None))
    binding, sentence, input_bound = verdict(s)
    assert binding is None and input_bound is None
    assert "open until CPU decode and preparation is measured" in sentence
    assert next(x for x in s if x.name == "cpu_decode").samples_per_s is None


def test_exposed_allreduce_only_beyond_the_backward_pass() -> None:
    hidden = {x.name: x for x in stages(inputs(gpus=8, allreduce_s=0.01))}["gpu_compute"]
    assert hidden.samples_per_s == pytest.approx(8 * 5800.0)   # 0.01 s < 2/3 x 44 ms of compute
    exposed = {x.name: x for x in stages(inputs(gpus=8, allreduce_s=0.1))}["gpu_compute"]
    step = 256 / 5800.0
    assert exposed.samples_per_s == pytest.approx(8 * 256 / (step + 0.1 - 2 / 3 * step))


def test_image_classifier_example_compiles_with_an_open_loader() -> None:
    spec = compiled(IMAGE)
    p = spec.pipeline
    assert spec.kind == "generic" and p is not None
    assert p.binding_stage is None and p.time_to_result_is_lower_bound
    gpu = next(s for s in p.stages if s.name == "gpu_compute")
    # 0.10 x 989.4 TFLOP/s / (3 x 8.18 GFLOP) per GPU, 8 GPUs (the all-reduce hides behind backward)
    assert gpu.samples_per_s == pytest.approx(8 * 0.10 * 989.4e12 / (3 * 8.18e9), rel=1e-3)
    assert spec.storage is not None and spec.reliability is not None and spec.facility is not None
    assert spec.software is not None and spec.software["framework"].startswith("PyTorch")


def test_a_target_sizes_the_fewest_gpus_that_meet_it() -> None:
    data = intake(IMAGE)
    data["compute"].pop("gpus")
    data["sheet"]["fields"].pop("pipeline.decode_rate_per_core")
    data["pipeline"]["decode_rate_per_core"] = "1000/s"
    data["target"]["time_to_result"] = "2h"
    spec = compile_workload(data)
    p = spec.pipeline
    assert p is not None and p.time_to_result_s is not None
    gpus = spec.compute["gpus"]  # type: ignore[index]
    assert p.time_to_result_s <= 2 * 3600
    one_less = intake(IMAGE)
    one_less["sheet"]["fields"].pop("pipeline.decode_rate_per_core")
    one_less["pipeline"]["decode_rate_per_core"] = "1000/s"
    one_less["compute"]["gpus"] = gpus - 1
    slower = compile_workload(one_less).pipeline
    assert slower is not None and slower.time_to_result_s is not None and slower.time_to_result_s > 2 * 3600


def test_a_cap_that_cannot_meet_the_target_is_infeasible_with_the_binding_named() -> None:
    data = intake(IMAGE)
    data["compute"].pop("gpus")
    data["compute"]["max_gpus"] = 2
    data["target"]["time_to_result"] = "1h"
    spec = compile_workload(data)
    assert not spec.feasible and spec.binding_constraint and spec.binding_constraint.startswith("deadline")


def test_training_mode_needs_params_and_flops_are_given_once() -> None:
    data = intake(IMAGE)
    data["model"].pop("params")
    data["sheet"]["fields"].pop("model.params")
    with pytest.raises(InputError, match=r"model\.params"):
        compile_workload(data)
    data = intake(IMAGE)
    data["model"]["flops_per_sample"] = "24G"
    with pytest.raises(ValueError, match="not both"):
        compile_workload(data)


def test_total_samples_and_flops() -> None:
    spec = compiled(IMAGE)
    obj = spec.objective
    assert obj is not None   # a typed section (GenericObjective) that reads like the mapping it was
    assert obj["total_samples"] == 1281167 * 90
    assert math.isclose(obj["total_flops"], 1281167 * 90 * 3 * 8.18e9, rel_tol=1e-9)


def test_per_sample_keys_are_not_read_as_rates_in_the_reports() -> None:
    # the reports format by the unit each field declares, never by the key's spelling
    from workload_compiler.quantity import unit_of
    from workload_compiler.report.format import format_quantity
    from workload_compiler.spine.sections_generic import GenericCompute, GenericObjective
    flops = format_quantity(2.454e10, unit_of(GenericObjective, "flops_per_sample"))
    assert flops == "2.45e+10 FLOP"      # was "24.54 B/s"
    assert format_quantity(4032.0, unit_of(GenericCompute, "gpu_samples_per_s_per_gpu")) == "4,032/s"


def test_a_lower_bound_under_the_target_leaves_the_target_open_and_over_it_misses() -> None:
    from workload_compiler.spine.verdict import verdict
    spec = compiled(IMAGE)   # the loader's CPU rate is still to be measured: 59.6 min is a lower bound
    assert spec.objective is not None and spec.objective["meets_target"] is None
    v = verdict(spec)
    assert v.code == "target open" and "lower bound" in v.text and "CPU decode" in v.text
    tight = intake(IMAGE)
    tight["target"]["time_to_result"] = "30min"     # even the lower bound is over it: a miss, for sure
    missed = compile_workload(tight)
    assert missed.feasible and verdict(missed).code == "misses target"
    known = intake(IMAGE)
    known["sheet"]["fields"].pop("pipeline.decode_rate_per_core")
    known["pipeline"]["decode_rate_per_core"] = "1000/s"       # measured: the time is the time
    met = compile_workload(known)
    assert met.objective is not None and met.objective["meets_target"] is True
    assert verdict(met).code == "meets target"
