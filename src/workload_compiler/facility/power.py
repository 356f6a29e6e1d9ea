"""Power chain: IT load from the bill of equipment, facility power from PUE.

    IT power       = units x unit max power + sum(count x device power)   (network, storage, mgmt)
    facility power = IT power x PUE                      (PUE = total facility / IT; DOE, Uptime)

Provisioning basis: every device at its published maximum (a DGX at its 10.2 kW max, a QM9700 at
1.72 kW with active cables). Where only a "typical, passive cables" figure exists, the device is
counted at typical plus the optics its ports feed, and the line says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from ..quantity import info, quantity
from .data import FacilityData, NetworkDevice, PueDefault, Transceiver

Role = Literal["network", "storage", "management"]


class Equipment(BaseModel):
    """One line of the non-compute bill: `count` identical devices (or whole racks)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = info("the device")
    role: Role = info("what the device is for")
    count: int = quantity("count", "devices", ge=0)
    power_w_each: float = quantity("W", "provisioned power of one device, optics included", ge=0)
    rack_units_each: int = quantity("U", "rack units of one device", ge=0)
    whole_rack: bool = info("each item is a full rack of its own (storage)", default=False)
    basis: str = info("max | typical + optics | assumed")
    optics_count: int = quantity("count", "transceivers in these devices", default=0, ge=0)
    optics_w_included: float = quantity("W", "optics power inside power_w_each x count", default=0.0, ge=0)
    source: str = info("where the power figure comes from", default="")

    @property
    def power_w(self) -> float:
        return self.count * self.power_w_each


class PowerBreakdown(BaseModel):
    """IT power by role; `lines` is the equipment bill the totals came from."""

    model_config = ConfigDict(extra="forbid")

    compute_units: int = quantity("count", "compute systems")
    compute_unit_power_w: float = quantity("W", "provisioned power of one compute system")
    compute_w: float = quantity("W", "compute systems")
    network_w: float = quantity("W", "network switches and appliances")
    storage_w: float = quantity("W", "storage systems")
    management_w: float = quantity("W", "management servers")
    optics_w: float = quantity("W", "transceiver power inside network_w (not added again)")
    it_power_w: float = quantity("W", "all IT power")
    lines: list[Equipment] = info("the equipment bill the totals come from")


def device_equipment(
    device: NetworkDevice,
    count: int,
    role: Role,
    *,
    transceivers: int = 0,
    transceiver: Transceiver | None = None,
) -> Equipment:
    """`count` devices with `transceivers` optics in total, at the provisioning basis.

    max known and covering optics -> max (optics shown as included);
    max known, optics extra       -> max + optics;
    only typical known            -> typical (passive cables) + optics.
    """
    if count < 0 or transceivers < 0:
        raise InputError(f"{device.id}.count", (count, transceivers), "non-negative counts")
    optic_w = transceiver.power_w if transceiver is not None else 0.0
    per_device_optics_w = optic_w * transceivers / count if count else 0.0
    optics_note = " + optics" if transceivers else ""
    if device.max_power_w is not None and device.max_includes_optics:
        each = device.max_power_w
        basis = "max (includes port power for optics)" if transceivers else "max"
    elif device.max_power_w is not None:
        each, basis = device.max_power_w + per_device_optics_w, f"max{optics_note}"
    elif device.typical_power_w is not None:
        each = device.typical_power_w + per_device_optics_w
        basis = f"typical (passive cables){optics_note}; max not published"
    else:  # pragma: no cover - the data model requires one of the two
        raise InputError(f"{device.id}.power", None, "a max or typical power in the facility data")
    # In every branch the optics are inside `each`; optics_w_included reports their share.
    return Equipment(
        name=device.name,
        role=role,
        count=count,
        power_w_each=each,
        rack_units_each=device.rack_units,
        basis=basis,
        optics_count=transceivers,
        optics_w_included=optic_w * transceivers,
        source=device.source,
    )


def it_power(*, units: int, unit_power_w: float, equipment: Sequence[Equipment] = ()) -> PowerBreakdown:
    """IT load = compute units at max power + every equipment line, split by role."""
    if isinstance(units, bool) or not isinstance(units, int) or units < 0:
        raise InputError("compute.nodes", units, "a non-negative whole number of nodes")
    if not math.isfinite(unit_power_w) or unit_power_w <= 0:
        raise InputError("system.node_max_power_w", unit_power_w, "a positive, finite power in W")
    by_role = {"network": 0.0, "storage": 0.0, "management": 0.0}
    for line in equipment:
        by_role[line.role] += line.power_w
    compute_w = units * unit_power_w
    return PowerBreakdown(
        compute_units=units,
        compute_unit_power_w=unit_power_w,
        compute_w=compute_w,
        network_w=by_role["network"],
        storage_w=by_role["storage"],
        management_w=by_role["management"],
        optics_w=sum(line.optics_w_included for line in equipment),
        it_power_w=compute_w + sum(by_role.values()),
        lines=list(equipment),
    )


def check_pue(pue: float, field: str = "facility.pue") -> float:
    if not math.isfinite(pue) or pue < 1.0 or pue > 3.0:
        raise InputError(field, pue, "a PUE between 1.0 and 3.0 (facility power / IT power)")
    return pue


def facility_power_w(it_power_w: float, pue: float) -> float:
    """Facility power = IT power x PUE."""
    return it_power_w * check_pue(pue)


def it_budget_w(facility_w: float, pue: float) -> float:
    """Reverse of the chain: IT power a facility feed can carry = facility power / PUE."""
    return facility_w / check_pue(pue)


def default_pue(cooling_id: str, data: FacilityData) -> PueDefault:
    """The assumed PUE for a hall cooling type, with its source (an assumption, never a given)."""
    if cooling_id not in data.pue_by_cooling:
        raise InputError("facility.cooling", cooling_id, f"one of {', '.join(sorted(data.pue_by_cooling))}")
    return data.pue_by_cooling[cooling_id]
