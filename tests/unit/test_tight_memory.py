"""A layout the memory model puts just above the HBM, within the model's held-out error on measured
peaks (catalog/data/uncertainty.yaml training_memory) or with tensors that fit without the fitted
runtime reserve (perf/fitted_memory.py), compiles as a tight fit with a warning; one beyond both
stays "does not fit" (planner/tight_memory.py)."""

from __future__ import annotations

import dataclasses

import pytest

from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.intake.common import ParallelismIntake
from workload_compiler.perf.fitted_memory import modeled_bytes
from workload_compiler.perf.layout import Hardware, TrainingSetup
from workload_compiler.planner.search import MEMORY_REASON, search
from workload_compiler.planner.tight_memory import memory_fit_margin, search_at_count

ARCH = preset_arch("llama3-70b")
SETUP = TrainingSetup(seq_len=8192, global_batch_size=64, precision="bf16")
PINS = ParallelismIntake(tp=8, pp=2, dp=1, cp=1, vp=1, micro_batch_size=1, recompute="none", zero_stage=0)


def _hw_with_hbm(fraction_of_need: float) -> tuple[Hardware, float]:
    """An H100 whose HBM is `fraction_of_need` of what the pinned layout needs."""
    hw = load_catalog().hardware("h100-sxm")
    need = search(ARCH, SETUP, dataclasses.replace(hw, hbm_bytes=1e15), 16, PINS, top_k=1).best
    assert need is not None
    return dataclasses.replace(hw, hbm_bytes=need.memory_per_gpu_bytes * fraction_of_need), need.memory_per_gpu_bytes


def test_the_margin_is_the_measured_over_prediction() -> None:
    margin, basis = memory_fit_margin()
    assert 0.0 < margin < 0.15 and "measured" in basis


def test_within_the_error_is_a_tight_fit_with_a_warning() -> None:
    margin, _ = memory_fit_margin()
    hw, need = _hw_with_hbm(1.0 / (1.0 + margin / 2))        # needs margin/2 more than the HBM
    strict = search(ARCH, SETUP, hw, 16, PINS)
    assert strict.best is None and strict.infeasible is not None and strict.infeasible[0] == MEMORY_REASON
    plan = search_at_count(ARCH, SETUP, hw, 16, PINS)
    assert plan.best is not None and plan.best.memory_per_gpu_bytes == pytest.approx(need)
    assert plan.warnings and plan.warnings[0].startswith("memory tight")


def test_tensors_that_fit_without_the_runtime_reserve_are_a_tight_fit_that_names_the_reserve() -> None:
    margin, _ = memory_fit_margin()
    hw, need = _hw_with_hbm(1.0)
    hbm = modeled_bytes(need, SETUP.framework.allocator) * 1.001   # the tensors fit, the reserve on top does not
    assert need / hbm - 1.0 > margin              # beyond the measured error: only the reserve band applies
    plan = search_at_count(ARCH, SETUP, dataclasses.replace(hw, hbm_bytes=hbm), 16, PINS)
    assert plan.best is not None and plan.best.memory_per_gpu_bytes == pytest.approx(need)
    assert plan.warnings[0].startswith("memory tight") and "runtime reserve" in plan.warnings[0]


def test_beyond_the_error_and_the_reserve_does_not_fit() -> None:
    margin, _ = memory_fit_margin()
    hw, need = _hw_with_hbm(1.0)
    hbm = min(need / (1.0 + 2 * margin), modeled_bytes(need, SETUP.framework.allocator) * 0.99)
    plan = search_at_count(ARCH, SETUP, dataclasses.replace(hw, hbm_bytes=hbm), 16, PINS)
    assert plan.best is None and plan.infeasible is not None and plan.infeasible[0] == MEMORY_REASON
