"""Racks: how many compute units a rack holds, and the racks for network, management and storage.

A *unit* is what is placed: one node (DGX H100, 8U, 10.2 kW) or, for a rack-scale system, the whole
rack (GB200 NVL72: 72 GPUs, one system per rack). Units per rack = the smallest of
  floor(rack power limit / unit power), what the cooling can reject (cooling.units_coolable),
  floor(usable rack units / unit height);
rack-scale systems are one per rack. Non-compute gear fills racks by height at a fill factor
(room for cabling), and by power at the rack limit; storage comes as whole racks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..catalog.schema import System
from ..errors import CatalogGap, InputError
from .cooling import units_coolable
from .data import CoolingType, FacilityData
from .power import Equipment


class SystemUnit(BaseModel):
    """The placement unit of a system, with the power it is provisioned at."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    gpus: int = Field(gt=0, description="GPUs per unit")
    nodes: int = Field(gt=0, description="catalog nodes per unit (compute trays for NVL72)")
    power_w: float = Field(gt=0, description="provisioned max power of one unit")
    power_basis: str
    rack_units: int | None = Field(default=None, gt=0)
    rack_scale: bool = False
    liquid_fraction: float = Field(ge=0, le=1, description="share of the unit's power to liquid")
    compute_ports: int = Field(ge=0, description="compute-fabric NIC ports per unit")

    @classmethod
    def from_system(
        cls, system: System, data: FacilityData, liquid_fraction: float | None = None
    ) -> SystemUnit:
        """Node systems: node max power. Rack-scale systems: top of the published rack-power range
        (facility provisioning takes the highest published figure, as it takes a DGX at its max)."""
        liquid = system.cooling in ("liquid", "hybrid")
        f = (
            (data.liquid_capture.default_fraction if liquid else 0.0)
            if liquid_fraction is None
            else liquid_fraction
        )
        if system.rack_power_w is not None:
            rng = system.rack_power_w_range
            power = rng[1] if rng is not None else system.rack_power_w
            nodes = system.nodes_per_scale_up_domain
            basis = "rack power, top of the published range" if rng is not None else "rack power"
            return cls(
                id=system.id,
                name=system.name,
                gpus=system.gpus_per_node * nodes,
                nodes=nodes,
                power_w=power,
                power_basis=basis,
                rack_units=None,
                rack_scale=True,
                liquid_fraction=f,
                compute_ports=system.scale_out_nics_per_node * nodes,
            )
        if system.node_max_power_w is None:
            raise CatalogGap(
                [f"systems.{system.id}.node_max_power_w"],
                "facility power (IT power, racks, cooling)",
                field=f"systems.{system.id}.node_max_power_w",
            )
        return cls(
            id=system.id,
            name=system.name,
            gpus=system.gpus_per_node,
            nodes=1,
            power_w=system.node_max_power_w,
            power_basis="node max power",
            rack_units=system.rack_units,
            rack_scale=False,
            liquid_fraction=f,
            compute_ports=system.scale_out_nics_per_node,
        )


class RackFit(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    units: int
    binding: str
    detail: str


def _kw(w: float) -> str:
    return f"{w / 1e3:g} kW"


def units_per_rack(
    unit: SystemUnit, *, rack_power_limit_w: float, cooling: CoolingType, usable_rack_units: int
) -> RackFit:
    """Units one rack holds, and which limit binds; units = 0 says why none fits."""
    if not math.isfinite(rack_power_limit_w) or rack_power_limit_w <= 0:
        raise InputError("facility.rack_power_w", rack_power_limit_w, "a positive rack power limit in W")
    cool = units_coolable(unit.power_w, unit.liquid_fraction, cooling)
    if unit.power_w > rack_power_limit_w:
        also = f"; and {cool.detail}" if cool.units == 0 else ""
        return RackFit(
            units=0,
            binding="rack power",
            detail=f"infeasible: rack limit {_kw(rack_power_limit_w)} < "
            f"{'rack' if unit.rack_scale else 'node'} {_kw(unit.power_w)}{also}",
        )
    if cool.units == 0:
        return RackFit(units=0, binding=cool.binding, detail=f"infeasible: {cool.detail}")
    fits: list[tuple[int, str, str]] = []  # on a tie the first listed limit is reported as binding
    if unit.rack_scale:
        fits.append((1, "rack-scale system", "one rack-scale system per rack"))
    elif unit.rack_units is not None:
        fits.append(
            (
                usable_rack_units // unit.rack_units,
                "rack units",
                f"{usable_rack_units}U usable / {unit.rack_units}U per node",
            )
        )
    fits.append(
        (
            math.floor(rack_power_limit_w / unit.power_w + 1e-9),
            "rack power",
            f"rack limit {_kw(rack_power_limit_w)} / unit {_kw(unit.power_w)}",
        )
    )
    fits.append((cool.units, cool.binding, cool.detail))
    n, binding, detail = min(fits, key=lambda t: t[0])
    if n == 0:
        return RackFit(units=0, binding=binding, detail=f"infeasible: {detail}")
    return RackFit(units=n, binding=binding, detail=detail)


class RackPlan(BaseModel):
    """Racks by purpose; `rack_power_w` is a full compute rack, the design figure per rack."""

    model_config = ConfigDict(extra="forbid")

    units_per_rack: int
    units_per_rack_binding: str
    compute_racks: int
    network_racks: int
    storage_racks: int
    racks: int
    rack_power_w: float
    network_rack_power_w: float = Field(description="mean power of a network/management rack")
    network_rack_units: int
    max_rack_power_w: float


def plan_racks(
    *,
    units: int,
    unit: SystemUnit,
    fit: RackFit,
    equipment: Sequence[Equipment],
    rack_power_limit_w: float,
    air_per_rack_w: float,
    usable_rack_units: int,
    network_rack_fill: float,
) -> RackPlan:
    """Compute racks = ceil(units / units per rack); network racks by height (fill factor) and by
    power (air-cooled gear: min of rack limit and the air limit); storage racks counted as given."""
    if fit.units <= 0:
        raise InputError("facility.units_per_rack", fit.units, f"at least one unit per rack ({fit.detail})")
    compute_racks = math.ceil(units / fit.units)
    gear = [e for e in equipment if not e.whole_rack]
    gear_ru = sum(e.count * e.rack_units_each for e in gear)
    gear_w = sum(e.power_w for e in gear)
    per_rack_w = min(rack_power_limit_w, air_per_rack_w) if air_per_rack_w > 0 else rack_power_limit_w
    network_racks = (
        max(math.ceil(gear_ru / (usable_rack_units * network_rack_fill)), math.ceil(gear_w / per_rack_w))
        if gear_ru or gear_w
        else 0
    )
    storage = [e for e in equipment if e.whole_rack]
    # a storage rack above the rack limit is split over as many racks as the limit needs
    storage_racks = sum(e.count * math.ceil(e.power_w_each / rack_power_limit_w - 1e-9) for e in storage)
    rack_w = min(units, fit.units) * unit.power_w
    candidates = [rack_w] + [min(e.power_w_each, rack_power_limit_w) for e in storage if e.count]
    if network_racks:
        candidates.append(gear_w / network_racks)
    return RackPlan(
        units_per_rack=fit.units,
        units_per_rack_binding=fit.binding,
        compute_racks=compute_racks,
        network_racks=network_racks,
        storage_racks=storage_racks,
        racks=compute_racks + network_racks + storage_racks,
        rack_power_w=rack_w,
        network_rack_power_w=gear_w / network_racks if network_racks else 0.0,
        network_rack_units=gear_ru,
        max_rack_power_w=max(candidates),
    )
