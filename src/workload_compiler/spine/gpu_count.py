"""How many GPUs a training workload gets, by precedence: given > implied by a pinned layout >
needed for the deadline > what a pinned hall holds > the fewest that hold the model at all.

Each count is traced (given or derived with the rule that chose it); a count that cannot be met
is an `Infeasible` naming the binding constraint (memory against HBM, the GPU cap, the hall).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..arch.model import ModelArch
from ..catalog.loader import Catalog
from ..errors import Infeasible, InputError
from ..intake.common import ParallelismIntake
from ..intake.training import TrainingWorkload
from ..perf.layout import Hardware, TrainingSetup
from ..perf.objective import SIZED_FOR_DEADLINE, finer_rungs, gpu_ladder
from ..planner.capacity import HoldBound, fewest_gpus_to_hold
from ..planner.deadline import DEFAULT_MAX_GPUS, DeadlinePlan, plan_for_deadline
from ..planner.no_fit import ladder_searches, out_of_memory
from ..planner.published import best_published_mfu
from ..planner.result import PlanResult, RankedLayout
from ..planner.search import search
from ..provenance import Trace
from ..sizing.hall import hall_fit
from .training_defaults import TrainingRunResolved

MAX_SEARCH_GPUS = DEFAULT_MAX_GPUS
TOP_K = 5   # layouts kept per search: the best and four runners-up for the report


def check_pins(pins: ParallelismIntake, arch: ModelArch, gpus: int | None) -> int | None:
    """Validate a pinned layout against the model and the GPU count; return the GPU count it implies."""
    if pins.tp is not None and arch.attention_heads % pins.tp:
        raise InputError("compute.parallelism.tp", pins.tp,
                         f"a divisor of the {arch.attention_heads} attention heads")
    if pins.ep is not None and pins.ep > 1 and (not arch.is_moe or arch.moe_experts % pins.ep):
        allowed = f"a divisor of the {arch.moe_experts} experts" if arch.is_moe else "1 for a dense model"
        raise InputError("compute.parallelism.ep", pins.ep, allowed)
    if pins.vp is not None and pins.vp > 1 and (pins.pp or 1) == 1:
        raise InputError("compute.parallelism.vp", pins.vp, "1 unless pp > 1 (virtual stages interleave a pipeline)")
    degrees = (pins.tp, pins.pp, pins.dp, pins.cp or 1)
    if any(d is None for d in degrees[:3]):
        return None
    product = math.prod(d for d in degrees if d is not None)
    if gpus is not None and product != gpus:
        raise InputError("compute.parallelism", f"tp {pins.tp} x pp {pins.pp} x dp {pins.dp} x cp {pins.cp or 1}"
                         f" = {product}", f"a layout whose product is compute.gpus = {gpus}")
    return product


def hall_capacity(w: TrainingWorkload, hw: Hardware, catalog: Catalog, trace: Trace) -> int | None:
    """GPUs of the chosen system that fit in a pinned hall (facility.power), or None without a hall."""
    fit = hall_fit(w, hw.system_id, catalog)
    if fit is None:
        return None
    if not fit.feasible or fit.gpus == 0:
        raise Infeasible(fit.binding, f"no {hw.system_id} fits in the hall: {fit.detail}")
    return int(trace.derived("facility.hall_gpus", fit.gpus, f"hall fit ({fit.binding} binds): {fit.detail}"))


@dataclass(frozen=True, kw_only=True)
class GpuChoice:
    """The GPU count, the count the deadline would need when a cap binds, and the planner search at
    `gpus` when choosing it already ran one (so the spine does not search the same count twice)."""

    gpus: int
    needed: int | None = None
    plan: PlanResult | None = None
    for_deadline: bool = False        # chosen as the fewest that meet the deadline
    deadline: DeadlinePlan | None = None   # the walk over GPU counts within the cap, when a deadline was searched


def choose_gpus(w: TrainingWorkload, arch: ModelArch, run: TrainingRunResolved, setup: TrainingSetup,
                hw: Hardware, catalog: Catalog, trace: Trace,
                goodput: Callable[[int, RankedLayout], float] | None = None, count_needed: bool = True) -> GpuChoice:
    """The GPU count, by precedence: given > implied by pins > needed for the deadline > what a cap
    or hall holds > the fewest whole nodes that hold the model (the searches it runs, by GPU count,
    are shared by the capped and the uncapped deadline walks). `goodput(n, best layout)`: the deadline is
    met after failures (planner/deadline.py). `count_needed`: when the cap keeps the deadline out of
    reach, walk on without it for the count the deadline needs (`GpuChoice.needed`)."""
    pins = w.compute.parallelism
    implied = check_pins(pins, arch, w.compute.gpus)
    if w.compute.gpus is not None:
        return GpuChoice(gpus=trace.given("compute.gpus", w.compute.gpus))
    if implied is not None:
        return GpuChoice(gpus=trace.derived("compute.gpus", implied, "tp x pp x cp x dp of the pinned layout"))
    published = best_published_mfu(hw.accelerator_id, run.precision)
    # an MoE model's walk starts where MoE runs have been, not where dense ones have
    typical = best_published_mfu(hw.accelerator_id, run.precision, moe=True) if arch.is_moe else None
    cache: dict[int, PlanResult] = {}
    plan = ladder_searches(cache, lambda n, no_fit: search(arch, setup, hw, n, pins, top_k=TOP_K,
                                                           published_mfu=published, expect_no_fit=no_fit))

    caps = [c for c in (w.compute.max_gpus, hall_capacity(w, hw, catalog, trace)) if c is not None]
    cap = min(caps) if caps else MAX_SEARCH_GPUS

    def largest_under_cap() -> int:
        """The largest plannable count under the cap, or Infeasible naming what binds."""
        hold = fewest_gpus_to_hold(arch, setup, hw)
        largest = _largest_plannable(cap, hw, plan, hold.gpus)
        if largest is None:
            raise Infeasible("gpu cap", _cap_shortfall(hold, hw, cap, cache))
        return largest
    deadline = w.target.time_to_train
    if deadline is not None:
        def for_deadline(limit: int) -> DeadlinePlan:
            return plan_for_deadline(arch, setup, hw, tokens=run.tokens, deadline_s=deadline, pins=pins,
                                     max_gpus=limit, top_k=TOP_K, published_mfu=published, searched=cache,
                                     goodput=goodput, typical_mfu=typical)

        walk = for_deadline(cap)
        if walk.gpus is not None:
            return GpuChoice(gpus=trace.derived("compute.gpus", walk.gpus, SIZED_FOR_DEADLINE),
                             plan=cache[walk.gpus], for_deadline=True, deadline=walk)
        uncapped = for_deadline(MAX_SEARCH_GPUS).gpus if count_needed and cap < MAX_SEARCH_GPUS else None
        largest = largest_under_cap()
        why = "deadline unreachable within the GPU cap: the largest count that has a layout"
        return GpuChoice(gpus=trace.derived("compute.gpus", largest, why), needed=uncapped, plan=cache[largest],
                         deadline=walk)
    if caps:
        largest = largest_under_cap()
        return GpuChoice(gpus=trace.derived("compute.gpus", largest,
                                            "the most GPUs the cap or hall allows that have a layout"),
                         plan=cache[largest])
    n = hw.gpus_per_node
    while n <= cap:
        if plan(n).best is not None:
            return GpuChoice(gpus=trace.derived("compute.gpus", n, "fewest whole nodes with a layout that fits"),
                             plan=cache[n])
        n *= 2
    detail = plan(n // 2).infeasible
    raise Infeasible("memory", f"no layout fits on up to {cap:,} {hw.accelerator_id} GPUs"
                     + (f": {detail[1]}" if detail else ""))


def _cap_shortfall(bound: HoldBound, hw: Hardware, cap: int, searched: dict[int, PlanResult]) -> str:
    """Why nothing fits under the cap: the model state against the HBM of the capped GPUs when that
    binds, else the activations and runtime on top of it, with the leanest layout of the largest
    count searched (its bytes by term). `bound`: the fewest GPUs that hold the model state."""
    if bound.gpus is None or bound.gpus > cap:
        return bound.shortfall(cap)
    closest = max((n for n, r in searched.items() if n <= cap and out_of_memory(r)), default=None)
    why = searched[closest].infeasible if closest is not None else None   # (reason, its leanest layout)
    return (f"no layout of the model fits on {cap:,} or fewer {hw.accelerator_id} GPUs: the state fits "
            f"({bound.gpus:,} GPUs hold it) but not with activations and runtime memory"
            + (f"; at the most GPUs searched, {why[1]}" if why else ""))


def _largest_plannable(cap: int, hw: Hardware, plan: Callable[[int], PlanResult], hold: int | None) -> int | None:
    """The largest count on the GPU ladder at or below the cap whose planner search finds a layout,
    or the finer rung above it (5 x 2^a or 7 x 2^a nodes, still under the cap) when its best layout
    is faster: a 7,920-GPU hall trains on 7,168 GB200, not the ladder's 6,144.
    `hold`: the fewest GPUs that can hold the model state (planner/capacity.py; None: none can);
    no layout fits below it, so the rungs there are not searched."""
    if hold is None:
        return None
    node = hw.gpus_per_node
    ladder = gpu_ladder(node, max(node, hold), cap)
    found, at_found = next(((n, best) for n in reversed(ladder) if (best := plan(n).best) is not None),
                           (None, None))
    if found is None or at_found is None:
        return None
    above = min(gpu_ladder(node, found + 1, 2 * found + 2 * node), default=cap + 1)   # the next ladder rung
    for n in reversed(finer_rungs(node, found, min(above, cap + 1))):
        best = plan(n).best
        if best is not None and best.tokens_per_s > at_found.tokens_per_s:
            return n
    return found
