"""HPC levers: lower precision, a denser accelerator or system, liquid cooling, fewer steps, a
longer schedule, more GPUs. (An MPI job is not split over sites: no two-site lever.)"""

from __future__ import annotations

import math

from ..intake.hpc import HpcWorkload
from ..spine.doc import plain
from ..units import format_count, format_duration
from . import measures as m
from .context import Context, Variant
from .levers_common import accelerators, hall_sized, liquid_cooling, more_gpus

PRECISION_NEXT = {"fp64": "fp32", "fp32": "mixed"}
HOUR_S = 3600.0


def _w(ctx: Context) -> HpcWorkload:
    assert isinstance(ctx.w, HpcWorkload)
    return ctx.w


def _precision(ctx: Context) -> list[Variant]:
    objective = plain(ctx.base.objective)
    current = str(objective.get("precision") or _w(ctx).precision or "fp64")
    nxt = PRECISION_NEXT.get(current)
    if nxt is None:
        return []
    return [Variant(name=f"{nxt} arithmetic", lever="precision", pins={"precision": nxt},
                    change=f"precision {current} -> {nxt} (validate the solver's accuracy at it)")]


def _schedule(ctx: Context) -> list[Variant]:
    target = ctx.limit("time to solution")
    t = m.time_s(ctx.base)
    if target is None or t is None or t <= float(target.value):
        return []
    hours = math.ceil(t / HOUR_S)
    objective = plain(ctx.base.objective)
    steps = float(objective.get("steps") or 0.0)
    out = [Variant(name="longer schedule", lever="schedule", pins={"target": {"time_to_solution": f"{hours}h"}},
                   change=f"accept {format_duration(hours * HOUR_S)} instead of {target.text()}")]
    if steps and _w(ctx).simulated_time is None:
        fewer = math.floor(steps * float(target.value) / t)
        if fewer >= 1:
            out.append(Variant(name="fewer steps", lever="steps", pins={"steps": fewer},
                               change=f"{format_count(fewer)} of the {format_count(steps)} steps: what fits "
                                      "the target"))
    return out


def levers(ctx: Context) -> list[Variant]:
    memory_binds = str(ctx.base.binding_constraint or "").startswith("memory")
    out = _precision(ctx) + accelerators(ctx, memory_binds) + liquid_cooling(ctx, {}) + _schedule(ctx)
    out += hall_sized(ctx, {})
    out += more_gpus(ctx, None, {}, "as many GPUs as the target needs (no GPU limit)")
    return out
