"""A layout the memory model puts just above the HBM is a tight fit, not "does not fit".

The memory model over-predicts measured peaks by up to its held-out error (catalog/data/
uncertainty.yaml `training_memory`: e = predicted / measured - 1, 90th percentile e_high). A run
predicted at P > HBM may then peak at P / (1 + e_high) <= HBM: it may well run, and published runs
near the limit do. So when nothing fits at a GPU count and memory is what binds, the same search
runs again with HBM x (1 + e_high); a layout found there is returned with a warning that names the
overshoot and the error it lies within. Beyond the band it stays "does not fit". The planner's
choice between counts (the deadline search, the fewest nodes) stays strict: only the answer at a
count is relaxed, for compile and plan alike.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

from ..arch.model import ModelArch
from ..catalog.loader import package_yaml
from ..intake.common import ParallelismIntake
from ..perf.layout import Hardware, TrainingSetup
from ..units import format_bytes_decimal
from .result import PlanResult
from .search import MEMORY_REASON, search


@cache
def memory_fit_margin() -> tuple[float, str]:
    """(e_high, basis): the largest 90th-percentile over-prediction of measured peaks in the table."""
    section: dict[str, Any] = package_yaml("uncertainty.yaml").get("training_memory") or {}
    kinds: dict[str, Any] = section.get("kinds") or {}
    if not kinds:
        return 0.0, "no measured peak in the uncertainty table"
    kind, entry = max(kinds.items(), key=lambda kv: float(kv[1]["high"]))
    high = max(0.0, float(entry["high"]))
    return high, (f"the memory model's held-out error on {entry['n']} measured {kind} peaks: it over-predicts "
                  f"by up to {high:.1%} (90th percentile)")


def search_at_count(arch: ModelArch, setup: TrainingSetup, hw: Hardware, gpus: int,
                    pins: ParallelismIntake | None = None, **kwargs: Any) -> PlanResult:
    """`search`, and when memory alone leaves no layout, the tight fits within the model's error."""
    plan = search(arch, setup, hw, gpus, pins, **kwargs)
    if plan.best is not None or plan.infeasible is None or plan.infeasible[0] != MEMORY_REASON:
        return plan
    margin, basis = memory_fit_margin()
    if margin <= 0.0:
        return plan
    tight = search(arch, setup, hw, gpus, pins, memory_margin=margin, **kwargs)
    best = tight.best
    if best is None:
        return plan
    over = best.memory_per_gpu_bytes / hw.hbm_bytes - 1.0
    warning = (f"memory tight: the best layout needs {format_bytes_decimal(best.memory_per_gpu_bytes)} per GPU, "
               f"{over:.1%} above the {format_bytes_decimal(hw.hbm_bytes)} of {hw.accelerator_id}, within "
               f"{basis}: it may run; measure its peak (wkc profile) before committing, or take more GPUs "
               f"or recompute")
    return dataclasses.replace(tight, warnings=[warning, *tight.warnings])


__all__ = ["memory_fit_margin", "search_at_count"]
