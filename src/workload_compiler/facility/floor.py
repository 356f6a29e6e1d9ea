"""Floor space: white space = racks x m2 per rack (its share of aisles and clearances); gross area
adds support space (power rooms, cooling plant) by a multiplier.

Both numbers are ASSUMPTIONS (~35 sq ft = 3.25 m2 per rack and x1.9 from an open tool, not verified;
reference/infrastructure.md §6.6). The reverse question - how many racks fit in a hall - is
floor(area / m2 per rack).
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from ..quantity import quantity


class FloorResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    racks: int = quantity("count", "racks on the floor")
    m2_per_rack: float = quantity("m2", "white space per rack, aisles included")
    floor_area_m2: float = quantity("m2", "white space for the racks")
    support_space_multiplier: float = quantity("1", "gross area / white space (power, cooling, support rooms)")
    gross_area_m2: float = quantity("m2", "building area with support space")


def _check(m2_per_rack: float) -> None:
    if not math.isfinite(m2_per_rack) or m2_per_rack <= 0:
        raise InputError("facility.m2_per_rack", m2_per_rack, "a positive area per rack in m2")


def floor_area(racks: int, m2_per_rack: float, support_space_multiplier: float = 1.0) -> FloorResult:
    """White space = racks x m2/rack; gross = white space x support multiplier."""
    _check(m2_per_rack)
    if racks < 0:
        raise InputError("facility.racks", racks, "a non-negative rack count")
    white = racks * m2_per_rack
    return FloorResult(
        racks=racks,
        m2_per_rack=m2_per_rack,
        floor_area_m2=white,
        support_space_multiplier=support_space_multiplier,
        gross_area_m2=white * support_space_multiplier,
    )


def racks_in_area(area_m2: float, m2_per_rack: float) -> int:
    """Racks a white space of `area_m2` holds: floor(area / m2 per rack)."""
    _check(m2_per_rack)
    if not math.isfinite(area_m2) or area_m2 <= 0:
        raise InputError("hall.floor_area_m2", area_m2, "a positive floor area in m2")
    return math.floor(area_m2 / m2_per_rack + 1e-9)
