"""Training levers: lower precision, a denser accelerator or system, liquid cooling, fewer tokens,
a longer schedule, a smaller model (Chinchilla-consistent), more sites, more GPUs."""

from __future__ import annotations

import math
from typing import Any

from ..errors import WkcError
from ..intake.training import TrainingWorkload
from ..perf.layout import PEAK_CLASS
from ..spine.result import ObjectiveLayer
from ..spine.training_defaults import CHINCHILLA_TOKENS_PER_PARAM
from ..units import format_count, format_duration
from . import measures as m
from .context import Context, Variant
from .levers_common import accelerators, hall_sized, liquid_cooling, more_gpus, two_sites

DAY_S = 86400.0
PROBE_FRACTIONS = (0.5, 0.25, 0.1)   # model sizes tried when the baseline does not fit at all


def _w(ctx: Context) -> TrainingWorkload:
    assert isinstance(ctx.w, TrainingWorkload)
    return ctx.w


def _precision(ctx: Context) -> list[Variant]:
    w = _w(ctx)
    acc = ctx.accelerator
    if acc is None:
        return []
    hw = ctx.catalog.hardware(acc, ctx.system)
    current = w.training.precision or "bf16"
    peak = PEAK_CLASS.get(current)
    if peak == "bf16" and hw.peak_flops_fp8:
        nxt = "fp8"
    elif peak == "fp8" and hw.peak_flops_fp4:
        nxt = "nvfp4"
    else:
        return []
    return [Variant(name=f"{nxt.upper()} training", lever="precision",
                    change=f"precision {current} -> {nxt} on the same GPU limits",
                    pins={"training.precision": nxt})]


def _schedule_and_tokens(ctx: Context) -> list[Variant]:
    target = _w(ctx).target.time_to_train
    t = m.time_s(ctx.base)
    objective = ctx.base.objective
    if target is None or t is None or t <= target or not isinstance(objective, ObjectiveLayer):
        return []
    days = math.ceil(t / DAY_S) * DAY_S
    tokens = objective.tokens * target / t
    return [Variant(name="longer schedule", lever="schedule", change=f"accept {format_duration(days)} instead of "
                    f"{format_duration(target)}", pins={"target.time_to_train": f"{days / DAY_S:g}d"}),
            Variant(name="fewer tokens", lever="tokens",
                    change=f"train {format_count(tokens)} of the {format_count(objective.tokens)} tokens: what fits "
                           "the deadline", pins={"training.tokens": tokens})]


def _chinchilla(params: float) -> dict[str, Any]:
    return {"model": {"params": params}, "training.tokens": CHINCHILLA_TOKENS_PER_PARAM * params,
            "compute.parallelism": None}


def _flop_rate(ctx: Context, params: float | None) -> tuple[float, float] | None:
    """(achieved model FLOP/s after goodput, params) of the baseline, or of the largest probe that fits."""
    objective = ctx.base.objective
    t = m.time_s(ctx.base)
    if t and isinstance(objective, ObjectiveLayer):
        return objective.total_flops / t, objective.params
    if params is None:
        return None
    for fraction in PROBE_FRACTIONS:
        try:
            probe = ctx.compile(_chinchilla(params * fraction))
        except WkcError:
            continue
        tp = m.time_s(probe)
        if tp and isinstance(probe.objective, ObjectiveLayer):
            return probe.objective.total_flops / tp, params * fraction
    return None


def _smaller_model(ctx: Context) -> list[Variant]:
    """The model the GPU limit trains by the deadline at 20 tokens per parameter (Hoffmann et al.
    2022): C = R x T and C = 6 N D with D = 20 N give N = sqrt(R T / 120), R the achieved FLOP/s."""
    target = _w(ctx).target.time_to_train
    objective = ctx.base.objective
    params = objective.params if isinstance(objective, ObjectiveLayer) else None
    rate = _flop_rate(ctx, params)
    if rate is None or params is None:
        return []
    r, fits = rate
    n = min(math.sqrt(r * target / (6 * CHINCHILLA_TOKENS_PER_PARAM)), fits) if target else fits
    if target is not None and n < params:   # one correction for the scaling the estimate ignores
        try:
            t = m.time_s(ctx.compile(_chinchilla(n)))
        except WkcError:
            t = None
        if t and t > target:
            n *= math.sqrt(target / t) * 0.99
    if n >= params:
        return []
    what = f"by {format_duration(target)}" if target else "on the GPUs available"
    return [Variant(name="smaller model", lever="model", pins=_chinchilla(n),
                    change=f"a {format_count(n)}-parameter model on {format_count(20 * n)} tokens (20 per "
                           f"parameter, Chinchilla): what the GPU limit trains {what}")]


def levers(ctx: Context) -> list[Variant]:
    w = _w(ctx)
    base = ctx.base
    memory_binds = not base.feasible
    out = _precision(ctx) + accelerators(ctx, memory_binds)
    out += liquid_cooling(ctx, {})
    out += _schedule_and_tokens(ctx)
    out += _smaller_model(ctx)
    regrid = {"compute.parallelism.dp": None}
    out += hall_sized(ctx, regrid) + two_sites(ctx, regrid)
    # the deadline search runs again without the limits: the count it finds meets the target after
    # failures (the walk divides each count's time by its goodput), which a steady-state count need not
    what = ("as many GPUs as the deadline needs (no GPU limit)" if w.target.time_to_train else
            "the fewest whole nodes that hold the model (no GPU limit)")
    out += more_gpus(ctx, None, regrid, what)
    return out
