"""The count a capped deadline needs (`objective.gpus_for_target`): found after failures, the count
an uncapped compile of the same intake picks, and searched only for the baseline, not for each
alternative or sensitivity point (`compile_core`)."""

from __future__ import annotations

from typing import Any

from workload_compiler import compile_workload
from workload_compiler.compile import compile_core
from workload_compiler.planner.search_cache import disabled
from workload_compiler.spine.result import ComputeLayer, ObjectiveLayer

# 64 H100 train Llama 3 8B on 1T tokens in 19.29 d without failures and 19.42 d with them
# (tests/unit/test_planner_cli.py): a 19.35-day deadline is out of reach under a 64-GPU cap.
LLAMA8B: dict[str, Any] = {"kind": "training", "model": {"preset": "llama3-8b"},
                           "training": {"tokens": "1T", "seq_len": 8192, "precision": "bf16"},
                           "compute": {"accelerator": "h100-sxm"}, "target": {"time_to_train": "19.35d"}}
CAPPED = LLAMA8B | {"compute": {"accelerator": "h100-sxm", "max_gpus": 64}}


def _objective(spec: Any) -> ObjectiveLayer:
    assert isinstance(spec.objective, ObjectiveLayer)
    return spec.objective


def _compute(spec: Any) -> ComputeLayer:
    assert isinstance(spec.compute, ComputeLayer)
    return spec.compute


def test_the_count_a_capped_deadline_needs_is_the_uncapped_compiles_and_meets_it_after_failures() -> None:
    with disabled():
        capped, free = compile_workload(CAPPED), compile_workload(LLAMA8B)
    needed = _objective(capped).gpus_for_target
    assert _compute(capped).gpus == 64
    assert needed is not None and needed > 64      # 64 meets 19.35 d only without failures
    assert _compute(free).gpus == needed
    adjusted = _objective(free).goodput_adjusted_time_to_train_s
    assert adjusted is not None and adjusted <= 19.35 * 86400


def test_an_alternative_or_sensitivity_point_does_not_search_the_needed_count() -> None:
    with disabled():
        baseline, core = compile_workload(CAPPED), compile_core(CAPPED)
    assert _objective(core).gpus_for_target is None
    assert _compute(core).gpus == _compute(baseline).gpus
    assert _compute(core).step_time_s == _compute(baseline).step_time_s
