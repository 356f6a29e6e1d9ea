"""The objective's arithmetic: training FLOPs, time to train, GPUs for a deadline, GPUs to hold a model.

Pure functions over plain numbers (and, for the deadline, a callback that answers "the best
tokens/s on n GPUs"); no I/O. The planner supplies the callback and the memory figures.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ..arch.counts import training_flops_per_token
from ..arch.model import ModelArch
from ..errors import InputError


def total_training_flops(arch: ModelArch, tokens: float, seq_len: int, adapter_params: float | None = None) -> float:
    """Model FLOPs of a whole training run: training_flops_per_token x tokens.

    Per token: 3 x forward (backward = 2 x forward) with forward = 2 x active matmul weights (the
    output head included, the embedding lookup and norms excluded) + causal attention (QK^T and AV
    at ctx/2 on average). That is "6N + attention", the PaLM MFU numerator (Chowdhery et al. 2022,
    App. B); the recompute pass is not counted (it is hardware work, not model work). LoRA
    (`adapter_params`): 2 x forward + the adapters' own (arch/counts.training_flops_per_token).
    """
    if not (math.isfinite(tokens) and tokens > 0):
        raise InputError("training.tokens", tokens, "a positive, finite token count")
    return training_flops_per_token(arch, seq_len, causal=True, adapter_params=adapter_params) * tokens


def time_to_train_s(tokens: float, tokens_per_s: float) -> float:
    """tokens / tokens_per_s: steady-state time, without failures, restarts or evaluation.

    A throughput of 0 gives inf (never reached), not an error: "no layout" reads as never.
    """
    if not (math.isfinite(tokens) and tokens > 0):
        raise InputError("training.tokens", tokens, "a positive, finite token count")
    if not tokens_per_s > 0:
        return math.inf
    return tokens / tokens_per_s


def min_gpus_for_flops(total_flops: float, deadline_s: float, peak_flops_per_gpu: float) -> int:
    """Physics bound: ceil(F / (T x peak)). No GPU exceeds 100% MFU, so fewer can never make it."""
    if not (deadline_s > 0 and peak_flops_per_gpu > 0):
        raise InputError("target.time_to_train", deadline_s, "a positive duration")
    return max(1, math.ceil(total_flops / (deadline_s * peak_flops_per_gpu)))


def min_gpus_to_hold(state_bytes: float, hbm_bytes: float, runtime_bytes: float = 0.0) -> int | None:
    """Fewest GPUs whose memory holds the model state with maximal sharding.

    With weights, gradients and optimizer state all sharded over every GPU (ZeRO-3/FSDP over n GPUs,
    or TP x PP x EP that multiply to n) each GPU holds state / n plus a fixed runtime term, so
    n >= state / (HBM - runtime). Activations are left out: recompute, micro-batch 1 and context
    parallelism make them small, so this is the bound below which no layout exists at all.
    None when the runtime term alone fills the HBM.
    """
    usable = hbm_bytes - runtime_bytes
    if usable <= 0:
        return None
    return max(1, math.ceil(state_bytes / usable))


def gpu_ladder(node_gpus: int, start_gpus: int, max_gpus: int) -> list[int]:
    """Candidate GPU counts: node_gpus x k for k = 2^a or 3 x 2^a (1, 2, 3, 4, 6, 8, 12, 16, 24, ...).

    Counts with other factors (5, 7, 9 nodes) rarely factor into TP x PP x CP x DP for real
    models and batches (56 GPUs for a 96-layer model with 96 heads and batch 1536 has no layout at
    all; 9 nodes need two factors of 3 from heads, layers or batch), and every such hole costs a
    full search that says nothing. Rungs past two nodes are at most 1.5x apart. Rungs below
    start_gpus (a lower bound) are left out: they cannot meet the deadline.
    """
    return _rungs(node_gpus, (1, 3), start_gpus, max_gpus)


def finer_rungs(node_gpus: int, above: int, below: int) -> list[int]:
    """Counts of 5 x 2^a and 7 x 2^a whole nodes strictly between `above` and `below`: the one
    count that halves a gap of the ladder past four nodes (4 -> 5 -> 6, 6 -> 7 -> 8 x 2^a nodes), so
    an answer found on the ladder is at most 1.25x, not 1.5x, the fewest that would do."""
    return _rungs(node_gpus, (5, 7), above + 1, below - 1)


def _rungs(node_gpus: int, factors: tuple[int, ...], start_gpus: int, max_gpus: int) -> list[int]:
    if node_gpus < 1:
        raise InputError("compute.system.gpus_per_node", node_gpus, "a positive count")
    ks = {m << a for m in factors for a in range(max(max_gpus // node_gpus, 1).bit_length() + 1)}
    return sorted(node_gpus * k for k in ks if start_gpus <= node_gpus * k <= max_gpus)


# The rule a GPU count sized for a training deadline is derived by (its provenance formula): the
# sensitivity and the bands find such a count by this constant, never by a phrase inside it.
SIZED_FOR_DEADLINE = ("fewest GPUs whose best layout meets target.time_to_train after failures (goodput), among "
                      "2^a and 3 x 2^a whole nodes and the 5 x 2^a or 7 x 2^a below the answer "
                      "(perf/objective.py gpus_for_deadline)")


@dataclass(frozen=True, kw_only=True)
class DeadlineSearch:
    """Outcome of the search over GPU counts; `probes` maps each count tried to its time to train."""

    gpus: int | None                # smallest count meeting the deadline (ladder, then the finer rung below
                                    # it); None if none within the cap
    time_to_train_s: float          # at `gpus` (or the best probe when None)
    probes: dict[int, float] = field(default_factory=dict)


def gpus_for_deadline(tokens: float, deadline_s: float, best_tokens_per_s: Callable[[int], float],
                      *, node_gpus: int, start_gpus: int, max_gpus: int,
                      known: dict[int, float] | None = None, estimate_gpus: float = 0.0) -> DeadlineSearch:
    """Smallest GPU count on `gpu_ladder` whose best layout trains `tokens` within `deadline_s`, then
    the finer rung in the gap below it (`finer_rungs`) if that one meets the deadline too.

    `best_tokens_per_s(n)` is the throughput of the best layout on n GPUs, 0 when no layout
    exists there. Time to train need not fall monotonically along the whole ladder: 3 x 2^a nodes
    can factor worse than the 2^a on either side (96 GPUs can train slower than 64), so the answer
    is certified on each sub-ladder, 2^a nodes and 3 x 2^a nodes, each assumed monotone (more GPUs
    of the same factoring never train slower). First a walk up the whole ladder finds one count
    that meets the deadline (`_walk_up`); then, on each sub-ladder, the smallest count at or below
    it that does (`_smallest_meeting`, its first probe the sub-ladder's top rung there); the answer
    is the smaller of the two. A sub-ladder whose top rung under the hit misses costs that one
    probe at most.
    `known`: times to train already found at some counts (an earlier pass); each sub-ladder's
    bisection starts above the largest count known to miss, since the rungs below it miss too.
    `estimate_gpus`: a count the caller expects to meet the deadline (the FLOP bound at the best
    published MFU): the walk's first probe unless a known miss names a larger count; never a bound.
    """
    if not deadline_s > 0:
        raise InputError("target.time_to_train", deadline_s, "a positive duration")
    ladder = gpu_ladder(node_gpus, start_gpus, max_gpus)
    probes: dict[int, float] = {}
    known = known or {}

    def time_at(n: int) -> float:
        if n not in probes:
            probes[n] = known[n] if n in known else time_to_train_s(tokens, best_tokens_per_s(n))
        return probes[n]

    def power_of_two(n: int) -> bool:
        k = n // node_gpus
        return k & (k - 1) == 0

    def missed() -> set[int]:
        return {n for n, t in {**known, **probes}.items() if deadline_s < t < math.inf}

    # Every miss seen names the count the deadline needs at linear scaling: the walk's first probe
    # (the bisections still cover the rungs it skips, so an estimate that overshoots costs probes,
    # not the answer).
    named = max((n * t / deadline_s for n, t in known.items() if deadline_s < t < math.inf), default=estimate_gpus)
    _, hit = _walk_up(ladder, deadline_s, time_at, 0, bisect.bisect_left(ladder, named))
    top = ladder[hit] if hit is not None else ladder[-1] if ladder else 0
    answers = []
    for rungs in ([n for n in ladder if power_of_two(n) and n <= top],
                  [n for n in ladder if not power_of_two(n) and n <= top]):
        if rungs:
            misses = missed()
            start = 1 + max((j for j, n in enumerate(rungs) if n in misses), default=-1)
            answers.append(_smallest_meeting(rungs, deadline_s, time_at, start, len(rungs) - 1))
    found = min((n for n in answers if n is not None), default=None)
    if found is None:
        return DeadlineSearch(gpus=None, time_to_train_s=min(probes.values(), default=math.inf), probes=probes)
    # Below the answer, the rung that halves the ladder's last gap (every rung under the gap misses)
    below = max((n for n in ladder if n < found), default=start_gpus - 1)
    found = next((n for n in finer_rungs(node_gpus, below, found) if time_at(n) <= deadline_s), found)
    return DeadlineSearch(gpus=found, time_to_train_s=probes[found], probes=probes)


def _walk_up(ladder: list[int], deadline_s: float, time_at: Callable[[int], float],
             start: int, first: int) -> tuple[int, int | None]:
    """(index of the last miss, index of the first hit or None past the top) of a walk up `ladder`
    from index `first` (at least `start`; the rungs below `start` are known to miss). The walk
    jumps to the rung that a miss itself names: n GPUs that train in t need about n x t / deadline
    when scaling is linear, so a miss by 4x moves four-fold, not one rung; where scaling is worse
    (a batch or a fabric that stops the speed-up) each further miss at least doubles the stride, as
    in galloping search (Bentley & Yao 1976). A count with no layout at all (a divisibility hole,
    or memory) says nothing about its neighbours: it is stepped over rather than counted as a miss."""
    miss, i, stride = start - 1, max(start, first), 1
    while i < len(ladder):
        t = time_at(ladder[i])
        if t <= deadline_s:
            return miss, i
        if math.isfinite(t):
            named = bisect.bisect_left(ladder, ladder[i] * t / deadline_s) - i
            step = max(named, stride)
            stride = stride * 2 if named <= stride else 1   # the estimate keeps falling short: gallop
            miss, i = i, i + step
        else:
            i += 1
    return miss, None


def _smallest_meeting(ladder: list[int], deadline_s: float, time_at: Callable[[int], float],
                      start: int = 0, first_probe: int | None = None) -> int | None:
    """Smallest count of `ladder` (ascending, time to train non-increasing) with time_at <= deadline.
    The rungs below `start` are known to miss; the walk probes `first_probe` (default `start`) first.

    A walk up (`_walk_up`), then bisection between the last miss and the first hit; where scaling
    is better than linear (more GPUs free memory for a faster layout) the bisection walks back. It
    probes the rung just below the hit first, where a good jump lands the boundary, then halves. A
    count with no layout at all is skipped rather than counted as a miss.
    """
    miss, hit = _walk_up(ladder, deadline_s, time_at, start, start if first_probe is None else first_probe)
    if hit is None:
        # The walk stepped past the end: the largest rung that has a layout decides (holes at the
        # top of the ladder are walked over, downwards, back to the last miss).
        for j in range(len(ladder) - 1, miss, -1):
            t = time_at(ladder[j])
            if math.isfinite(t):
                hit = j if t <= deadline_s else None
                break
    if hit is None:
        return None
    holes: set[int] = set()
    first = True
    while between := [j for j in range(miss + 1, hit) if j not in holes]:
        mid = between[-1] if first else between[len(between) // 2]
        first = False
        t = time_at(ladder[mid])
        if t <= deadline_s:
            hit = mid
        elif math.isfinite(t):
            miss = mid
        else:
            holes.add(mid)
    return ladder[hit]
