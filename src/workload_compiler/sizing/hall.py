"""How many GPUs of a system a pinned hall holds (`facility.power`, rack power, cooling, floor), for
every archetype: the training GPU count, the inference fleet and the HPC job are capped by it."""

from __future__ import annotations

from ..catalog.loader import Catalog
from ..facility import Hall, HallFit, fit_hall
from ..intake.infrastructure import FacilityIntake, InfrastructureIntake

# A hall pinned without a per-rack limit: the cooling type's own density limit applies.
UNBOUNDED_RACK_W = 1e9


def hall_of(f: FacilityIntake) -> Hall | None:
    if f.power is None:
        return None
    return Hall(power_w=f.power, power_basis=f.power_basis, rack_power_w=f.rack_power or UNBOUNDED_RACK_W,
                cooling=f.cooling or "air", floor_area_m2=f.floor_area_m2, pue=f.pue)


def hall_fit(intake: InfrastructureIntake, system_id: str, catalog: Catalog) -> HallFit | None:
    """The hall fit of one system, or None when no hall is pinned. The network gear is billed as the
    compiled facility layer bills it (the fabric this intake pins), so the count fits that layer."""
    from ..spine.infrastructure import hall_equipment
    hall = hall_of(intake.facility)
    if hall is None:
        return None
    system = catalog.system(system_id)
    return fit_hall(hall, [system], equipment_for=hall_equipment(system, catalog, intake))[0]


def describe(f: FacilityIntake) -> str:
    """'the hall (600 kW facility, 40 kW a rack, air)'."""
    from ..units import format_power
    parts = [f"{format_power(f.power or 0.0)} {f.power_basis}"]
    if f.rack_power is not None:
        parts.append(f"{format_power(f.rack_power)} a rack")
    parts.append(f.cooling or "air")
    if f.floor_area_m2 is not None:
        parts.append(f"{f.floor_area_m2:g} m2")
    return f"the hall ({', '.join(parts)})"
