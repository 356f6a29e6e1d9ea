"""Evaluate a whole space of layouts with the one performance model and rank them by step time.

The space (grid.py) is first narrowed axis by axis by the leading rules that read one axis group
only (`_prefilter`; a DeepSeek-V3 space of 18M layouts shrinks ~10x before any product is
formed), then walked in blocks of outer rows with every inner value (`Space.block`): NumPy arrays
that broadcast to (rows, mbs, recompute, zero, ep, etp), so the models compute a term that reads
the rows and the micro-batch once per (row, mbs), not once per layout (4-5x faster than 1-D
chunks on DeepSeek-V3). In each block the remaining structural rules form one mask (each
rejection counted under the first rule it breaks), the memory model runs on the block, the
step-time model on what fits in HBM; the best k of each block are merged. The memory and step
functions are parameters (defaulting to perf.memory and perf.step_time), so the search is tested
with stand-ins and always runs the same code as a single-layout compile.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np

from ..arch.model import ModelArch
from ..errors import InputError
from ..intake.common import ParallelismIntake
from ..perf.layout import RECOMPUTE_NAMES, FloatArray, Hardware, IntArray, Layout, TrainingSetup
from ..perf.memory import training_memory_bytes, training_memory_total
from ..perf.stages import layout_string
from ..perf.step_time import StepResult, training_step
from ..units import format_bytes_decimal
from . import memo
from .grid import INNER_AXES, OUTER, Rule, Space, Values, build_space, layout_of, rules
from .result import PlanResult, PublishedMfu, RankedLayout

MemoryFn = Callable[[ModelArch, TrainingSetup, Layout], dict[str, FloatArray]]
StepFn = Callable[[ModelArch, TrainingSetup, Layout, Hardware], StepResult]
Progress = Callable[[int, int], None]

MEMORY_REASON = "memory exceeds HBM"
UNDEFINED_REASON = "step-time model gave no finite time"
# 2^17 layouts: 1 MB per int64 axis array. Large enough that NumPy's per-call overhead is small,
# small enough to stay in cache (measured: 2^16..2^18 within noise on GPT-3; 2^20 is 15-50% slower).
DEFAULT_CHUNK = 1 << 17


def _prefilter(space: Space, rule_list: list[Rule], counts: dict[str, int]) -> tuple[Space, list[Rule]]:
    """Apply the leading rules that read only the outer rows (tp, pp, cp, dp, vp, split), or only
    one inner axis, to the axes
    themselves: the space stays a product, each rule's rejections are (values removed) x (the size of
    the other axes), and the chunks never expand what these rules would drop. A rule that reads
    more than that ends the run (rejections are attributed in rule order)."""
    for n, (reason, ok_fn) in enumerate(rule_list):
        f = space.rows
        views: list[tuple[str, Values]] = [("rows", {n: f[:, k] for k, n in enumerate(OUTER)})]
        views += [(axis, {axis: getattr(space, axis)}) for axis in INNER_AXES]
        for axis, view in views:
            try:
                ok = np.broadcast_to(np.asarray(ok_fn(view), dtype=bool), next(iter(view.values())).shape)
            except KeyError:
                continue
            size_before = space.size
            space = dataclasses.replace(space, **({axis: getattr(space, axis)[ok]} if axis != "rows"
                                                  else {"rows": f[ok]}))
            counts[reason] += size_before - space.size
            break
        else:
            return space, rule_list[n:]
    return space, []


@dataclasses.dataclass
class _Tally:
    """What the blocks add up: the best k (step time, memory, flat index), the count that fits, and
    the leanest valid layout (for the reason when nothing fits)."""

    best: tuple[FloatArray, FloatArray, IntArray]
    feasible: int = 0
    leanest_bytes: float = np.inf
    leanest_idx: int = -1


# What the blocks read of a memory model: the total (the per-term breakdown of the best k is
# computed again for those alone, `_ranked`).
_TOTAL_ONLY: dict[MemoryFn, MemoryFn] = {training_memory_bytes: training_memory_total}
# Below this share of a block fitting in memory, the step model runs on the fitting layouts alone
# (decoded to 1-D); above it, on the whole block as broadcast arrays, which is cheaper per layout.
_BLOCK_STEP_SHARE = 0.1


def _dim(axis: str) -> int:
    """The dimension of `Space.block` along which `axis` varies."""
    return 0 if axis in OUTER else 1 + INNER_AXES.index(axis)


def _block(arch: ModelArch, setup: TrainingSetup, hw: Hardware, space: Space, r0: int, r1: int,
           rule_list: list[Rule], counts: dict[str, int], tally: _Tally, *, memory_fn: MemoryFn,
           step_fn: StepFn, cap: float, top_k: int) -> None:
    """Rows r0..r1 with all their inner values (`Space.block`): the remaining rules as one mask
    (each rejection counted under the first rule it breaks), memory, then step time where it fits.
    The models see broadcast arrays, so a term that reads a few axes is computed once per value of
    those axes; the layouts outside the mask are computed and dropped. Element by element the
    arithmetic is the one a 1-D evaluation does, so the results are the same."""
    values = space.block(r0, r1)
    shape = (r1 - r0, *space.shape[1:])
    alive = np.ones(shape, dtype=bool)
    for reason, ok_fn in rule_list:
        ok = np.asarray(ok_fn(values), dtype=bool)
        counts[reason] += int(np.count_nonzero(alive & ~ok))
        alive &= ok
    n_alive = int(np.count_nonzero(alive))
    if n_alive == 0:
        return
    # Values dead on every other axis of the block (a micro-batch that no dp of these rows divides,
    # an ep x etp too large for all of them) are cut before the models run: a sub-block, and its
    # positions mapped back to flat indices (the kept values stay in order, so the flat order does).
    keep = [np.flatnonzero(alive.any(axis=tuple(i for i in range(alive.ndim) if i != d))) for d in range(alive.ndim)]
    sub = alive[np.ix_(*keep)]
    values = {n: np.take(a, keep[_dim(n)], axis=_dim(n)) for n, a in values.items()}

    full = shape

    def flat(pos: IntArray) -> IntArray:
        coords = np.unravel_index(pos, sub.shape)
        return r0 * int(np.prod(full[1:])) + np.ravel_multi_index(
            tuple(k[c] for k, c in zip(keep, coords, strict=True)), full)

    alive, shape = sub, sub.shape
    layout = layout_of(values, space)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):   # the masked-out layouts
        mem = np.broadcast_to(_TOTAL_ONLY.get(memory_fn, memory_fn)(arch, setup, layout)["total"], shape)
    j = int(np.argmin(np.where(alive, mem, np.inf)))
    if mem.flat[j] < tally.leanest_bytes:
        tally.leanest_bytes, tally.leanest_idx = float(mem.flat[j]), int(flat(np.asarray([j]))[0])
    fits = alive & (mem <= cap)
    n_fit = int(np.count_nonzero(fits))
    counts[MEMORY_REASON] += n_alive - n_fit
    if n_fit == 0:
        return
    idx = flat(np.flatnonzero(fits))
    if n_fit < _BLOCK_STEP_SHARE * fits.size:
        step = np.broadcast_to(step_fn(arch, setup, layout_of(space.decode(idx), space), hw).step_time_s, idx.shape)
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            step = np.broadcast_to(step_fn(arch, setup, layout, hw).step_time_s, shape)[fits]
    ok = np.isfinite(step) & (step > 0)
    counts[UNDEFINED_REASON] += n_fit - int(np.count_nonzero(ok))
    tally.feasible += int(np.count_nonzero(ok))
    tally.best = _merge_top(tally.best, step[ok], mem[fits][ok], idx[ok], top_k)


def _merge_top(best: tuple[FloatArray, FloatArray, IntArray], step: FloatArray, mem: FloatArray,
               idx: IntArray, k: int) -> tuple[FloatArray, FloatArray, IntArray]:
    """Keep the k best by (step time, memory, flat index): deterministic under ties."""
    if len(step) > k:  # cheap pre-cut: everything at or below the k-th smallest step time
        kth = np.partition(step, k - 1)[k - 1]
        keep = step <= kth
        step, mem, idx = step[keep], mem[keep], idx[keep]
    s, m, i = (np.concatenate([a, b]) for a, b in zip(best, (step, mem, idx), strict=True))
    order = np.lexsort((i, m, s))[:k]
    return s[order], m[order], i[order]


def _split_of(arch: ModelArch, layout: Layout, j: int, n: int,
              pinned_text: str | None) -> tuple[int, int, int, str | None, int]:
    """(first, middle, last stage layers, layout string, MTP on the middle rank) of layout j."""
    def at(name: str) -> int:
        return int(np.broadcast_to(getattr(layout, name), (n,))[j])

    pp, vp = at("pp"), at("vp")
    first, mid, last = at("first_layers"), at("mid_layers"), at("last_layers")
    if first < 0:
        per = vp * -(-arch.layers // (pp * vp))
        first, mid, last = per, per if pp >= 3 else 0, per if pp >= 2 else 0
    if pp == 1:
        return first, 0, 0, None, 0
    mid_mtp = at("mid_mtp")
    leads = (at("first_lead"), at("mid_lead"), at("last_lead"))
    text = pinned_text or layout_string(first, mid, last, pp, vp, arch.mtp_layers, leads)
    return first, mid, last, text, mid_mtp


def _ranked(arch: ModelArch, setup: TrainingSetup, hw: Hardware, layout: Layout,
            memory_fn: MemoryFn, step_fn: StepFn, pinned_text: str | None = None) -> list[RankedLayout]:
    mem = memory_fn(arch, setup, layout)
    res = step_fn(arch, setup, layout, hw)
    n = layout.shape[0]

    def at(a: FloatArray | IntArray | np.ndarray, j: int) -> float:
        return float(np.broadcast_to(a, (n,))[j])

    splits = [_split_of(arch, layout, j, n, pinned_text) for j in range(n)]
    return [RankedLayout(
        tp=int(at(layout.tp, j)), pp=int(at(layout.pp, j)), dp=int(at(layout.dp, j)),
        cp=int(at(layout.cp, j)), ep=int(at(layout.ep, j)), etp=int(at(layout.etp, j)),
        vp=int(at(layout.vp, j)), micro_batch_size=int(at(layout.mbs, j)),
        recompute=RECOMPUTE_NAMES[int(at(layout.recompute, j))], zero_stage=int(at(layout.zero, j)),
        sequence_parallel=bool(at(layout.sp, j)),
        step_time_s=at(res.step_time_s, j),
        step_breakdown_s={name: at(v, j) for name, v in res.breakdown_s.items()},
        tokens_per_s=at(res.tokens_per_s, j),
        model_flops_per_gpu_per_s=at(res.model_flops_per_gpu_per_s, j),
        mfu=at(res.mfu, j),
        memory_per_gpu_bytes=at(mem["total"], j),
        memory_breakdown_bytes={name: at(v, j) for name, v in mem.items() if name != "total"},
        first_stage_layers=splits[j][0], middle_stage_layers=splits[j][1], last_stage_layers=splits[j][2],
        pipeline_layout=splits[j][3], middle_stage_mtp=splits[j][4],
    ) for j in range(n)]


def describe(v: Values) -> str:
    """'tp 8, pp 8, dp 16, cp 1, vp 1, mbs 1, recompute full, zero 1' for the first layout of `v`."""
    x = {k: int(np.ravel(a)[0]) for k, a in v.items()}
    parts = [f"tp {x['tp']}", f"pp {x['pp']}", f"dp {x['dp']}", f"cp {x['cp']}"]
    if x["ep"] > 1 or x["etp"] > 1:
        parts += [f"ep {x['ep']}", f"etp {x['etp']}"]
    parts += [f"vp {x['vp']}", f"mbs {x['mbs']}", f"recompute {RECOMPUTE_NAMES[x['recompute']]}",
              f"zero {x['zero']}"]
    return ", ".join(parts)


def _why_infeasible(arch: ModelArch, setup: TrainingSetup, hw: Hardware, space: Space,
                    counts: dict[str, int], leanest_idx: int, memory_fn: MemoryFn,
                    pins: ParallelismIntake | None, searched: Space) -> tuple[str, str]:
    """`space` is the whole enumerated space; `searched` the prefiltered one the indices refer to."""
    if space.size == 0:
        pinned = {k: v for k, v in (pins or ParallelismIntake()).model_dump().items() if v is not None}
        return ("pinned parallelism",
                f"no tp x pp x cp x dp with the pins {pinned} multiplies to {space.gpus} GPUs")
    if leanest_idx < 0:
        structural = {r: c for r, c in counts.items() if c and r not in (MEMORY_REASON, UNDEFINED_REASON)}
        binding = max(structural, key=lambda r: structural[r]) if structural else UNDEFINED_REASON
        listed = "; ".join(f"{r}: {c:,}" for r, c in structural.items())
        return binding, (f"every one of the {space.size:,} layouts on {space.gpus} GPUs breaks a rule "
                         f"({listed})")
    if counts.get(MEMORY_REASON, 0) and not counts.get(UNDEFINED_REASON, 0):
        v = searched.decode(np.asarray([leanest_idx], dtype=np.int64))
        mem = memory_fn(arch, setup, layout_of(v, searched))
        terms = ", ".join(f"{name} {format_bytes_decimal(float(np.ravel(b)[0]))}"
                          for name, b in mem.items() if name != "total")
        return (MEMORY_REASON,
                f"the leanest valid layout on {space.gpus} GPUs ({describe(v)}) needs "
                f"{format_bytes_decimal(float(np.ravel(mem['total'])[0]))} per GPU ({terms}) but "
                f"{hw.accelerator_id} holds {format_bytes_decimal(hw.hbm_bytes)}")
    return UNDEFINED_REASON, "the step-time model returned no finite step time for any layout that fits"


def search(arch: ModelArch, setup: TrainingSetup, hw: Hardware, gpus: int,
           pins: ParallelismIntake | None = None, *, top_k: int = 5,
           memory_fn: MemoryFn = training_memory_bytes, step_fn: StepFn = training_step,
           published_mfu: PublishedMfu | None = None, chunk_size: int = DEFAULT_CHUNK,
           progress: Progress | None = None, memory_margin: float = 0.0) -> PlanResult:
    """Rank every valid layout of `gpus` GPUs by step time; return the best `top_k` and the census.

    Memory must fit in the whole HBM (`hw.hbm_bytes`; the memory model has its own runtime term),
    or in HBM x (1 + memory_margin) (planner/tight_memory.py: a fit within the model's error).
    Nothing fitting is an answer, not an exception: `PlanResult.infeasible` names the binding rule.
    Inside `memo.shared_searches()` a search with the same inputs returns the result already found.
    """
    if gpus < 1:
        raise InputError("compute.gpus", gpus, "a positive GPU count")
    shared = memo.current()
    key = (arch, setup, hw, gpus, pins.model_dump_json() if pins is not None else None, max(1, top_k),
           memory_fn, step_fn, published_mfu, memory_margin)
    if shared is not None and key in shared:
        found: PlanResult = shared[key]
        return found
    result = _search(arch, setup, hw, gpus, pins, top_k=max(1, top_k), memory_fn=memory_fn, step_fn=step_fn,
                     published_mfu=published_mfu, chunk_size=chunk_size, progress=progress,
                     memory_margin=memory_margin)
    if shared is not None:
        shared[key] = result
    return result


def _search(arch: ModelArch, setup: TrainingSetup, hw: Hardware, gpus: int, pins: ParallelismIntake | None, *,
            top_k: int, memory_fn: MemoryFn, step_fn: StepFn, published_mfu: PublishedMfu | None,
            chunk_size: int, progress: Progress | None, memory_margin: float) -> PlanResult:
    t0 = time.perf_counter()
    full_space = build_space(arch, setup, hw, gpus, pins)
    rule_list = rules(arch, setup, hw, full_space)
    counts = dict.fromkeys([r for r, _ in rule_list] + [MEMORY_REASON, UNDEFINED_REASON], 0)
    space, rule_list = _prefilter(full_space, rule_list, counts)
    empty_f, empty_i = np.empty(0, dtype=np.float64), np.empty(0, dtype=np.int64)
    tally = _Tally(best=(empty_f, empty_f, empty_i))
    inner = space.shape[1:]
    inner_size = int(np.prod(inner))
    rows_per_block = max(1, chunk_size // max(inner_size, 1))
    n_rows, total = space.shape[0], space.size
    for r0 in range(0, n_rows, rows_per_block):
        r1 = min(n_rows, r0 + rows_per_block)
        _block(arch, setup, hw, space, r0, r1, rule_list, counts, tally, memory_fn=memory_fn, step_fn=step_fn,
               cap=hw.hbm_bytes * (1.0 + memory_margin), top_k=top_k)
        if progress is not None:
            progress(r1 * inner_size, total)

    best, feasible, leanest_idx = tally.best, tally.feasible, tally.leanest_idx
    pinned_text = space.stage_pin.text or None if space.stage_pin is not None else None
    layouts = (_ranked(arch, setup, hw, layout_of(space.decode(best[2]), space), memory_fn, step_fn, pinned_text)
               if len(best[2]) else [])
    infeasible = None
    if not layouts:
        infeasible = _why_infeasible(arch, setup, hw, full_space, counts, leanest_idx, memory_fn, pins, space)
    warnings = []
    if layouts and published_mfu is not None and layouts[0].mfu > published_mfu.mfu:
        warnings.append(
            f"the best layout's MFU {layouts[0].mfu:.1%} exceeds the best published "
            f"{published_mfu.mfu:.1%} for {published_mfu.accelerator} {published_mfu.precision} "
            f"(record {published_mfu.record}): treat this optimum as optimistic")
    return PlanResult(gpus=gpus, layouts=layouts, evaluated=full_space.size, feasible=feasible,
                      rejected={r: c for r, c in counts.items() if c}, seconds=time.perf_counter() - t0,
                      published_mfu=published_mfu, infeasible=infeasible, warnings=warnings)


__all__ = ["MEMORY_REASON", "UNDEFINED_REASON", "MemoryFn", "Progress", "StepFn", "describe", "search"]
