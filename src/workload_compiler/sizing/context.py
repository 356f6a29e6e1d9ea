"""What the levers and the engine share: the variant (a few dotted-key pins), the context a lever
reads (the intake, the baseline, its limits, the GPU limit that binds) and the compiler of variants
(the intake with the pins applied, through the one compile path; each result cached)."""

from __future__ import annotations

import json
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
from .limits import Limit

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
    dropped: dict[str, list[str]] = field(default_factory=dict)

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
            data, dropped = other_machines(apply_pins(self.data, list(pins.items()), type(self.w)), pins,
                                           self.accelerator, self.system)
            w = parse_workload(data)
            spec = self.core(w, self.catalog)
        except (WkcError, ValidationError) as exc:
            self._cache[key] = _reason(exc)
            raise WkcError(_reason(exc)) from None
        spec.intake = dump_intake(w)
        spec.pins = dict(pins)
        self.dropped[key] = dropped
        self._cache[key] = spec
        return spec

    def changes(self, pins: dict[str, Any]) -> bool:
        """Whether `pins` change the intake at all: a variant that does not is the baseline again."""
        try:
            # self.data validates back to self.w (dump_intake), so the parsed intake is the one to compare
            return bool(parse_workload(apply_pins(self.data, list(pins.items()), type(self.w))) != self.w)
        except (WkcError, ValidationError):
            return True

    def dropped_for(self, pins: dict[str, Any]) -> list[str]:
        """Measured values a variant on another machine left out (they belong to the baseline's)."""
        return self.dropped.get(json.dumps(pins, sort_keys=True, default=str), [])

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


def other_machines(data: dict[str, Any], pins: dict[str, Any], accelerator: str | None,
                   system: str | None) -> tuple[dict[str, Any], list[str]]:
    """A variant on another accelerator or node type than the baseline's (`accelerator`, `system`)
    keeps only the measured values of its own machine, in the `measured` block and on the sheet: a
    measurement is never applied to a machine it was not taken on; the baseline's stay with the
    baseline (the one rule: engagement/measurement.py `leave_other_machines`)."""
    from ..engagement.measurement import leave_other_machines
    return leave_other_machines(data, pins, accelerator, system)


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    return str(exc)


def feasible(spec: SystemSpec) -> bool:
    """A system was sized. HPC marks a missed target infeasible too; here the checks say that."""
    if spec.kind == "hpc":
        return spec.compute is not None and not str(spec.binding_constraint or "").startswith("memory")
    return bool(spec.feasible)


