"""The baseline's collisions, stated so that the requirement and the limit read in one unit: the
GPUs the targets need against the tightest GPU limit (a pinned count, a cap, what the hall
holds), then every other limit the baseline breaks in its own unit (time, power, $, replicas)."""

from __future__ import annotations

from typing import Any

from . import measures as m
from .context import Context, GpuLimit, feasible
from .limits import Limit, show, targets_text
from .result import Alternative, Collision


def right_size(ctx: Context, alternatives: list[Alternative]) -> None:
    """'bigger cluster' is named for what it is when the requirement needs fewer GPUs than pinned."""
    limit = ctx.gpu_limit()
    for a in alternatives:
        if a.name == "bigger cluster" and a.gpus is not None and limit is not None and a.gpus <= limit.value:
            a.name = "right-sized cluster"
            a.change = f"{a.gpus:,} GPUs: what the targets need, no more (and no hall limit)"


def _need_text(ctx: Context) -> str:
    text = targets_text(ctx.limits)
    return text or ("the model" if ctx.base.kind == "training" else "the workload")


def collisions(ctx: Context, alternatives: list[Alternative]) -> list[Collision]:
    """The baseline's collisions: the GPU requirement against the tightest GPU limit (in GPUs), then
    every other limit it breaks in its own unit; the spine's own record when nothing else explains it."""
    base = ctx.base
    out: list[Collision] = []
    acc = ctx.accelerator or "GPU"
    limit = ctx.gpu_limit()
    need = next((a for a in alternatives if a.lever == "gpus" and a.feasible and a.meets_targets and a.gpus), None)
    have = m.gpus(base) if feasible(base) else None
    hall_breach = any(c.met is False and c.key in ("facility.power", "facility.floor_area_m2")
                      for c in (x.check(base) for x in ctx.limits))
    if limit is not None and hall_breach and have is not None and have > limit.value:
        out.append(_gpu_collision(limit, have, f"{have:,} {acc} GPUs (compute.gpus)"))
    elif limit is not None and need is not None and need.gpus is not None and need.gpus > limit.value:
        verb = "needs" if ctx.limit("deadline") or base.kind != "training" else "needs at least"
        fit = "" if targets_text(ctx.limits) else " to fit"
        out.append(_gpu_collision(limit, need.gpus, f"{_need_text(ctx)} {verb} {need.gpus:,} {acc} GPUs{fit}"))
    for lim in ctx.limits:
        check = lim.check(base)
        if check.met is False:
            out.append(_native(ctx, lim, check.value))
    if not base.feasible and base.binding_constraint:
        binding, _, detail = base.binding_constraint.partition(": ")
        first = next((c for c in out if c.unit == "count"), None)
        if first is not None:   # the GPU collision says why in GPUs; the spine's record says what binds
            first.detail += f" ({base.binding_constraint})"
        else:
            out.append(Collision(constraint=binding, detail=detail or binding, kind="pin"))
    return out


def _gpu_collision(limit: GpuLimit, need: int, what: str) -> Collision:
    return Collision(constraint=limit.name, kind="pin", key=limit.key, unit="count", requirement=float(need),
                     limit=float(limit.value), ratio=need / limit.value, required=float(need),
                     achieved=float(limit.value), detail=f"{what}; {limit.label}")


def _native(ctx: Context, lim: Limit, value: Any) -> Collision:
    """A breached limit in its own unit: time, power, $, latency, replicas."""
    gpus = m.gpus(ctx.base)
    on = f" on {gpus:,} {ctx.accelerator} GPUs" if gpus else ""
    reached, limit = show(lim.unit, value), lim.text()
    ratio = None if isinstance(value, str) or isinstance(lim.value, str) else float(value) / float(lim.value)
    detail = {
        "deadline": f"training takes {reached} (goodput-adjusted){on} against a {limit} target",
        "time to solution": f"the run takes {reached}{on} against a {limit} target",
        "facility power": f"the system draws {reached}{on}; the hall delivers {limit}",
        "floor space": f"the system needs {reached} of floor{on}; the hall has {limit}",
        "budget": f"it costs {reached}; the budget is {limit}",
        "replica cap": f"the load needs {reached} replicas; serving.max_replicas caps at {limit}",
    }.get(lim.name, f"{lim.name}: {reached} against {limit} ({lim.key})")
    if ratio is not None and lim.sense == "max" and ratio > 1:
        detail += f": {ratio:.2f}x over"
    required = float(lim.value) if lim.name == "deadline" and not isinstance(lim.value, str) else None
    achieved = float(value) if lim.name == "deadline" and not isinstance(value, str) else None
    return Collision(constraint=lim.name, kind=lim.kind, key=lim.key, unit=lim.unit,
                     requirement=None if isinstance(value, str) else float(value),
                     limit=None if isinstance(lim.value, str) else float(lim.value), ratio=ratio,
                     required=required, achieved=achieved, detail=detail)
