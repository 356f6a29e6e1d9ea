"""One collision engine for every limit and archetype.

    attach(spec, workload, catalog)
      limits      every target and pinned limit the intake states (limits.py)
      variants    the archetype's levers (levers_training.py, levers_inference.py, levers_hpc.py):
                  a few dotted-key pins each, applied to the intake and compiled again through all
                  six layers and the cost layer (intake/pins.py, the same path as `--set`)
      alternatives  each variant's GPUs, time, power, $ and a check against every limit; ranked:
                  the cheapest that meets every target first
      collisions  what the baseline breaks, with the requirement and the limit in one unit
                  ("30 d needs 2,048 h100-sxm GPUs; compute.gpus pins 256"; collide.py)

Alternatives are listed whenever the baseline breaks a limit or does not fit at all.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel

from ..catalog.loader import Catalog
from ..errors import WkcError
from ..spine.result import SystemSpec
from . import measures as m
from .collide import collisions, right_size
from .context import Context, Variant, feasible
from .limits import limits_of
from .result import Alternative


def summarize(ctx: Context, v: Variant, spec: SystemSpec) -> Alternative:
    c = m.compute(spec)
    checks = [limit.check(spec, v.sites) for limit in ctx.limits]
    ok = feasible(spec)
    targets = [x for x in checks if x.kind == "target"]
    pins = [x for x in checks if x.kind == "pin"]
    time_check = next((x for x in targets if x.name in ("deadline", "time to solution")), None)
    slo = [x for x in targets if x.name.startswith(("ttft", "tpot"))]
    cost = spec.cost
    per_hour = spec.kind == "inference"
    t = m.time_s(spec) if ok else None
    alt = Alternative(
        name=v.name, change=v.change, feasible=ok, lever=v.lever, pins=v.pins, sites=v.sites,
        accelerator=c.get("accelerator"), system=c.get("system"), gpus=m.gpus(spec) if ok else None,
        time_to_train_s=t if spec.kind == "training" else None,
        time_to_solution_s=t if spec.kind == "hpc" else None, time_s=t,
        it_power_w=m.facility(spec, "it_power_w") if ok else None,
        facility_power_w=m.facility(spec, "facility_power_w") if ok else None,
        checks=checks, binding=spec.binding_constraint,
        meets_targets=ok and all(x.met for x in targets),
        meets_pins=ok and all(x.met is not False for x in pins),
        meets_target=(time_check.met if time_check else (all(bool(x.met) for x in slo) if slo else None)))
    if per_hour and ok:
        alt.replicas = _int(m.inference(spec, "replicas"))
        alt.gpus_per_replica = _int(m.inference(spec, "gpus_per_replica"))
        for key in ("request_rate_per_s", "output_tokens_per_s", "ttft_s", "tpot_s"):
            setattr(alt, key, m.inference(spec, key))
    if cost is not None:
        alt.cost_usd = cost.cost_usd
        alt.cost_usd_per_hour = cost.usd_per_hour
        alt.usd_per_million_tokens = (cost.usd_per_million_served_tokens if per_hour
                                      else cost.usd_per_million_training_tokens)
        alt.energy_wh = cost.energy_wh_per_year if per_hour else cost.energy_wh
        missing = cost.missing.get("usd_per_hour")
        alt.cost_missing = missing
    return alt


def _int(v: float | None) -> int | None:
    return None if v is None else int(v)


def evaluate(ctx: Context, v: Variant) -> Alternative:
    try:
        spec = ctx.compile(v.pins)
    except WkcError as exc:
        return Alternative(name=v.name, change=v.change, feasible=False, lever=v.lever, pins=v.pins, sites=v.sites,
                           binding=str(exc), meets_targets=False, meets_pins=False)
    alt = summarize(ctx, v, spec)
    dropped = ctx.dropped_for(v.pins)
    if dropped:
        alt.notes.append("measured on the baseline's machine, not applied here: " + ", ".join(dropped))
    return alt


def _price(a: Alternative) -> float | None:
    return a.cost_usd_per_hour if a.time_s is None and a.cost_usd is None else a.cost_usd


def rank(alternatives: list[Alternative]) -> list[Alternative]:
    """Feasible first; meeting every target first; then the cheapest ($ per run, or per fleet-hour);
    then those that keep more of the pinned limits; then the fastest."""
    def key(a: Alternative) -> tuple[Any, ...]:
        price = _price(a)
        broken = sum(1 for c in a.checks if c.kind == "pin" and c.met is False)
        return (not a.feasible, not a.meets_targets, price is None, price if price is not None else math.inf,
                broken, a.time_s if a.time_s is not None else math.inf)
    ordered = sorted(alternatives, key=key)
    for i, a in enumerate(ordered, 1):
        a.rank = i
    return ordered


def _levers(ctx: Context) -> list[Variant]:
    kind = ctx.base.kind
    if kind == "training":
        from .levers_training import levers
    elif kind == "inference":
        from .levers_inference import levers
    else:
        from .levers_hpc import levers
    return levers(ctx)


def _core(w: BaseModel, catalog: Catalog) -> SystemSpec:
    from ..compile import compile_core  # the engine runs inside compile_workload
    return compile_core(w, catalog)


def attach(spec: SystemSpec, w: BaseModel, catalog: Catalog) -> None:
    """Set `spec.collisions` and `spec.alternatives` (ranked) for any archetype."""
    ctx = Context(w=w, base=spec, catalog=catalog, core=_core, limits=limits_of(w, spec))
    breaches = [x for x in (limit.check(spec) for limit in ctx.limits) if x.met is False]
    if feasible(spec) and not breaches and spec.feasible:
        return
    alternatives = rank([evaluate(ctx, v) for v in _levers(ctx)])
    right_size(ctx, alternatives)
    spec.alternatives = alternatives
    spec.collisions = collisions(ctx, alternatives)
    pinned = [c for c in spec.collisions if c.kind == "pin" and c.unit is not None and c.key not in (
        "compute.gpus", "compute.max_gpus")]
    if spec.feasible and any(b.kind == "pin" for b in breaches) and pinned:
        # the sized system exceeds a limit the intake pins (the hall): not feasible within the pins
        spec.feasible, spec.binding_constraint = False, f"{pinned[0].constraint}: {pinned[0].detail}"


