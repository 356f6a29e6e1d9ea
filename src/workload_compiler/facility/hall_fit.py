"""Reverse mode, "watts to weights": how many units of each system a hall holds, and what binds.

For each system: units per rack from the hall's rack power limit and cooling (racks.units_per_rack);
then the largest N whose IT power (N units + the network, storage and management they need) fits
the hall's IT budget (facility power / PUE) and whose racks fit the floor. IT power and racks grow
with N, so N is found by bisection over the same functions the forward mode uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..catalog.schema import System
from ..errors import CatalogGap, InfeasibleError, InputError, canonical_id
from ..intake.limits import MAX_AREA, MAX_POWER, MAX_RACK_POWER, POWER, RACK_POWER
from ..units import Watts
from .data import FacilityData, facility_data
from .floor import racks_in_area
from .overheads import reference_equipment
from .power import Equipment, check_pue, default_pue, it_power
from .racks import RackFit, RackPlan, SystemUnit, plan_racks, units_per_rack

EquipmentFor = Callable[[SystemUnit, int], Sequence[Equipment]]


class Hall(BaseModel):
    """What a facility offers. `power_w` is facility power unless `power_basis` is 'it'."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    power_w: Watts = Field(le=MAX_POWER, description="'2MW', 2e6: facility power (or IT power, see "
                           f"power_basis); at most {POWER}")
    power_basis: Literal["facility", "it"] = "facility"
    rack_power_w: Watts = Field(le=MAX_RACK_POWER, description=f"electrical limit per rack, '40kW'; at most "
                                f"{RACK_POWER}")
    cooling: str
    floor_area_m2: float | None = Field(default=None, le=MAX_AREA, allow_inf_nan=False)  # > 0: fit_hall checks
    pue: float | None = Field(default=None, le=3, allow_inf_nan=False)   # >= 1: check_pue
    gpu: str | None = Field(default=None, description="only systems with this accelerator id")

    @field_validator("power_basis", "cooling", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        """'IT', 'DLC' as people write them (wkc fit, the workbench, the API alike)."""
        return canonical_id(value) if isinstance(value, str) else value


class HallFit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str
    name: str
    feasible: bool
    units: int = Field(description="placement units: nodes, or whole racks for rack-scale systems")
    nodes: int
    gpus: int
    racks: int
    compute_racks: int
    units_per_rack: int
    it_power_w: float
    facility_power_w: float
    pue: float
    rack_power_w: float
    floor_area_m2: float | None
    binding: str = Field(description="power | floor space | rack power | cooling ... (what stops N + 1)")
    detail: str
    notes: list[str] = Field(default_factory=list)


def _check_hall(hall: Hall, data: FacilityData) -> None:
    if not math.isfinite(hall.power_w) or hall.power_w <= 0:
        raise InputError("hall.power_w", hall.power_w, "a positive power such as 2MW")
    if not math.isfinite(hall.rack_power_w) or hall.rack_power_w <= 0:
        raise InputError("hall.rack_power_w", hall.rack_power_w, "a positive rack power limit such as 40kW")
    if hall.floor_area_m2 is not None and (not math.isfinite(hall.floor_area_m2) or hall.floor_area_m2 <= 0):
        raise InputError("hall.floor_area_m2", hall.floor_area_m2, "a positive area in m2, or leave it out")
    data.cooling_type(hall.cooling, "hall.cooling")
    if hall.pue is not None:
        check_pue(hall.pue, "hall.pue")


def fit_hall(
    hall: Hall,
    systems: Sequence[System | SystemUnit],
    *,
    data: FacilityData | None = None,
    equipment_for: EquipmentFor | None = None,
) -> list[HallFit]:
    """One HallFit per system (filtered by `hall.gpu`), feasible or not, in the order given."""
    data = data or facility_data()
    _check_hall(hall, data)
    fits = []
    for system in systems:
        if hall.gpu is not None and isinstance(system, System) and system.accelerator != hall.gpu:
            continue
        if isinstance(system, SystemUnit):
            unit = system
        else:
            try:
                unit = SystemUnit.from_system(system, data)
            except CatalogGap as gap:  # a catalog entry without published power: say so, go on
                fits.append(_unknown_power(system, gap))
                continue
        fits.append(_fit_one(hall, unit, data, equipment_for))
    return fits


def _unknown_power(system: System, gap: CatalogGap) -> HallFit:
    return HallFit(system=system.id, name=system.name, feasible=False, units=0, nodes=0, gpus=0, racks=0,
                   compute_racks=0, units_per_rack=0, it_power_w=0.0, facility_power_w=0.0, pue=0.0,
                   rack_power_w=0.0, floor_area_m2=None, binding="unknown power",
                   detail=gap.reason, notes=[])


def _default_equipment(data: FacilityData) -> EquipmentFor:
    def equipment(unit: SystemUnit, n: int) -> Sequence[Equipment]:
        return reference_equipment(gpus=n * unit.gpus, compute_ports=n * unit.compute_ports, data=data, units=n)

    return equipment


def _fit_one(hall: Hall, unit: SystemUnit, data: FacilityData, equipment_for: EquipmentFor | None) -> HallFit:
    ct = data.cooling_type(hall.cooling, "hall.cooling")
    pue = hall.pue if hall.pue is not None else default_pue(ct.id, data).pue
    budget_w = hall.power_w / pue if hall.power_basis == "facility" else hall.power_w
    rack = units_per_rack(
        unit, rack_power_limit_w=hall.rack_power_w, cooling=ct, usable_rack_units=data.floor.usable_rack_units
    )
    notes = [
        f"PUE {pue:g} ({'given' if hall.pue is not None else 'assumed for ' + ct.id}); IT budget "
        f"{budget_w / 1e6:.3f} MW",
        f"unit provisioned at {unit.power_w / 1e3:g} kW ({unit.power_basis})",
    ]
    if rack.units == 0:
        return _result(unit, 0, rack, None, 0.0, pue, rack.binding, rack.detail, hall, data, notes)
    equip = equipment_for or _default_equipment(data)
    max_racks = racks_in_area(hall.floor_area_m2, data.floor.m2_per_rack) if hall.floor_area_m2 else None

    def evaluate(n: int) -> tuple[float, RackPlan]:
        lines = equip(unit, n)
        plan = plan_racks(
            units=n,
            unit=unit,
            fit=rack,
            equipment=lines,
            rack_power_limit_w=hall.rack_power_w,
            air_per_rack_w=ct.air_per_rack_w,
            usable_rack_units=data.floor.usable_rack_units,
            network_rack_fill=data.floor.network_rack_fill,
        )
        return it_power(units=n, unit_power_w=unit.power_w, equipment=lines).it_power_w, plan

    def why_not(n: int) -> tuple[str, str] | None:
        try:
            it_w, plan = evaluate(n)
        except InfeasibleError as exc:   # no fabric connects n units (a fat tree's largest build)
            return exc.binding, f"{n} units: {exc.detail}"
        if it_w > budget_w:
            return "power", f"{n} units need {it_w / 1e6:.3f} MW IT > budget {budget_w / 1e6:.3f} MW"
        if max_racks is not None and plan.racks > max_racks:
            return (
                "floor space",
                f"{n} units need {plan.racks} racks > {max_racks} that fit in {hall.floor_area_m2:g} m2",
            )
        return None

    first = why_not(1)
    if first is not None:
        return _result(unit, 0, rack, None, 0.0, pue, first[0], f"infeasible: {first[1]}", hall, data, notes)
    lo, hi = 1, max(1, math.floor(budget_w / unit.power_w))  # hi + 1 units exceed the budget on compute alone
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if why_not(mid) is None else (lo, mid - 1)
    stop = why_not(lo + 1) or ("power", "")
    it_w, plan = evaluate(lo)
    notes.append(
        f"{rack.units} {'system' if unit.rack_scale else 'node'}(s) per rack ({rack.binding}: {rack.detail})"
    )
    return _result(unit, lo, rack, plan, it_w, pue, stop[0], stop[1], hall, data, notes)


def _result(
    unit: SystemUnit,
    n: int,
    rack: RackFit,
    plan: RackPlan | None,
    it_w: float,
    pue: float,
    binding: str,
    detail: str,
    hall: Hall,
    data: FacilityData,
    notes: list[str],
) -> HallFit:
    racks = plan.racks if plan else 0
    return HallFit(
        system=unit.id,
        name=unit.name,
        feasible=n > 0,
        units=n,
        nodes=n * unit.nodes,
        gpus=n * unit.gpus,
        racks=racks,
        compute_racks=plan.compute_racks if plan else 0,
        units_per_rack=rack.units,
        it_power_w=it_w,
        facility_power_w=it_w * pue,
        pue=pue,
        rack_power_w=plan.rack_power_w if plan else 0.0,
        floor_area_m2=racks * data.floor.m2_per_rack if plan else None,
        binding=binding,
        detail=detail,
        notes=notes,
    )
