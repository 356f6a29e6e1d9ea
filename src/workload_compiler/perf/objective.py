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
    """Candidate GPU counts: node_gpus x k for k = 2^a x 3^b (1, 2, 3, 4, 6, 8, 9, 12, 16, ...).

    Counts with other prime factors (5, 7, 11 nodes) rarely factor into TP x PP x DP for real
    models and batches (56 GPUs for a 96-layer model with 96 heads and batch 1536 has no layout at
    all), and they would break the monotonicity the bisection relies on. Steps are <= 33% apart.
    Rungs below start_gpus (a lower bound) are left out: they cannot meet the deadline.
    """
    if node_gpus < 1:
        raise InputError("compute.system.gpus_per_node", node_gpus, "a positive count")
    ks: list[int] = []
    two = 1
    while node_gpus * two <= max_gpus:
        three = two
        while node_gpus * three <= max_gpus:
            ks.append(three)
            three *= 3
        two *= 2
    return sorted(node_gpus * k for k in ks if node_gpus * k >= start_gpus)


@dataclass(frozen=True, kw_only=True)
class DeadlineSearch:
    """Outcome of the search over GPU counts; `probes` maps each count tried to its time to train."""

    gpus: int | None                # smallest ladder count meeting the deadline; None if none within the cap
    time_to_train_s: float          # at `gpus` (or the best probe when None)
    probes: dict[int, float] = field(default_factory=dict)


def gpus_for_deadline(tokens: float, deadline_s: float, best_tokens_per_s: Callable[[int], float],
                      *, node_gpus: int, start_gpus: int, max_gpus: int) -> DeadlineSearch:
    """Smallest GPU count on `gpu_ladder` whose best layout trains `tokens` within `deadline_s`.

    `best_tokens_per_s(n)` is the throughput of the best layout on n GPUs (0 when none fits).
    Galloping then bisection over the ladder (Bentley & Yao 1976): probe rungs i0, i0+1, i0+2,
    i0+4, ... until one meets the deadline, then bisect between the last miss and that hit. It
    assumes that on the ladder, more GPUs never train slower, which holds while the step shrinks
    with the per-replica batch; where it does not, the answer is still a count that meets the
    deadline, the smallest at the boundary the bisection found. O(log n) planner searches.
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

    if not ladder:
        return DeadlineSearch(gpus=None, time_to_train_s=math.inf, probes=probes)
    miss, hit, step = -1, None, 1
    i = 0
    while i < len(ladder):
        if time_at(i) <= deadline_s:
            hit = i
            break
        miss, i, step = i, i + step, step * 2
    if hit is None:
        last = len(ladder) - 1
        if miss != last and time_at(last) <= deadline_s:
            hit = last
        else:
            best = min(probes.values())
            return DeadlineSearch(gpus=None, time_to_train_s=best, probes=probes)
    while hit - miss > 1:
        mid = (hit + miss) // 2
        if time_at(mid) <= deadline_s:
            hit = mid
        else:
            miss = mid
    return DeadlineSearch(gpus=ladder[hit], time_to_train_s=probes[ladder[hit]], probes=probes)
