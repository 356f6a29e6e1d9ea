"""Layer 6, the facility interface: power chain, racks, cooling, floor space, and the reverse
("watts to weights") fit of systems into a hall. Pure functions over plain values; the package
defaults (with sources) come from `catalog/data/facility_*.yaml` through `facility_data()`.
"""

from __future__ import annotations

from .cooling import (
    CoolingResult,
    air_flow_m3_per_s,
    cdu_count,
    size_cooling,
    units_coolable,
    water_flow_l_per_min,
)
from .data import FacilityData, facility_data
from .floor import FloorResult, floor_area, racks_in_area
from .hall_fit import Hall, HallFit, fit_hall
from .layer import FacilityBreakdown, FacilityLayer, size_facility
from .overheads import FatTree, bill_from_counts, fat_tree, reference_equipment, storage_racks
from .power import (
    Equipment,
    PowerBreakdown,
    default_pue,
    device_equipment,
    facility_power_w,
    it_budget_w,
    it_power,
)
from .racks import RackFit, RackPlan, SystemUnit, plan_racks, units_per_rack

__all__ = [
    "CoolingResult",
    "Equipment",
    "FacilityBreakdown",
    "FacilityData",
    "FacilityLayer",
    "FatTree",
    "FloorResult",
    "Hall",
    "HallFit",
    "PowerBreakdown",
    "RackFit",
    "RackPlan",
    "SystemUnit",
    "air_flow_m3_per_s",
    "bill_from_counts",
    "cdu_count",
    "default_pue",
    "device_equipment",
    "facility_data",
    "facility_power_w",
    "fat_tree",
    "fit_hall",
    "floor_area",
    "it_budget_w",
    "it_power",
    "plan_racks",
    "racks_in_area",
    "reference_equipment",
    "size_cooling",
    "size_facility",
    "storage_racks",
    "units_coolable",
    "units_per_rack",
    "water_flow_l_per_min",
]
