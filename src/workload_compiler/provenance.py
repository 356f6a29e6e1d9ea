"""Where every number came from: given, assumed (with why), derived (with its formula), measured.

The compiled document keeps plain numbers in its layers; this module keeps their sources beside
them: a `provenance` map from a value's dotted path to its `Provenance`, and the list of
`Assumption`s that the report shows as "assumptions requiring validation".
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict


class Source(StrEnum):
    GIVEN = "given"
    ASSUMED = "assumed"
    DERIVED = "derived"
    MEASURED = "measured"


class Provenance(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Source
    formula: str | None = None
    why: str | None = None
    machine: str | None = None


class Assumption(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    field: str
    value: Any
    why: str
    # the value's unit where `field` is not a result field that declares one (storage.write_bytes_per_s)
    unit: str | None = None


class Trace:
    """Collects provenance while the passes run; every pass records what it sets."""

    def __init__(self) -> None:
        self.provenance: dict[str, Provenance] = {}
        self.assumptions: list[Assumption] = []

    def given(self, path: str, value: Any) -> Any:
        self.provenance[path] = Provenance(source=Source.GIVEN)
        return value

    def assumed(self, path: str, value: Any, why: str, unit: str | None = None) -> Any:
        self.provenance[path] = Provenance(source=Source.ASSUMED, why=why)
        self.assumptions = [a for a in self.assumptions if a.field != path]
        self.assumptions.append(Assumption(field=path, value=value, why=why, unit=unit))
        return value

    def derived(self, path: str, value: Any, formula: str) -> Any:
        self.provenance[path] = Provenance(source=Source.DERIVED, formula=formula)
        return value

    def measured(self, path: str, value: Any, machine: str, formula: str | None = None,
                 why: str | None = None) -> Any:
        """A value measured on `machine`, or (with `formula`) computed from rates measured there."""
        self.provenance[path] = Provenance(source=Source.MEASURED, machine=machine, formula=formula, why=why)
        return value
