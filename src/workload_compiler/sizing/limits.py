"""The limits an intake states — targets (deadline, SLO, load, budget) and pinned infrastructure
(GPU count or cap, replica cap, the hall's power, rack power, cooling and floor) — and how a
compiled spec is checked against each. Every limit is read from the intake key that states it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from ..intake.hpc import HpcWorkload
from ..intake.inference import InferenceWorkload
from ..intake.infrastructure import InfrastructureIntake
from ..intake.training import TrainingWorkload
from ..spine.result import SystemSpec
from ..units import format_count, format_duration, format_power
from . import measures as m
from .result import Check

Sense = Literal["max", "min", "equal"]


@dataclass(frozen=True, kw_only=True)
class Limit:
    name: str
    key: str
    kind: Literal["target", "pin"]
    unit: str
    value: float | str
    measure: Callable[[SystemSpec], Any]
    sense: Sense = "max"
    per_site: bool = False

    def met(self, value: Any, sites: int = 1) -> bool | None:
        if value is None:
            return None
        if self.sense == "equal":
            return bool(value == self.value)
        v = float(value) / (sites if self.per_site else 1)
        limit = float(self.value)
        return v <= limit * (1 + 1e-9) if self.sense == "max" else v >= limit * (1 - 1e-9)

    def check(self, spec: SystemSpec, sites: int = 1) -> Check:
        value = self.measure(spec)
        shown = value if value is None or isinstance(value, str) or not self.per_site else float(value) / sites
        return Check(name=self.name, key=self.key, kind=self.kind, unit=self.unit, limit=self.value,
                     value=shown, met=self.met(value, sites))

    def text(self) -> str:
        return show(self.unit, self.value)


def show(unit: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    v = float(value)
    return {"s": format_duration(v), "W": format_power(v), "count": f"{v:,.0f}", "USD": f"${format_count(v)}",
            "USD/h": f"${v:,.2f}/h", "requests/s": f"{v:,.3g}/s", "m2": f"{v:,.0f} m2"}.get(unit, f"{v:g}")


def _facility(key: str) -> Callable[[SystemSpec], Any]:
    return lambda spec: m.facility(spec, key)


def _inference(key: str) -> Callable[[SystemSpec], Any]:
    return lambda spec: m.inference(spec, key)


def _infrastructure(w: InfrastructureIntake) -> list[Limit]:
    f = w.facility
    out = []
    if f.power is not None:
        key = "it_power_w" if f.power_basis == "it" else "facility_power_w"
        out.append(Limit(name="facility power", key="facility.power", kind="pin", unit="W", value=f.power,
                         measure=_facility(key), per_site=True))
    if f.rack_power is not None:
        out.append(Limit(name="rack power", key="facility.rack_power", kind="pin", unit="W", value=f.rack_power,
                         measure=_facility("rack_power_w")))
    if f.cooling is not None:
        out.append(Limit(name="cooling", key="facility.cooling", kind="pin", unit="type", value=f.cooling,
                         measure=_facility("cooling"), sense="equal"))
    if f.floor_area_m2 is not None:
        out.append(Limit(name="floor space", key="facility.floor_area_m2", kind="pin", unit="m2",
                         value=f.floor_area_m2, measure=_facility("floor_area_m2"), per_site=True))
    return out


def _gpu_pins(gpus: int | None, cap: int | None) -> list[Limit]:
    out = []
    if gpus is not None:
        out.append(Limit(name="gpu count", key="compute.gpus", kind="pin", unit="count", value=gpus,
                         measure=m.gpus))
    if cap is not None:
        out.append(Limit(name="gpu cap", key="compute.max_gpus", kind="pin", unit="count", value=cap,
                         measure=m.gpus))
    return out


def _budget(w: BaseModel, per_hour: bool) -> list[Limit]:
    cost = getattr(w, "cost", None)
    if cost is None:
        return []
    if per_hour and cost.budget_usd_per_hour is not None:
        return [Limit(name="budget", key="cost.budget_usd_per_hour", kind="target", unit="USD/h",
                      value=cost.budget_usd_per_hour, measure=m.cost_hour)]
    if not per_hour and cost.budget_usd is not None:
        return [Limit(name="budget", key="cost.budget_usd", kind="target", unit="USD", value=cost.budget_usd,
                      measure=m.cost_run)]
    return []


def training_limits(w: TrainingWorkload) -> list[Limit]:
    out = []
    if w.target.time_to_train is not None:
        out.append(Limit(name="deadline", key="target.time_to_train", kind="target", unit="s",
                         value=w.target.time_to_train, measure=m.time_s))
    return out + _budget(w, False) + _gpu_pins(w.compute.gpus, w.compute.max_gpus) + _infrastructure(w)


def inference_limits(w: InferenceWorkload) -> list[Limit]:
    s = w.serving
    out = []
    for name, target in (("ttft", s.ttft), ("tpot", s.tpot)):
        if target is not None:
            pct, value = target.binding()
            out.append(Limit(name=f"{name} {pct}", key=f"serving.{name}.{pct}", kind="target", unit="s", value=value,
                             measure=_inference(f"{name}_s")))
    if s.request_rate is not None:
        out.append(Limit(name="request rate", key="serving.request_rate", kind="target", unit="requests/s",
                         value=s.request_rate, measure=_inference("request_rate_per_s"), sense="min"))
    out += _budget(w, True) + _gpu_pins(w.compute.gpus, w.compute.max_gpus)
    if s.max_replicas is not None:
        out.append(Limit(name="replica cap", key="serving.max_replicas", kind="pin", unit="count",
                         value=s.max_replicas, measure=_inference("replicas")))
    return out + _infrastructure(w)


def hpc_limits(w: HpcWorkload, base: SystemSpec) -> list[Limit]:
    out = []
    objective = base.objective if isinstance(base.objective, dict) else {}
    step, steps = objective.get("time_per_step_target_s"), objective.get("steps")
    if step is not None and steps:
        out.append(Limit(name="time to solution", key="target", kind="target", unit="s",
                         value=float(step) * float(steps), measure=m.time_s))
    return out + _budget(w, False) + _gpu_pins(w.compute.gpus, w.compute.max_gpus) + _infrastructure(w)


def limits_of(w: BaseModel, base: SystemSpec) -> list[Limit]:
    if isinstance(w, TrainingWorkload):
        return training_limits(w)
    if isinstance(w, InferenceWorkload):
        return inference_limits(w)
    if isinstance(w, HpcWorkload):
        return hpc_limits(w, base)
    return []


def targets_text(limits: list[Limit]) -> str:
    """'30.0 d', '20/s at TTFT p99 <= 2.00 s, TPOT p99 <= 50.00 ms': the targets a requirement is for."""
    rate = next((x.text() for x in limits if x.name == "request rate"), None)
    slo = [f"{x.name.split()[0].upper()} {x.name.split()[1]} <= {x.text()}" for x in limits
           if x.name.startswith(("ttft", "tpot"))]
    times = [x.text() for x in limits if x.name in ("deadline", "time to solution")]
    if rate or slo:
        return (f"{rate} at " if rate else "") + ", ".join(slo) if slo else str(rate)
    return ", ".join(times)
