"""One block of the planner's search: rows of the space against every inner value, as broadcast arrays.

`Space.block` gives arrays that broadcast to (rows, mbs, recompute, zero, ep, etp), each varying
along its own dimension, so the models compute a term that reads a few axes once per value of
those axes (the rows and the micro-batch, not every layout). The remaining structural rules form
one mask, each rejection counted under the first rule it breaks; values dead on every other axis
are cut; the memory model runs on the block, the step-time model where it fits; the best k are
merged. Element by element the arithmetic is the one a 1-D evaluation does, so the census and the
ranking are those of evaluating every layout alone (tests/unit/test_planner_blocks.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ..arch.model import ModelArch
from ..perf.layout import FloatArray, Hardware, IntArray, Layout, TrainingSetup
from ..perf.memory import training_memory_bytes, training_memory_total
from ..perf.offload import fewest_layers_to_fit
from ..perf.step_time import StepResult
from .grid import INNER_AXES, OUTER, Rule, Space, layout_of

MemoryFn = Callable[[ModelArch, TrainingSetup, Layout], dict[str, FloatArray]]
StepFn = Callable[[ModelArch, TrainingSetup, Layout, Hardware], StepResult]

MEMORY_REASON = "memory exceeds HBM"
UNDEFINED_REASON = "step-time model gave no finite time"


@dataclasses.dataclass
class Tally:
    """What the blocks add up: the best k (step time, memory, flat index), the count that fits, and
    the leanest valid layout (for the reason when nothing fits)."""

    best: tuple[FloatArray, FloatArray, IntArray]
    feasible: int = 0
    leanest_bytes: float = np.inf
    leanest_idx: int = -1

    @classmethod
    def empty(cls) -> Tally:
        f, i = np.empty(0, dtype=np.float64), np.empty(0, dtype=np.int64)
        return cls(best=(f, f, i))

    def absorb(self, later: Tally, top_k: int) -> None:
        """Add the tally of a later block: the same outcome as one tally over both in order (the
        leanest keeps the earlier of equals, the best k sort by step time, memory, index)."""
        self.feasible += later.feasible
        # equals: the earlier in the space (a bounded search evaluates blocks out of the space's order)
        if later.leanest_bytes < self.leanest_bytes or (later.leanest_bytes == self.leanest_bytes
                                                         and 0 <= later.leanest_idx < self.leanest_idx):
            self.leanest_bytes, self.leanest_idx = later.leanest_bytes, later.leanest_idx
        self.best = merge_top(self.best, *later.best, top_k)


# What the blocks read of a memory model: the total (the per-term breakdown of the best k is
# computed again for those alone, `_ranked`).
_TOTAL_ONLY: dict[MemoryFn, MemoryFn] = {training_memory_bytes: training_memory_total}
# Below this share of a block fitting in memory, the step model runs on the fitting layouts alone
# (decoded to 1-D); above it, on the whole block as broadcast arrays, which is cheaper per layout.
# Measured on the DeepSeek-V3 deadline example's searches (best of 3): at 3,072 H100 0.0 -> 2.55 s,
# 0.1 -> 2.29 s, 0.25 -> 3.09 s, all 1-D -> 2.95 s; at 512 H100 1.16 / 0.78 / 0.82 / 0.75 s.
_BLOCK_STEP_SHARE = 0.1


def dim_of(axis: str) -> int:
    """The dimension of `Space.block` along which `axis` varies."""
    return 0 if axis in OUTER else 1 + INNER_AXES.index(axis)


@dataclasses.dataclass(frozen=True)
class _Sub:
    """A sub-block: the values kept along each dimension (`keep`, indices into the whole block, in
    order, so flat order is kept) and the block's arrays cut to them."""

    values: dict[str, IntArray]
    keep: tuple[IntArray, ...]
    full: tuple[int, ...]
    offset: int

    def cut(self, mask: np.ndarray) -> tuple[_Sub, tuple[IntArray, ...]]:
        """The sub-block of the values of each dimension live somewhere in `mask` (a mask over this
        sub-block), and where those values sit in this sub-block."""
        live = tuple(np.flatnonzero(mask.any(axis=tuple(i for i in range(mask.ndim) if i != d)))
                     for d in range(mask.ndim))
        values = {n: np.take(a, live[dim_of(n)], axis=dim_of(n)) for n, a in self.values.items()}
        return _Sub(values=values, keep=tuple(k[x] for k, x in zip(self.keep, live, strict=True)),
                    full=self.full, offset=self.offset), live

    def flat(self, pos: IntArray) -> IntArray:
        """Flat indices of the space for positions (C order) in this sub-block."""
        coords = np.unravel_index(pos, tuple(len(k) for k in self.keep))
        return self.offset + np.ravel_multi_index(tuple(k[c] for k, c in zip(self.keep, coords, strict=True)),
                                                  self.full)


def quiet() -> np.errstate:
    """Arithmetic on the layouts a mask drops may divide by zero; their values are never read."""
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


def rule_mask(space: Space, r0: int, r1: int, rule_list: list[Rule],
              counts: dict[str, int]) -> tuple[dict[str, IntArray], np.ndarray]:
    """The block of rows r0..r1 (`Space.block`) and where no rule rejects it; each rejected layout
    counted under the first rule it breaks."""
    values = space.block(r0, r1)
    alive = np.ones((r1 - r0, *space.shape[1:]), dtype=bool)
    for reason, ok_fn in rule_list:
        ok = np.asarray(ok_fn(values), dtype=bool)
        counts[reason] += int(np.count_nonzero(alive & ~ok))
        alive &= ok
    return values, alive


def evaluate_block(arch: ModelArch, setup: TrainingSetup, hw: Hardware, space: Space, r0: int, r1: int,
                   rule_list: list[Rule], counts: dict[str, int], tally: Tally, *, memory_fn: MemoryFn,
                   step_fn: StepFn, cap: float, top_k: int) -> None:
    """Rows r0..r1 with all their inner values (`Space.block`): the remaining rules as one mask
    (each rejection counted under the first rule it breaks), memory, then step time where it fits.
    Before the models run, the values dead on every other axis (a micro-batch no dp of these rows
    divides, an ep x etp too large for all of them) are cut (cutting again by what fits in memory
    measured slower: few values are dead everywhere). Element by element the arithmetic is the one
    a 1-D evaluation does, so the results are the same."""
    values, alive = rule_mask(space, r0, r1, rule_list, counts)
    shape = alive.shape
    n_alive = int(np.count_nonzero(alive))
    if n_alive == 0:
        return
    whole = _Sub(values=values, keep=tuple(np.arange(n) for n in shape), full=shape,
                 offset=r0 * int(np.prod(shape[1:])))
    sub, live = whole.cut(alive)
    alive = alive[np.ix_(*live)]
    total_fn = _TOTAL_ONLY.get(memory_fn, memory_fn)
    layout = layout_of(sub.values, space)
    with quiet():
        mem = np.broadcast_to(total_fn(arch, setup, layout)["total"], alive.shape)
        offload = fewest_layers_to_fit(arch, setup, layout, mem, cap, total_fn) if space.offload_auto else None
        if offload is not None and offload.any():
            layout = dataclasses.replace(layout, offload=offload)
            mem = np.broadcast_to(total_fn(arch, setup, layout)["total"], alive.shape)
        else:
            offload = None
    j = int(np.argmin(np.where(alive, mem, np.inf)))
    if mem.flat[j] < tally.leanest_bytes:
        tally.leanest_bytes, tally.leanest_idx = float(mem.flat[j]), int(sub.flat(np.asarray([j]))[0])
    fits = alive & (mem <= cap)
    n_fit = int(np.count_nonzero(fits))
    counts[MEMORY_REASON] += n_alive - n_fit
    if n_fit == 0:
        return
    idx = sub.flat(np.flatnonzero(fits))
    if n_fit < _BLOCK_STEP_SHARE * fits.size:
        few = layout_of(space.decode(idx), space)
        if offload is not None:
            few = dataclasses.replace(few, offload=offload[fits])
        step = np.broadcast_to(step_fn(arch, setup, few, hw).step_time_s, idx.shape)
    else:
        with quiet():
            step = np.broadcast_to(step_fn(arch, setup, layout, hw).step_time_s, fits.shape)[fits]
    ok = np.isfinite(step) & (step > 0)
    counts[UNDEFINED_REASON] += n_fit - int(np.count_nonzero(ok))
    tally.feasible += int(np.count_nonzero(ok))
    tally.best = merge_top(tally.best, step[ok], mem[fits][ok], idx[ok], top_k)


def merge_top(best: tuple[FloatArray, FloatArray, IntArray], step: FloatArray, mem: FloatArray,
              idx: IntArray, k: int) -> tuple[FloatArray, FloatArray, IntArray]:
    """Keep the k best by (step time, memory, flat index): deterministic under ties."""
    if len(step) > k:  # cheap pre-cut: everything at or below the k-th smallest step time
        kth = np.partition(step, k - 1)[k - 1]
        keep = step <= kth
        step, mem, idx = step[keep], mem[keep], idx[keep]
    s, m, i = (np.concatenate([a, b]) for a, b in zip(best, (step, mem, idx), strict=True))
    order = np.lexsort((i, m, s))[:k]
    return s[order], m[order], i[order]


__all__ = ["MEMORY_REASON", "UNDEFINED_REASON", "MemoryFn", "StepFn", "Tally", "dim_of", "evaluate_block", "merge_top",
           "quiet", "rule_mask"]
