"""One collision engine for every limit and archetype.

    attach(spec, workload, catalog)
      limits      every target and pinned limit the intake states (limits.py)
      variants    the archetype's levers (levers_training.py, levers_inference.py, levers_hpc.py):
                  a few dotted-key pins each, applied to the intake and compiled again through all
                  six layers and the cost layer (intake/pins.py, the same path as `--set`)
      alternatives  each variant's GPUs, time, power, $ and a check against every limit; ranked:
                  the cheapest that meets every target first
      collisions  what the baseline breaks, with the requirement and the limit in one unit
                  ("30 d needs 2,048 h100-sxm GPUs; compute.gpus pins 256")

Alternatives are listed whenever the baseline breaks a limit or does not fit at all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from ..catalog.loader import Catalog
from ..errors import WkcError
from ..intake.infrastructure import InfrastructureIntake
from ..intake.load import parse_workload
from ..intake.pins import apply_pins
from ..spine.result import SystemSpec
from . import measures as m
from .hall import describe, hall_fit
from .limits import Limit, limits_of, show, targets_text
from .result import Alternative, Collision

CoreCompile = Callable[[BaseModel, Catalog], SystemSpec]


@dataclass(frozen=True, kw_only=True)
class Variant:
    name: str
    lever: str
    change: str
    pins: dict[str, Any]
    sites: int = 1


@dataclass(frozen=True, kw_only=True)
class GpuLimit:
    value: int
    key: str
    name: str
    label: str       # "compute.gpus pins 256", "the hall (600 kW facility, 40 kW a rack, air) holds 296"


def dump_intake(w: BaseModel) -> dict[str, Any]:
    """The intake as a mapping that validates back to `w` (what `SystemSpec.intake` holds)."""
    data: dict[str, Any] = w.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["kind"] = getattr(w, "kind", data.get("kind"))
    return data


@dataclass(kw_only=True)
class Context:
    """What the levers read: the intake, the baseline, its limits, and a compiler of variants."""

    w: BaseModel
    base: SystemSpec
    catalog: Catalog
    core: CoreCompile
    limits: list[Limit]
    data: dict[str, Any] = field(default_factory=dict)
    _cache: dict[str, SystemSpec | str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.data = dump_intake(self.w)

    def compile(self, pins: dict[str, Any]) -> SystemSpec:
        """The intake with `pins` applied, compiled through every layer (raises our errors)."""
        key = json.dumps(pins, sort_keys=True, default=str)
        hit = self._cache.get(key)
        if isinstance(hit, SystemSpec):
            return hit
        if isinstance(hit, str):
            raise WkcError(hit)
        try:
            w = parse_workload(apply_pins(self.data, list(pins.items()), type(self.w)))
            spec = self.core(w, self.catalog)
        except (WkcError, ValidationError) as exc:
            self._cache[key] = _reason(exc)
            raise WkcError(_reason(exc)) from None
        spec.intake = dump_intake(w)
        spec.pins = dict(pins)
        self._cache[key] = spec
        return spec

    def limit(self, name: str) -> Limit | None:
        return next((x for x in self.limits if x.name == name), None)

    @property
    def accelerator(self) -> str | None:
        acc = m.compute(self.base).get("accelerator") or getattr(getattr(self.w, "compute", None), "accelerator", None)
        return None if acc is None else self.catalog.accelerator(str(acc)).id

    @property
    def system(self) -> str | None:
        sys_id = m.compute(self.base).get("system") or getattr(getattr(self.w, "compute", None), "system", None)
        if sys_id is not None:
            return str(sys_id)
        acc = self.accelerator
        return None if acc is None else self.catalog.default_system(acc).id

    def hall_gpus(self) -> int | None:
        if not isinstance(self.w, InfrastructureIntake) or self.w.facility.power is None or self.system is None:
            return None
        try:
            fit = hall_fit(self.w, self.system, self.catalog)
        except WkcError:
            return None
        return None if fit is None else fit.gpus

    def gpu_limit(self) -> GpuLimit | None:
        """The tightest stated limit on the GPU count: a pinned count, a cap, or what the hall holds."""
        out: list[GpuLimit] = []
        compute = getattr(self.w, "compute", None)
        if compute is not None and compute.gpus is not None:
            out.append(GpuLimit(value=compute.gpus, key="compute.gpus", name="gpu count",
                                label=f"compute.gpus pins {compute.gpus:,}"))
        if compute is not None and compute.max_gpus is not None:
            out.append(GpuLimit(value=compute.max_gpus, key="compute.max_gpus", name="gpu cap",
                                label=f"compute.max_gpus caps at {compute.max_gpus:,}"))
        hall = self.hall_gpus()
        if hall is not None and isinstance(self.w, InfrastructureIntake):
            out.append(GpuLimit(value=hall, key="facility.power", name="hall",
                                label=f"{describe(self.w.facility)} holds {hall:,}"))
        return min(out, key=lambda g: g.value) if out else None


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    return str(exc)


def _feasible(spec: SystemSpec) -> bool:
    """A system was sized. HPC marks a missed target infeasible too; here the checks say that."""
    if spec.kind == "hpc":
        return spec.compute is not None and not str(spec.binding_constraint or "").startswith("memory")
    return bool(spec.feasible)


def summarize(ctx: Context, v: Variant, spec: SystemSpec) -> Alternative:
    c = m.compute(spec)
    checks = [limit.check(spec, v.sites) for limit in ctx.limits]
    ok = _feasible(spec)
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
    return summarize(ctx, v, spec)


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


def _core(kind: str) -> CoreCompile:
    def core(w: BaseModel, catalog: Catalog) -> SystemSpec:
        from ..compile import compile_core
        return compile_core(w, catalog)
    return core


def attach(spec: SystemSpec, w: BaseModel, catalog: Catalog) -> None:
    """Set `spec.collisions` and `spec.alternatives` (ranked) for any archetype."""
    ctx = Context(w=w, base=spec, catalog=catalog, core=_core(spec.kind), limits=limits_of(w, spec))
    breaches = [x for x in (limit.check(spec) for limit in ctx.limits) if x.met is False]
    if _feasible(spec) and not breaches and spec.feasible:
        return
    alternatives = rank([evaluate(ctx, v) for v in _levers(ctx)])
    _right_size(ctx, alternatives)
    spec.alternatives = alternatives
    spec.collisions = collisions(ctx, alternatives)
    pinned = [c for c in spec.collisions if c.kind == "pin" and c.unit is not None and c.key not in (
        "compute.gpus", "compute.max_gpus")]
    if spec.feasible and any(b.kind == "pin" for b in breaches) and pinned:
        # the sized system exceeds a limit the intake pins (the hall): not feasible within the pins
        spec.feasible, spec.binding_constraint = False, f"{pinned[0].constraint}: {pinned[0].detail}"


def _right_size(ctx: Context, alternatives: list[Alternative]) -> None:
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
    have = m.gpus(base) if _feasible(base) else None
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
