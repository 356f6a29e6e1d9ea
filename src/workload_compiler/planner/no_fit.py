"""Decide "nothing fits on this GPU count" from the smallest micro-batch alone.

Memory per GPU never falls as the micro-batch grows with the other axes held: each in-flight
micro-batch stores mbs x seq / cp tokens per layer, and the micro-batches in flight, at most
min(pp, n) of the n = batch / (dp x mbs) in a step, times mbs is min(pp x mbs, batch / dp);
the model states, the working set of one layer and the loss peak of one micro-batch do not
shrink with it either. Every rule that admits a micro-batch admits the smaller ones (a dp x mbs
that divides the batch, a micro-batch count divisible by pp, stay so when mbs halves). So when
no layout of the smallest micro-batch fits, none of the space does, and every layout no rule
rejects is out on memory: the census, the leanest layout and the reason are those of evaluating
every layout. Checked over 23M adjacent micro-batch pairs of eight models (dense, MoE, MLA, a
Mamba hybrid, LoRA; Megatron-Core, FSDP and torchtitan profiles) on H100 and GB200, none lower
at the larger micro-batch; tests/unit/test_planner_no_fit.py keeps the claim checked.

The GPU ladder walks that probe count after count where nothing fits (a model whose activations
no sharding brings under the HBM, up to the intake's million GPUs) run this instead of the
search: the memory model on the smallest micro-batch alone (one of the eleven values a batch of
1,024 sequences allows) and no step-time bound over the rows. Measured on DeepSeek-V3 with a LoRA
rank of 2^20 on H100, one thread: 3.7 -> 0.56 s at 6,144 GPUs, 1.9 -> 0.31 s at 196,608; the
deadline compile that walks every count to a million GPUs, 80 -> 28 s on 2 cores.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable

import numpy as np

from ..arch.model import ModelArch
from ..perf.layout import Hardware, TrainingSetup
from .blocks import MEMORY_REASON, UNDEFINED_REASON, MemoryFn, StepFn, Tally, evaluate_block, rule_mask
from .grid import Rule, Space
from .pool import in_order
from .result import PlanResult


def out_of_memory(result: PlanResult | None) -> bool:
    """Nothing fit on the count searched, for want of memory: the next count of a ladder walk is
    probed first (`search(expect_no_fit=True)`)."""
    return result is not None and result.best is None and result.infeasible is not None \
        and result.infeasible[0] == MEMORY_REASON


def ladder_searches(cache: dict[int, PlanResult],
                    run: Callable[[int, bool], PlanResult]) -> Callable[[int], PlanResult]:
    """A ladder walk's search by GPU count, kept in `cache`: `run(n, expect_no_fit)` for a count not
    searched yet, told to probe first when the count the walk looked at last had nothing that fits."""
    last: PlanResult | None = None

    def at(n: int) -> PlanResult:
        nonlocal last
        if n not in cache:
            cache[n] = run(n, out_of_memory(last))
        last = cache[n]
        return last

    return at


def leanest_if_nothing_fits(arch: ModelArch, setup: TrainingSetup, hw: Hardware, space: Space,
                            rule_list: list[Rule], counts: dict[str, int], *, memory_fn: MemoryFn,
                            step_fn: StepFn, cap: float, rows_per_block: int, threads: int) -> int | None:
    """The flat index (in `space`) of the leanest layout when no layout of `space` fits in `cap`,
    with `counts` filled as the exhaustive search fills them; None (and `counts` untouched) when a
    layout of the smallest micro-batch fits."""
    probe = dataclasses.replace(space, mbs=space.mbs[:1])
    n_rows = space.shape[0]
    probe_rows = rows_per_block * len(space.mbs)    # blocks of the search's size: one micro-batch a row

    def probe_block(r0: int) -> tuple[dict[str, int], Tally]:
        own_counts, own = dict.fromkeys(counts, 0), Tally.empty()
        evaluate_block(arch, setup, hw, probe, r0, min(n_rows, r0 + probe_rows), rule_list, own_counts, own,
                       memory_fn=memory_fn, step_fn=step_fn, cap=cap, top_k=1)
        return own_counts, own

    tally = Tally.empty()
    with contextlib.closing(in_order(probe_block, range(0, n_rows, probe_rows), threads)) as results:
        for own_counts, own in results:
            if own.feasible or own_counts[UNDEFINED_REASON]:
                return None      # a layout fits (the step model ran on it): the search must run
            tally.absorb(own, 1)
    if tally.leanest_idx < 0:
        return None              # no rule admits the smallest micro-batch: the search says why

    def census(r0: int) -> dict[str, int]:
        own = dict.fromkeys(counts, 0)
        _, alive = rule_mask(space, r0, min(n_rows, r0 + rows_per_block), rule_list, own)
        own[MEMORY_REASON] += int(np.count_nonzero(alive))
        return own

    with contextlib.closing(in_order(census, range(0, n_rows, rows_per_block), threads)) as censuses:
        for own_census in censuses:
            for reason, c in own_census.items():
                counts[reason] += c
    # the probe's flat index, moved to the same layout (micro-batch index 0) in the whole space
    inner_probe, inner = int(np.prod(probe.shape[1:])), int(np.prod(space.shape[1:]))
    row, pos = divmod(tally.leanest_idx, inner_probe)
    return row * inner + pos


__all__ = ["ladder_searches", "leanest_if_nothing_fits", "out_of_memory"]
