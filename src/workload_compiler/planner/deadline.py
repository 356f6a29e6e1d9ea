"""Given a deadline and no GPU count: the fewest GPUs whose best layout trains the tokens in time.

The search starts at the larger of two physics bounds, neither of which any layout can beat:
the GPUs that hold one replica's model state (capacity.py) and the GPUs that would finish the
training FLOPs at 100% of the dense peak, ceil(F / (T x peak)). From there it walks the ladder
of counts in perf.objective.gpus_for_deadline (whole nodes, 2^a and 3 x 2^a of them, then the
5 x 2^a or 7 x 2^a count in the gap below the answer), running the full planner search at each probe.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ..arch.lora import lora_adapter_params
from ..arch.model import ModelArch
from ..intake.common import ParallelismIntake
from ..intake.limits import MAX_GPUS
from ..perf.gemm_precision import gemm_precision
from ..perf.layout import Hardware, TrainingSetup
from ..perf.memory import training_memory_bytes
from ..perf.objective import gpus_for_deadline, min_gpus_for_flops, time_to_train_s, total_training_flops
from ..perf.step_time import training_step
from .capacity import HoldBound, fewest_gpus_to_hold
from .no_fit import ladder_searches
from .result import PlanResult, PublishedMfu, RankedLayout
from .search import MemoryFn, Progress, StepFn, search

# The intake's GPU bound (intake/limits.py: far beyond any cluster built so far); the cap keeps a
# deadline that nothing can meet from searching forever. compute.max_gpus lowers it.
DEFAULT_MAX_GPUS = MAX_GPUS


@dataclass(frozen=True, kw_only=True)
class DeadlinePlan:
    """The smallest count meeting the deadline (None if none up to max_gpus) and how it was found."""

    gpus: int | None
    plan: PlanResult | None               # the full search at `gpus` (None when not met)
    best_time_s: float                    # the time the walk compared at `gpus` (after failures when it
                                          # had a goodput), or the best seen when not met
    probes: dict[int, float]              # GPU count -> steady-state time to train of its best layout
                                          # (inf: none fits)
    flops_bound_gpus: int
    hold: HoldBound
    total_flops: float
    deadline_s: float
    max_gpus: int
    searches: dict[int, PlanResult] = field(default_factory=dict)
    goodputs: dict[int, float] = field(default_factory=dict)   # GPU count -> goodput its time was divided by

    @property
    def steady_state_deadline_s(self) -> float:
        """The steady-state time the answer had to reach: the deadline times its goodput."""
        return self.deadline_s * self.goodputs.get(self.gpus or 0, 1.0)

    @property
    def start_gpus(self) -> int:
        """Where the ladder walk starts: the larger of the two physics bounds."""
        return _start_gpus(self.flops_bound_gpus, self.hold)


def _start_gpus(flops_bound_gpus: int, hold: HoldBound) -> int:
    return max(flops_bound_gpus, hold.gpus or 1)


def plan_for_deadline(arch: ModelArch, setup: TrainingSetup, hw: Hardware, *, tokens: float,
                      deadline_s: float, pins: ParallelismIntake | None = None,
                      max_gpus: int | None = None, top_k: int = 5,
                      memory_fn: MemoryFn = training_memory_bytes, step_fn: StepFn = training_step,
                      published_mfu: PublishedMfu | None = None,
                      progress: Progress | None = None,
                      searched: dict[int, PlanResult] | None = None,
                      goodput: Callable[[int, RankedLayout], float] | None = None,
                      typical_mfu: PublishedMfu | None = None) -> DeadlinePlan:
    """Search GPU counts for the smallest that trains `tokens` within `deadline_s` (see module doc).
    `searched`: planner searches of this workload already run, by GPU count (reused, and extended).
    `goodput(n, best layout)`: the share of wall time a count's best layout trains after failures; each
    count's time is divided by it, so the walk finds the fewest GPUs that meet the deadline after
    failures in one pass (without it: the steady-state time). `typical_mfu`: the best published MFU
    of runs of the model's kind (mixture-of-experts), for the walk's first probe in place of
    `published_mfu` (which the searches compare their optimum with)."""
    flops = total_training_flops(arch, tokens, setup.seq_len, lora_adapter_params(arch, setup.lora))
    peak, _ = gemm_precision(setup, hw)
    flops_bound = min_gpus_for_flops(flops, deadline_s, peak)
    hold = fewest_gpus_to_hold(arch, setup, hw, memory_fn)
    cap = max_gpus or DEFAULT_MAX_GPUS
    searches: dict[int, PlanResult] = {}
    goodputs: dict[int, float] = {}

    def effective_tokens_per_s(n: int, r: PlanResult) -> float:
        """The best layout's tokens/s, times the goodput when one is given."""
        if r.best is None:
            return 0.0
        if goodput is not None and n not in goodputs:
            goodputs[n] = goodput(n, r.best)
        return r.best.tokens_per_s * goodputs.get(n, 1.0)

    ran: dict[int, PlanResult] = searched if searched is not None else {}
    known = {n: time_to_train_s(tokens, effective_tokens_per_s(n, r)) for n, r in ran.items() if r.best}
    search_at = ladder_searches(ran, lambda n, no_fit: search(
        arch, setup, hw, n, pins, top_k=top_k, memory_fn=memory_fn, step_fn=step_fn, published_mfu=published_mfu,
        progress=progress, expect_no_fit=no_fit))

    def best_tokens_per_s(n: int) -> float:
        r = searches[n] = search_at(n)
        return effective_tokens_per_s(n, r)

    # the first probe: the FLOP bound at the best published MFU for this GPU and precision (of the
    # model's kind where one is known), a guess that saves the probes below it when it is close; the
    # walk stays exact either way
    basis = typical_mfu or published_mfu
    estimate = flops_bound / basis.mfu if basis is not None and basis.mfu > 0 else 0.0
    found = gpus_for_deadline(tokens, deadline_s, best_tokens_per_s, node_gpus=hw.gpus_per_node,
                              start_gpus=_start_gpus(flops_bound, hold), max_gpus=cap, known=known,
                              estimate_gpus=estimate)
    # every count probed was searched, here or by an earlier pass (`ran` holds both)
    steady = {n: time_to_train_s(tokens, best.tokens_per_s) if (best := ran[n].best) else math.inf
              for n in found.probes}
    return DeadlinePlan(gpus=found.gpus, plan=ran.get(found.gpus) if found.gpus else None,
                        best_time_s=found.time_to_train_s, probes=steady,
                        flops_bound_gpus=flops_bound, hold=hold, total_flops=flops,
                        deadline_s=deadline_s, max_gpus=cap, searches=searches, goodputs=goodputs)
