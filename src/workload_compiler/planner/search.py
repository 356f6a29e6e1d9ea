"""Evaluate a whole space of layouts with the one performance model and rank them by step time.

The space (grid.py) is first narrowed axis by axis by the leading rules that read one axis group
only (`_prefilter`; a DeepSeek-V3 space of 18M layouts shrinks ~10x before any product is
formed), then walked in blocks of outer rows against every inner value (blocks.py: broadcast
arrays, so a term that reads a few axes is computed once per value of those axes; 4-5x faster
than 1-D chunks on DeepSeek-V3); the best k of each block are merged. With the model's own step
function the rows are first bounded and only those that may hold one of the best k are evaluated
(bound.py: branch and bound, the same best k; 4x faster on DeepSeek-V3 at 2,048 H100). Blocks
run on a few threads (pool.py), each with its own tally, merged in block order, so the result is
the one a single thread gives. The memory and step functions are parameters (defaulting to
perf.memory and perf.step_time), so the search is tested with stand-ins and always runs the same
code as a single-layout compile.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time

import numpy as np

from ..arch.model import ModelArch
from ..errors import InputError
from ..intake.common import ParallelismIntake
from ..perf.collectives import reach_without_nics
from ..perf.layout import RECOMPUTE_NAMES, FloatArray, Hardware, IntArray, Layout, TrainingSetup
from ..perf.memory import training_memory_bytes
from ..perf.offload import fewest_layers_to_fit
from ..perf.stages import layout_string
from ..perf.step_time import training_step
from ..units import counted, format_bytes_decimal
from . import memo, search_cache
from .blocks import MEMORY_REASON, UNDEFINED_REASON, MemoryFn, StepFn, Tally, evaluate_block
from .bound import BOUND_MIN_LAYOUTS, BOUND_REASON, Progress, bounded_search
from .grid import INNER_AXES, OUTER, Rule, Space, Values, build_space, layout_of, rules
from .no_fit import leanest_if_nothing_fits
from .pool import in_order, planner_threads
from .result import PlanResult, PublishedMfu, RankedLayout

# Layouts per block (whole rows, so a block holds at least one row's inner values). Measured on
# DeepSeek-V3 at 512-3,072 H100: 2^15..2^19 within the machine's noise of each other; 2^17 kept.
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
    # Megatron-Core's layout strings name transformer layers ('t'); a hybrid's stages are cut from its
    # pattern instead, so none is written for it
    text = pinned_text or (None if arch.is_hybrid else layout_string(first, mid, last, pp, vp, arch.mtp_layers, leads))
    return first, mid, last, text, mid_mtp


def _ranked(arch: ModelArch, setup: TrainingSetup, hw: Hardware, layout: Layout,
            memory_fn: MemoryFn, step_fn: StepFn, pinned_text: str | None = None,
            offload_cap: float | None = None) -> list[RankedLayout]:
    """The ranked layouts in full; `offload_cap`: the planner chose activation offload (the same
    fewest layers under this cap that the blocks found)."""
    mem = memory_fn(arch, setup, layout)
    if offload_cap is not None:
        offload = fewest_layers_to_fit(arch, setup, layout, np.asarray(mem["total"]), offload_cap, memory_fn)
        if offload.any():
            layout = dataclasses.replace(layout, offload=offload)
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
        activation_offload_layers=int(at(layout.offload, j)),
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
                f"no tp x pp x cp x dp with the pins {pinned} multiplies to {counted(space.gpus, 'GPU')}")
    if leanest_idx < 0:
        structural = {r: c for r, c in counts.items() if c and r not in (MEMORY_REASON, UNDEFINED_REASON)}
        binding = max(structural, key=lambda r: structural[r]) if structural else UNDEFINED_REASON
        listed = "; ".join(f"{r}: {c:,}" for r, c in structural.items())
        return binding, (f"every one of the {space.size:,} layouts on {counted(space.gpus, 'GPU')} breaks a rule "
                         f"({listed})")
    if counts.get(MEMORY_REASON, 0) and not counts.get(UNDEFINED_REASON, 0):
        v = searched.decode(np.asarray([leanest_idx], dtype=np.int64))
        mem = memory_fn(arch, setup, layout_of(v, searched))
        terms = ", ".join(f"{name} {format_bytes_decimal(float(np.ravel(b)[0]))}"
                          for name, b in mem.items() if name != "total")
        return (MEMORY_REASON,
                f"the leanest valid layout on {counted(space.gpus, 'GPU')} ({describe(v)}) needs "
                f"{format_bytes_decimal(float(np.ravel(mem['total'])[0]))} per GPU ({terms}) but "
                f"{hw.accelerator_id} holds {format_bytes_decimal(hw.hbm_bytes)}")
    return UNDEFINED_REASON, "the step-time model returned no finite step time for any layout that fits"


def search(arch: ModelArch, setup: TrainingSetup, hw: Hardware, gpus: int,
           pins: ParallelismIntake | None = None, *, top_k: int = 5,
           memory_fn: MemoryFn = training_memory_bytes, step_fn: StepFn = training_step,
           published_mfu: PublishedMfu | None = None, chunk_size: int = DEFAULT_CHUNK,
           progress: Progress | None = None, memory_margin: float = 0.0, bound: bool = True,
           expect_no_fit: bool = False) -> PlanResult:
    """Rank every valid layout of `gpus` GPUs by step time; return the best `top_k` and the census.

    Memory must fit in the whole HBM (`hw.hbm_bytes`; the memory model has its own runtime term),
    or in HBM x (1 + memory_margin) (planner/tight_memory.py: a fit within the model's error).
    Nothing fitting is an answer, not an exception: `PlanResult.infeasible` names the binding rule.
    With the performance model's own step function (and `bound`), in a space of at least
    BOUND_MIN_LAYOUTS after the prefilter, rows that cannot hold one of the best `top_k` are ruled
    out by a bound on their step time before the memory model runs on them (planner/bound.py): the
    same best layouts; the census counts every rule over every layout, memory and the step model
    over the rows evaluated, and the rest under BOUND_REASON (`bound=False`: every layout
    evaluated). Inside `memo.shared_searches()` a search with the same inputs returns the
    result already found; with the model's own functions, one found by an earlier process is read
    back from disk (planner/search_cache.py). `expect_no_fit` (a GPU ladder walk where the last
    count had no layout that fits): first ask whether any layout of the smallest micro-batch fits
    (planner/no_fit.py); when none does, the same result without the search.
    """
    if gpus < 1:
        raise InputError("compute.gpus", gpus, "a positive GPU count")
    shared = memo.current()
    bounded = bound and step_fn is training_step
    inputs = (arch, setup, hw, gpus, pins.model_dump_json() if pins is not None else None, max(1, top_k),
              published_mfu, memory_margin, bounded)
    key = (*inputs, memory_fn, step_fn)
    if shared is not None and key in shared:
        found: PlanResult = shared[key]
        return found
    # Only the model's own functions are kept on disk: a stand-in's repr says nothing of its code
    # (and holds its address, which differs from process to process).
    on_disk = search_cache.key_of(inputs) \
        if memory_fn is training_memory_bytes and step_fn is training_step and search_cache.cache_dir() else None
    result = search_cache.load(on_disk) if on_disk else None
    if result is None:
        result = _search(arch, setup, hw, gpus, pins, top_k=max(1, top_k), memory_fn=memory_fn, step_fn=step_fn,
                         published_mfu=published_mfu, chunk_size=chunk_size, progress=progress,
                         memory_margin=memory_margin, bounded=bounded, expect_no_fit=expect_no_fit)
        if on_disk:
            search_cache.store(on_disk, result)
    if shared is not None:
        shared[key] = result
    return result


def _search(arch: ModelArch, setup: TrainingSetup, hw: Hardware, gpus: int, pins: ParallelismIntake | None, *,
            top_k: int, memory_fn: MemoryFn, step_fn: StepFn, published_mfu: PublishedMfu | None,
            chunk_size: int, progress: Progress | None, memory_margin: float, bounded: bool,
            expect_no_fit: bool) -> PlanResult:
    t0 = time.perf_counter()
    reach = reach_without_nics(hw)
    if reach is not None and gpus > reach:
        # a user catalog's node without NICs: nothing crosses its scale-up domain (every collective
        # there would divide by a zero bandwidth)
        return PlanResult(gpus=gpus, layouts=[], evaluated=0, feasible=0, rejected={}, seconds=0.0,
                          published_mfu=published_mfu, infeasible=(
                              "fabric", f"{hw.system_id} has no scale-out NIC: {gpus:,} GPUs exceed the "
                                        f"{reach} one scale-up domain holds"))
    full_space = build_space(arch, setup, hw, gpus, pins)
    rule_list = rules(arch, setup, hw, full_space)
    counts = dict.fromkeys([r for r, _ in rule_list] + [MEMORY_REASON, UNDEFINED_REASON, BOUND_REASON], 0)
    space, rule_list = _prefilter(full_space, rule_list, counts)
    tally = Tally.empty()
    inner_size = int(np.prod(space.shape[1:]))
    rows_per_block = max(1, chunk_size // max(inner_size, 1))
    n_rows, total = space.shape[0], space.size
    starts = range(0, n_rows, rows_per_block)
    cap = hw.hbm_bytes * (1.0 + memory_margin)
    threads = min(planner_threads(), len(starts))
    leanest = leanest_if_nothing_fits(arch, setup, hw, space, rule_list, counts, memory_fn=memory_fn,
                                      step_fn=step_fn, cap=cap, rows_per_block=rows_per_block,
                                      threads=threads) if expect_no_fit else None
    if leanest is not None:
        tally.leanest_idx = leanest
    elif bounded and space.size >= BOUND_MIN_LAYOUTS:
        bounded_search(arch, setup, hw, space, rule_list, counts, tally, memory_fn=memory_fn, step_fn=step_fn,
                       cap=cap, top_k=top_k, rows_per_block=rows_per_block, threads=threads, progress=progress)
    else:
        def block(r0: int) -> tuple[int, dict[str, int], Tally]:
            r1 = min(n_rows, r0 + rows_per_block)
            own_counts, own = dict.fromkeys(counts, 0), Tally.empty()
            evaluate_block(arch, setup, hw, space, r0, r1, rule_list, own_counts, own, memory_fn=memory_fn,
                           step_fn=step_fn, cap=cap, top_k=top_k)
            return r1, own_counts, own

        with contextlib.closing(in_order(block, starts, threads)) as results:
            for r1, own_counts, own in results:     # in block order: a deterministic merge
                for reason, c in own_counts.items():
                    counts[reason] += c
                tally.absorb(own, top_k)
                if progress is not None:
                    progress(r1 * inner_size, total)

    best, feasible, leanest_idx = tally.best, tally.feasible, tally.leanest_idx
    pinned_text = space.stage_pin.text or None if space.stage_pin is not None else None
    offload_cap = cap if space.offload_auto else None
    layouts = (_ranked(arch, setup, hw, layout_of(space.decode(best[2]), space), memory_fn, step_fn, pinned_text,
                       offload_cap)
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
