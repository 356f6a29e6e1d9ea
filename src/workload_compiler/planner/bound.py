"""Branch and bound over the rows of the space: the rows that cannot hold one of the best k layouts
are ruled out before the memory model runs on them.

A row is (tp, pp, cp, dp, vp, split) with every inner value (micro-batch, recompute, ZeRO, ep, etp).
Every layout of a row takes at least as long as the same layout without recompute: recompute only
adds work to a step (a forward pass again, the attention core again, the TP and EP exchanges of the
recomputed forward); the larger compute window hides more of the data- and context-parallel
exchanges, but never more than the compute it adds (perf/step_time.py, perf/data_parallel.py
`exposed_s`). Activation offload only adds its exposed copies. So the step time without recompute,
at every (micro-batch, ZeRO, ep, etp) that some recompute mode leaves valid, bounds the row from
below (`row_bounds`); a point whose step is undefined there bounds nothing (-inf: the row is
evaluated). The search then evaluates rows in full in the order of their bounds and stops once k
layouts are found and the next row's bound is above the k-th step time: the best k are exactly the
exhaustive search's (tests/unit/test_planner_bound.py checks them against it).

Measured on the DeepSeek-V3 deadline example at 2,048 H100 (928 rows, 11.2M layouts): 12 rows have a
bound under the best step time; no layout of the space steps faster with recompute than without
(3.4M valid layouts compared).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable

import numpy as np

from ..arch.model import ModelArch
from ..perf.layout import FloatArray, Hardware, IntArray, TrainingSetup
from .blocks import (
    MEMORY_REASON,
    UNDEFINED_REASON,
    MemoryFn,
    StepFn,
    Tally,
    dim_of,
    evaluate_block,
    quiet,
    rule_mask,
)
from .grid import INNER_AXES, BoolArray, Rule, Space, layout_of
from .pool import in_order

Progress = Callable[[int, int], None]

BOUND_REASON = "cannot beat the best found (a bound on its step time)"
# Below this many layouts left after the prefilter, the bound pass costs more than it saves (it runs
# the rules and part of the step model over every row first). Measured on 2 cores, exhaustive vs
# bounded: Llama 3.1 405B on 16,384 H100 (0.53M layouts) 65 vs 90 ms, Megatron 1T on 3,072 H100
# (0.62M) slower bounded; Mixtral 8x7B on 64 H100 (1.59M) 188 vs 87 ms, DeepSeek-V3 on 1,024 H100
# (9.9M) 614 vs 244 ms (on 64 H100, 4.5M, where memory forces recompute, 139 vs 211 ms).
BOUND_MIN_LAYOUTS = 1_000_000
# Blocks evaluated together between two checks of the bound (on the threads there are). Measured on
# the DeepSeek-V3 deadline example's six searches, 2 cores: 2 blocks 2.01 s, 4 blocks 2.06 s (noise);
# 4 leaves more machines' cores busy.
WAVE_BLOCKS = 4


def row_bounds(arch: ModelArch, setup: TrainingSetup, hw: Hardware, space: Space, r0: int, r1: int,
               rule_list: list[Rule], counts: dict[str, int], step_fn: StepFn) -> tuple[FloatArray, IntArray]:
    """(lower bound on the step time, layouts no rule rejects) of rows r0..r1; each layout a rule
    rejects is counted under the first rule it breaks, as the block evaluation counts them."""
    values, alive = rule_mask(space, r0, r1, rule_list, counts)
    shape = alive.shape
    per_row = alive.reshape(shape[0], -1).sum(axis=1)
    rc_dim = 1 + INNER_AXES.index("recompute")
    somewhere: BoolArray = np.asarray(alive.any(axis=rc_dim, keepdims=True))
    bound = np.full(shape[0], np.inf)
    if not somewhere.any():
        return bound, per_row
    # only the values some point keeps (of rows, micro-batches, ZeRO stages, ep, etp): smaller arrays
    nd = somewhere.ndim
    live = tuple(np.flatnonzero(somewhere.any(axis=tuple(i for i in range(nd) if i != d))) for d in range(nd))
    relaxed = {n: np.take(a, live[dim_of(n)], axis=dim_of(n)) if a.shape[dim_of(n)] > 1 else a
               for n, a in values.items() if n != "recompute"}
    relaxed["recompute"] = np.zeros((1,) * nd, dtype=np.int64)
    kept = somewhere[np.ix_(*live)]
    with quiet():
        step = np.broadcast_to(step_fn(arch, setup, layout_of(relaxed, space), hw).step_time_s, kept.shape)
    defined = np.isfinite(step) & (step > 0)
    bound[live[0]] = np.where(kept, np.where(defined, step, -np.inf), np.inf).reshape(len(live[0]), -1).min(axis=1)
    return bound, per_row


def bounded_search(arch: ModelArch, setup: TrainingSetup, hw: Hardware, space: Space, rule_list: list[Rule],
                   counts: dict[str, int], tally: Tally, *, memory_fn: MemoryFn, step_fn: StepFn, cap: float,
                   top_k: int, rows_per_block: int, threads: int, progress: Progress | None) -> None:
    """Every row's bound (and the rules' census), then rows in full in the order of their bounds
    until the next one cannot beat the k-th best, into `counts` and `tally`. A block's rows keep
    their order in the space and its indices are mapped back to the whole space, so ties break as
    in the exhaustive search."""
    n_rows, inner = space.shape[0], int(np.prod(space.shape[1:]))
    bounds, alive = np.empty(n_rows), np.zeros(n_rows, dtype=np.int64)

    # the bound runs the step model on one recompute value: as many rows as make its arrays a block's size
    bound_rows = rows_per_block * max(1, len(space.recompute))

    def bound_block(r0: int) -> tuple[int, int, dict[str, int], FloatArray, IntArray]:
        r1 = min(n_rows, r0 + bound_rows)
        own = dict.fromkeys(counts, 0)
        return (r0, r1, own, *row_bounds(arch, setup, hw, space, r0, r1, rule_list, own, step_fn))

    with contextlib.closing(in_order(bound_block, range(0, n_rows, bound_rows), threads)) as results:
        for r0, r1, rule_counts, b, a in results:
            for reason, c in rule_counts.items():
                counts[reason] += c
            bounds[r0:r1], alive[r0:r1] = b, a
            if progress is not None:
                progress(r1 * inner, space.size)
    order = np.argsort(bounds, kind="stable")
    order = order[alive[order] > 0]

    def evaluate(rows: IntArray) -> tuple[dict[str, int], Tally]:
        own_counts, own = dict.fromkeys(counts, 0), Tally.empty()
        evaluate_block(arch, setup, hw, dataclasses.replace(space, rows=space.rows[rows]), 0, len(rows), rule_list,
                       own_counts, own, memory_fn=memory_fn, step_fn=step_fn, cap=cap, top_k=top_k)
        row, pos = np.divmod(own.best[2], inner)      # back to the whole space's flat indices
        own.best = (own.best[0], own.best[1], np.asarray(rows[row] * inner + pos, dtype=np.int64))
        if own.leanest_idx >= 0:
            own.leanest_idx = int(rows[own.leanest_idx // inner] * inner + own.leanest_idx % inner)
        return own_counts, own

    done = 0
    # waves of WAVE_BLOCKS blocks, each decided on the blocks absorbed before it: a census that depends
    # neither on timing nor on the number of threads
    while done < len(order) and not (len(tally.best[0]) >= top_k and bounds[order[done]] > tally.best[0][top_k - 1]):
        wave = [np.sort(order[i:i + rows_per_block])
                for i in range(done, min(len(order), done + WAVE_BLOCKS * rows_per_block), rows_per_block)]
        with contextlib.closing(in_order(evaluate, wave, threads)) as evaluated:
            for own_counts, own in evaluated:
                for reason in (MEMORY_REASON, UNDEFINED_REASON):   # the rules were counted with the bounds
                    counts[reason] += own_counts[reason]
                tally.absorb(own, top_k)
        done += sum(len(rows) for rows in wave)
    counts[BOUND_REASON] += int(alive[order[done:]].sum())


__all__ = ["BOUND_MIN_LAYOUTS", "BOUND_REASON", "bounded_search", "row_bounds"]
