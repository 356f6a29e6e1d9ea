"""Heat to reject, liquid vs air share, coolant and air flow, CDUs, and the per-rack cooling check.

All IT power becomes heat: heat rejected = IT power. Liquid-cooled systems put a fraction f of
their power into the coolant (cold plates); everything else (network, storage, the rest of the
node) goes to room air.

    coolant flow  Q = P / (rho c_p dT)        water, dT = 10 K -> 1.43 L/min per kW
    OCP design    1.5 L/min per kW            (OCP OAI Liquid Cooling Guidelines v1.0 §3.2)
    air flow      V = P / (rho_air c_p dT)    c_p = 1,005 J/(kg K)
    CDUs          ceil(liquid heat / CDU capacity) + N+1 spare units
(reference/infrastructure.md §6.4-6.5.)
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..quantity import info, quantity
from .data import CoolingType, FacilityData, Fluid

M3_PER_S_TO_CFM = 2118.880003  # 1 m3/s = 35.3147 ft3/s x 60 s/min


def water_flow_l_per_min(heat_w: float, fluid: Fluid, delta_t_k: float | None = None) -> float:
    """Q = P / (rho c_p dT), in L/min."""
    dt = fluid.delta_t_k if delta_t_k is None else delta_t_k
    if dt <= 0:
        raise InputError("facility.coolant_delta_t_k", dt, "a positive temperature rise in K")
    return heat_w / (fluid.density_kg_per_m3 * fluid.specific_heat_j_per_kg_k * dt) * 1000.0 * 60.0


def air_flow_m3_per_s(heat_w: float, air: Fluid, delta_t_k: float | None = None) -> float:
    """V = P / (rho_air c_p dT), in m3/s."""
    dt = air.delta_t_k if delta_t_k is None else delta_t_k
    if dt <= 0:
        raise InputError("facility.air_delta_t_k", dt, "a positive temperature rise in K")
    return heat_w / (air.density_kg_per_m3 * air.specific_heat_j_per_kg_k * dt)


def cdu_count(liquid_heat_w: float, capacity_w: float, spare_units: int) -> int:
    """ceil(liquid heat / capacity) + spares; none when no heat goes to liquid."""
    if liquid_heat_w <= 0:
        return 0
    return math.ceil(liquid_heat_w / capacity_w) + spare_units


class RackCoolingLimit(BaseModel):
    """How much of one kind of unit a rack may hold before its cooling runs out."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    units: int = Field(description="0 = not even one unit can be cooled here")
    binding: str
    detail: str


def units_coolable(unit_power_w: float, liquid_fraction: float, cooling: CoolingType) -> RackCoolingLimit:
    """Most units of `unit_power_w` (liquid share f) one rack of this cooling type can reject.

    air/rdhx: n P <= air limit, and a liquid-cooled unit (f > 0) cannot go there at all;
    dlc:      n P f <= liquid limit and n P (1 - f) <= residual air limit;
    immersion: n P <= tank limit (all heat to the fluid).
    """
    kw = unit_power_w / 1e3
    if cooling.all_heat_to_liquid:
        n = math.floor(cooling.liquid_per_rack_w / unit_power_w)
        return RackCoolingLimit(
            units=n,
            binding="cooling (immersion)",
            detail=f"{cooling.id} rejects <= {cooling.liquid_per_rack_w / 1e3:g} kW per tank "
            f"vs {kw:g} kW per unit",
        )
    if liquid_fraction > 0 and cooling.liquid_per_rack_w <= 0:
        return RackCoolingLimit(
            units=0,
            binding="cooling type",
            detail=f"needs direct liquid cooling ({liquid_fraction:.0%} of {kw:g} kW to "
            f"liquid); {cooling.id} cooling supplies no liquid and rejects <= "
            f"{cooling.air_per_rack_w / 1e3:g} kW per rack by air",
        )
    limits: list[tuple[float, str, str]] = []
    air_w = unit_power_w * (1.0 - liquid_fraction)
    if air_w > 0:
        limits.append(
            (
                cooling.air_per_rack_w / air_w,
                "cooling (air)",
                f"{cooling.id} rejects <= {cooling.air_per_rack_w / 1e3:g} kW per rack by air vs "
                f"{air_w / 1e3:g} kW of air heat per unit",
            )
        )
    liquid_w = unit_power_w * liquid_fraction
    if liquid_w > 0:
        limits.append(
            (
                cooling.liquid_per_rack_w / liquid_w,
                "cooling (liquid)",
                f"{cooling.id} rejects <= {cooling.liquid_per_rack_w / 1e3:g} kW per rack to liquid vs "
                f"{liquid_w / 1e3:g} kW per unit",
            )
        )
    ratio, binding, detail = min(limits)
    return RackCoolingLimit(units=math.floor(ratio + 1e-9), binding=binding, detail=detail)


class CoolingResult(BaseModel):
    """The cooling the facility must provide (all heat in W, flows in L/min and m3/s)."""

    model_config = ConfigDict(extra="forbid")

    type: str = info("cooling type: air | rdhx | dlc | immersion")
    heat_rejected_w: float = quantity("W", "heat to reject (= IT power)")
    liquid_heat_w: float = quantity("W", "heat to liquid")
    air_heat_w: float = quantity("W", "heat to air")
    liquid_share: float = quantity("fraction", "liquid heat / total heat")
    node_liquid_fraction: float = quantity("fraction", "share of a compute unit's power captured by liquid")
    coolant: str = info("the coolant")
    coolant_delta_t_k: float = quantity("K", "coolant temperature rise")
    coolant_flow_l_per_min: float = quantity("L/min", "coolant flow for the liquid heat")
    coolant_flow_ocp_l_per_min: float | None = quantity("L/min", "coolant flow at the OCP 1.5 L/min/kW rule")
    air_delta_t_k: float = quantity("K", "air temperature rise")
    air_flow_m3_per_s: float = quantity("m3/s", "air flow for the air heat")
    air_flow_cfm: float = quantity("cfm", "the same air flow in cubic feet per minute")
    cdus: int = quantity("count", "coolant distribution units, spares included")
    cdu_model: str | None = info("the CDU model")
    cdu_capacity_w: float | None = quantity("W", "heat one CDU removes")
    cdu_spare_units: int = quantity("count", "spare CDUs (N+k)")


def size_cooling(
    *,
    it_power_w: float,
    compute_w: float,
    node_liquid_fraction: float,
    cooling: CoolingType,
    data: FacilityData,
    cdu_id: str | None = None,
) -> CoolingResult:
    """Split the heat, size coolant and air flow and the CDUs for one hall."""
    f = 1.0 if cooling.all_heat_to_liquid else node_liquid_fraction
    if not 0.0 <= f <= 1.0:
        raise InputError("facility.liquid_fraction", f, "a fraction between 0 and 1")
    liquid_w = compute_w * f if (cooling.liquid_per_rack_w > 0) else 0.0
    air_w = it_power_w - liquid_w
    cdu = data.cdu(cdu_id) if liquid_w > 0 else None
    ocp = data.coolant.ocp_l_per_min_per_kw
    air_m3_s = air_flow_m3_per_s(air_w, data.air)
    return CoolingResult(
        type=cooling.id,
        heat_rejected_w=it_power_w,
        liquid_heat_w=liquid_w,
        air_heat_w=air_w,
        liquid_share=liquid_w / it_power_w if it_power_w > 0 else 0.0,
        node_liquid_fraction=f,
        coolant=data.coolant.name or "water",
        coolant_delta_t_k=data.coolant.delta_t_k,
        coolant_flow_l_per_min=water_flow_l_per_min(liquid_w, data.coolant),
        coolant_flow_ocp_l_per_min=liquid_w / 1e3 * ocp if ocp is not None else None,
        air_delta_t_k=data.air.delta_t_k,
        air_flow_m3_per_s=air_m3_s,
        air_flow_cfm=air_m3_s * M3_PER_S_TO_CFM,
        cdus=cdu_count(liquid_w, cdu.capacity_w, data.cdus.redundancy_extra_units) if cdu else 0,
        cdu_model=cdu.id if cdu else None,
        cdu_capacity_w=cdu.capacity_w if cdu else None,
        cdu_spare_units=data.cdus.redundancy_extra_units if cdu else 0,
    )
