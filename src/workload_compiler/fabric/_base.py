"""Shared pieces of the fabric, storage and reliability results: a base model that carries its
assumptions and formula names beside the numbers, and input checks that raise `InputError`.

This area's package data (catalog/data/fabric_networks.yaml, storage_tiers.yaml,
reliability.yaml) is read through `catalog.loader.package_yaml`, the package's one YAML reader;
the arithmetic modules take plain values.

`assumptions` and `formulas` are excluded from `model_dump()`, so a dumped result holds exactly
the keys of the compiled document; the compile pass reads the two attributes and records them in
the document's `assumptions` list and `provenance` map (paths are full dotted paths such as
"storage.bytes_per_token").
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..provenance import Assumption


class Traced(BaseModel):
    """A result with its assumptions (field, value, why) and its derived values' formula names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    assumptions: list[Assumption] = Field(default_factory=list, exclude=True)
    formulas: dict[str, str] = Field(default_factory=dict, exclude=True)


def assume(field: str, value: Any, why: str, unit: str | None = None) -> Assumption:
    return Assumption(field=field, value=value, why=why, unit=unit)


def require_int(field: str, value: Any, minimum: int = 1) -> int:
    """An integer >= minimum (bools and non-integral floats are refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or int(value) != value or value < minimum:
        raise InputError(field, value, f"an integer >= {minimum}")
    return int(value)


def require_positive(field: str, value: Any, *, allow_zero: bool = False) -> float:
    """A finite number > 0 (or >= 0 with allow_zero)."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) \
        and (value >= 0 if allow_zero else value > 0)
    if not ok:
        raise InputError(field, value, "a finite number >= 0" if allow_zero else "a finite number > 0")
    return float(value)


def require_choice(field: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InputError(field, value, "one of " + ", ".join(allowed))
    return str(value)


def require_layout(tp: Any, pp: Any, dp: Any, cp: Any = 1, ep: Any = 1,
                   etp: Any = 1) -> tuple[int, int, int, int, int, int]:
    """(tp, pp, dp, cp, ep, etp) as integers >= 1, with ep x etp dividing tp x cp x dp: the expert
    splits re-partition the non-PP ranks of each stage (Megatron-Core MoE parallel folding)."""
    tp, pp, dp, cp, ep, etp = (require_int(f"compute.parallelism.{n}", v) for n, v in
                               (("tp", tp), ("pp", pp), ("dp", dp), ("cp", cp), ("ep", ep), ("etp", etp)))
    if (tp * cp * dp) % (ep * etp):
        raise InputError("compute.parallelism.ep", ep, f"ep x etp ({ep * etp}) must divide tp x cp x dp "
                         f"({tp * cp * dp}) (Megatron-Core MoE parallel folding)")
    return tp, pp, dp, cp, ep, etp
