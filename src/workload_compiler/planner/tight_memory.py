"""A layout the memory model puts just above the HBM is a tight fit, not "does not fit".

The memory model over-predicts measured peaks by up to its held-out error (catalog/data/
uncertainty.yaml `training_memory`: e = predicted / measured - 1, 90th percentile e_high). A run
predicted at P > HBM may then peak at P / (1 + e_high) <= HBM: it may well run, and published runs
near the limit do. So when nothing fits at a GPU count and memory is what binds, the same search
runs again with HBM x (1 + e_high); a layout found there is returned with a warning that names the
overshoot and the error it lies within. Beyond the band it stays "does not fit". The planner's
choice between counts (the deadline search, the fewest nodes) stays strict: only the answer at a
count is relaxed, for compile and plan alike.

A second band covers the runtime reserve (perf/fitted_memory.py: allocator fragmentation and
communication buffers, fitted on PyTorch caching-allocator peaks at the *largest* value the runs
that ran allow, its split weakly determined). A layout whose modeled tensors fit in the HBM but not
with that reserve on top runs where the stack keeps its reserve small (the Llama 3 team profiled
and deallocated tensors to pre-train 405B without recompute, arXiv:2407.21783 §3.3.2); the warning
says so and names the reserve.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

from ..arch.model import ModelArch
from ..catalog.loader import package_yaml
from ..intake.common import ParallelismIntake
from ..perf.fitted_memory import modeled_bytes, runtime_constants
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
    fixed, fraction = runtime_constants(setup.framework.allocator)
    # total = fixed + (1 + fraction) * tensors, so tensors <= HBM is total <= HBM * (1 + this)
    reserve = (fixed + fraction * hw.hbm_bytes) / hw.hbm_bytes
    if max(margin, reserve) <= 0.0:
        return plan
    tight = search(arch, setup, hw, gpus, pins, memory_margin=max(margin, reserve), **kwargs)
    best = tight.best
    if best is None:
        return plan
    need = best.memory_per_gpu_bytes
    over = need / hw.hbm_bytes - 1.0
    head = (f"memory tight: the best layout needs {format_bytes_decimal(need)} per GPU, {over:.1%} above the "
            f"{format_bytes_decimal(hw.hbm_bytes)} of {hw.accelerator_id}")
    if over <= margin:
        why = f"within {basis}: it may run"
    else:
        tensors = modeled_bytes(need, setup.framework.allocator)
        why = (f"its tensors ({format_bytes_decimal(tensors)}) fit, the typical runtime reserve "
               f"({format_bytes_decimal(need - tensors)}, fitted on PyTorch caching-allocator peaks) does not: it "
               f"runs only with a lean allocator (expandable segments, tensors freed early)")
    warning = (f"{head}; {why}; measure its peak (wkc profile) before committing, or take more GPUs or recompute")
    return dataclasses.replace(tight, warnings=[warning, *tight.warnings])


__all__ = ["memory_fit_margin", "search_at_count"]
