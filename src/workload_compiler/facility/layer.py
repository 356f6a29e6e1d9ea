"""Layer 6, forward: from N compute units to IT and facility power, racks, cooling and floor space.

`size_facility` composes the pure pieces (power, racks, cooling, floor) and records where every
number came from: given (pinned), assumed (a default with its source), or derived (formula named).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..errors import Infeasible, InputError
from ..provenance import Assumption, Provenance, Trace
from ..quantity import info, quantity
from ..spine.doc import DictView
from .cooling import CoolingResult, size_cooling
from .data import CoolingType, FacilityData, facility_data
from .floor import FloorResult, floor_area
from .overheads import reference_equipment
from .power import Equipment, PowerBreakdown, default_pue, facility_power_w, it_power
from .racks import RackFit, RackPlan, SystemUnit, plan_racks, units_per_rack


class FacilityBreakdown(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: SystemUnit
    units: int = quantity("count", "compute systems")
    gpus: int = quantity("count", "GPUs")
    power: PowerBreakdown
    racks: RackPlan
    cooling: CoolingResult
    floor: FloorResult


class FacilityLayer(DictView, BaseModel):
    """The facility interface. The keys named by the issue hold plain SI numbers."""

    model_config = ConfigDict(extra="forbid")

    it_power_w: float = quantity("W", "IT power: compute, network, storage, management", headline=True)
    facility_power_w: float = quantity("W", "IT power x PUE", headline=True)
    pue: float = quantity("1", "power usage effectiveness", headline=True)
    racks: int = quantity("count", "racks", headline=True)
    rack_power_w: float = quantity("W", "power of one full compute rack", headline=True)
    cooling: str = info("hall cooling type: air | rdhx | dlc | immersion", headline=True)
    coolant_flow_l_per_min: float = quantity("L/min", "coolant flow to the liquid-cooled racks", headline=True)
    cdus: int = quantity("count", "coolant distribution units")
    floor_area_m2: float = quantity("m2", "white space for the racks", headline=True)
    breakdown: FacilityBreakdown
    notes: list[str] = Field(default_factory=list)
    assumptions: list[Assumption] = Field(default_factory=list, exclude=True)
    provenance: dict[str, Provenance] = Field(default_factory=dict, exclude=True)


def resolve_cooling(unit: SystemUnit, cooling: str | None, data: FacilityData, t: Trace) -> CoolingType:
    """Pinned cooling, else direct liquid for liquid-cooled systems and air for the rest."""
    if cooling is not None:
        ct = data.cooling_type(cooling, "facility.cooling")
        t.given("facility.cooling", ct.id)
        return ct
    ct = data.cooling_types["dlc" if unit.liquid_fraction > 0 else "air"]
    t.assumed(
        "facility.cooling",
        ct.id,
        f"{unit.name} is {'liquid' if unit.liquid_fraction else 'air'}-cooled; {ct.name}. {ct.source}",
    )
    return ct


def _rack_limit(ct: CoolingType, pinned: float | None, t: Trace) -> float:
    if pinned is not None:
        t.given("facility.rack_power_limit_w", pinned)
        return pinned
    limit = ct.air_per_rack_w + ct.liquid_per_rack_w
    t.assumed(
        "facility.rack_power_limit_w",
        limit,
        f"no rack power limit given: what {ct.id} cooling can reject per rack. {ct.source}",
        unit="W",
    )
    return limit


def _fit(
    unit: SystemUnit, ct: CoolingType, limit_w: float, pinned: int | None, data: FacilityData, t: Trace
) -> RackFit:
    fit = units_per_rack(
        unit, rack_power_limit_w=limit_w, cooling=ct, usable_rack_units=data.floor.usable_rack_units
    )
    if fit.units == 0:
        raise Infeasible(fit.binding, fit.detail)
    if pinned is None:
        t.derived("facility.units_per_rack", fit.units, f"min over limits ({fit.binding}: {fit.detail})")
        return fit
    if pinned < 1 or pinned > fit.units:
        raise Infeasible(
            fit.binding, f"{pinned} units per rack pinned, at most {fit.units} fit ({fit.detail})"
        )
    t.given("facility.units_per_rack", pinned)
    return RackFit(units=pinned, binding="pinned", detail=f"{pinned} per rack as pinned")


def size_facility(
    unit: SystemUnit,
    units: int,
    *,
    equipment: Sequence[Equipment] | None = None,
    cooling: str | None = None,
    pue: float | None = None,
    rack_power_limit_w: float | None = None,
    units_per_rack_pin: int | None = None,
    cdu: str | None = None,
    data: FacilityData | None = None,
) -> FacilityLayer:
    """IT power, facility power, racks, cooling, CDUs and floor area for `units` of `unit`."""
    data = data or facility_data()
    if isinstance(units, bool) or not isinstance(units, int) or units < 1:
        raise InputError("compute.nodes", units, "a whole number of nodes (or rack-scale systems) >= 1")
    t = Trace()
    ct = resolve_cooling(unit, cooling, data, t)
    limit_w = _rack_limit(ct, rack_power_limit_w, t)
    fit = _fit(unit, ct, limit_w, units_per_rack_pin, data, t)
    gpus = units * unit.gpus
    if equipment is None:
        equipment = reference_equipment(gpus=gpus, compute_ports=units * unit.compute_ports, data=data, units=units)
        t.assumed(
            "facility.breakdown.power.lines",
            "reference bill",
            f"{data.reference_overheads.source}; compute fabric as a 64-port fat tree; "
            f"storage: {data.storage.source}",
        )
    else:
        t.given("facility.breakdown.power.lines", "from the fabric and storage layers")
    power = it_power(units=units, unit_power_w=unit.power_w, equipment=equipment)
    t.derived("facility.it_power_w", power.it_power_w, "it_power = units x unit max power + equipment")
    if pue is None:
        pd = default_pue(ct.id, data)
        pue_v = t.assumed("facility.pue", pd.pue, pd.source)
    else:
        pue_v = t.given("facility.pue", pue)
    fac_w = t.derived(
        "facility.facility_power_w", facility_power_w(power.it_power_w, pue_v), "IT power x PUE"
    )
    plan = plan_racks(
        units=units,
        unit=unit,
        fit=fit,
        equipment=equipment,
        rack_power_limit_w=limit_w,
        air_per_rack_w=ct.air_per_rack_w,
        usable_rack_units=data.floor.usable_rack_units,
        network_rack_fill=data.floor.network_rack_fill,
    )
    t.derived("facility.racks", plan.racks, "compute + network/management + storage racks")
    t.assumed(
        "facility.breakdown.racks.network_racks",
        plan.network_racks,
        f"{data.floor.usable_rack_units}U racks filled to {data.floor.network_rack_fill:.0%} "
        f"(cabling room); {data.floor.source}",
    )
    if unit.liquid_fraction > 0 and ct.liquid_per_rack_w > 0 and not ct.all_heat_to_liquid:
        t.assumed(
            "facility.breakdown.cooling.node_liquid_fraction",
            unit.liquid_fraction,
            data.liquid_capture.source,
        )
    cool = size_cooling(
        it_power_w=power.it_power_w,
        compute_w=power.compute_w,
        node_liquid_fraction=unit.liquid_fraction,
        cooling=ct,
        data=data,
        cdu_id=cdu,
    )
    t.derived(
        "facility.coolant_flow_l_per_min",
        cool.coolant_flow_l_per_min,
        f"Q = P_liquid / (rho c_p dT), water, dT = {cool.coolant_delta_t_k:g} K",
    )
    if cool.cdus:
        cdu_model = data.cdu(cool.cdu_model)
        t.assumed(
            "facility.cdus",
            cool.cdus,
            f"ceil(liquid heat / {cdu_model.capacity_w / 1e3:g} kW) + "
            f"{cool.cdu_spare_units} spare; {cdu_model.source}; {data.cdus.redundancy_source}",
        )
    floor = floor_area(plan.racks, data.floor.m2_per_rack, data.floor.support_space_multiplier)
    t.assumed(
        "facility.floor_area_m2",
        floor.floor_area_m2,
        f"racks x {data.floor.m2_per_rack:g} m2 white space per rack; {data.floor.source}",
    )
    return FacilityLayer(
        it_power_w=power.it_power_w,
        facility_power_w=fac_w,
        pue=pue_v,
        racks=plan.racks,
        rack_power_w=plan.rack_power_w,
        cooling=ct.id,
        coolant_flow_l_per_min=cool.coolant_flow_l_per_min,
        cdus=cool.cdus,
        floor_area_m2=floor.floor_area_m2,
        breakdown=FacilityBreakdown(
            system=unit, units=units, gpus=gpus, power=power, racks=plan, cooling=cool, floor=floor
        ),
        notes=facility_notes(unit, ct, plan, power),
        assumptions=t.assumptions,
        provenance=t.provenance,
    )


def facility_notes(unit: SystemUnit, ct: CoolingType, plan: RackPlan, power: PowerBreakdown) -> list[str]:
    """What an architect should check: containment, immersion qualification, unverified inputs."""
    notes = [
        f"{unit.name}: provisioned at {unit.power_w / 1e3:g} kW per "
        f"{'rack' if unit.rack_scale else 'node'} ({unit.power_basis})."
    ]
    econ = ct.economic_air_per_rack_w
    if econ is not None and plan.rack_power_w > econ:
        notes.append(
            f"Air-cooled racks at {plan.rack_power_w / 1e3:.1f} kW exceed ~{econ / 1e3:g} kW, beyond which "
            "air cooling loses economic sense: plan hot/cold-aisle containment or rear-door HX."
        )
    if ct.all_heat_to_liquid:
        notes.append(
            "Immersion needs immersion-qualified hardware: confirm with the OEM before relying on it."
        )
    if power.optics_w:
        notes.append(
            f"Switch optics {power.optics_w / 1e3:.1f} kW are inside the network power (not added twice)."
        )
    return notes
