"""The objective's arithmetic: training FLOPs, time to train, GPUs for a deadline, GPUs to hold a model.

Pure functions over plain numbers (and, for the deadline, a callback that answers "the best
tokens/s on n GPUs"); no I/O. The planner supplies the callback and the memory figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ..arch.counts import training_flops_per_token
from ..arch.model import ModelArch
from ..errors import InputError


def total_training_flops(arch: ModelArch, tokens: float, seq_len: int) -> float:
    """Model FLOPs of a whole training run: training_flops_per_token x tokens.

    Per token: 3 x forward (backward = 2 x forward) with forward = 2 x active matmul weights (the
    output head included, the embedding lookup and norms excluded) + causal attention (QK^T and AV
    at ctx/2 on average). That is "6N + attention", the PaLM MFU numerator (Chowdhery et al. 2022,
    App. B); the recompute pass is not counted (it is hardware work, not model work).
    """
    if not (math.isfinite(tokens) and tokens > 0):
        raise InputError("training.tokens", tokens, "a positive, finite token count")
    return training_flops_per_token(arch, seq_len, causal=True) * tokens


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
    if node_gpus < 1:
        raise InputError("compute.system.gpus_per_node", node_gpus, "a positive count")
    ks = {m << a for m in (1, 3) for a in range(max(max_gpus // node_gpus, 1).bit_length() + 1)}
    return sorted(node_gpus * k for k in ks if start_gpus <= node_gpus * k <= max_gpus)


@dataclass(frozen=True, kw_only=True)
class DeadlineSearch:
    """Outcome of the search over GPU counts; `probes` maps each count tried to its time to train."""

    gpus: int | None                # smallest ladder count meeting the deadline; None if none within the cap
    time_to_train_s: float          # at `gpus` (or the best probe when None)
    probes: dict[int, float] = field(default_factory=dict)


def gpus_for_deadline(tokens: float, deadline_s: float, best_tokens_per_s: Callable[[int], float],
                      *, node_gpus: int, start_gpus: int, max_gpus: int) -> DeadlineSearch:
    """Smallest GPU count on `gpu_ladder` whose best layout trains `tokens` within `deadline_s`.

    `best_tokens_per_s(n)` is the throughput of the best layout on n GPUs, 0 when no layout
    exists there. Galloping then bisection over the ladder (Bentley & Yao 1976): probe rungs
    i0, i0+1, i0+3, i0+7, ... until one meets the deadline, then bisect between the last miss
    and that hit. A count with no layout at all (a divisibility hole, or memory) says nothing
    about its neighbours: it is skipped rather than counted as a miss, and the gallop moves to
    the next rung without growing its stride. The bisection assumes that among counts that have
    layouts, more GPUs never train slower; O(log n) planner searches.
    """
    if not deadline_s > 0:
        raise InputError("target.time_to_train", deadline_s, "a positive duration")
    ladder = gpu_ladder(node_gpus, start_gpus, max_gpus)
    probes: dict[int, float] = {}

    def time_at(i: int) -> float:
        n = ladder[i]
        if n not in probes:
            probes[n] = time_to_train_s(tokens, best_tokens_per_s(n))
        return probes[n]

    miss, hit, i, step = -1, None, 0, 1
    while i < len(ladder):
        t = time_at(i)
        if t <= deadline_s:
            hit = i
            break
        if math.isfinite(t):
            miss, i, step = i, i + step, step * 2
        else:
            i += 1
    if hit is None:
        # The gallop stepped past the end: the largest rung that has a layout decides (holes at the
        # top of the ladder are walked over, downwards, back to the last miss).
        for j in range(len(ladder) - 1, miss, -1):
            t = time_at(j)
            if math.isfinite(t):
                hit = j if t <= deadline_s else None
                break
    if hit is None:
        best = min(probes.values(), default=math.inf)
        return DeadlineSearch(gpus=None, time_to_train_s=best, probes=probes)
    holes: set[int] = set()
    while True:
        between = [j for j in range(miss + 1, hit) if j not in holes]
        if not between:
            break
        mid = between[len(between) // 2]
        t = time_at(mid)
        if t <= deadline_s:
            hit = mid
        elif math.isfinite(t):
            miss = mid
        else:
            holes.add(mid)
    return DeadlineSearch(gpus=ladder[hit], time_to_train_s=probes[ladder[hit]], probes=probes)
