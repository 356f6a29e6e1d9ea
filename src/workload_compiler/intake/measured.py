"""The `measured` block of any intake, and the one format of a measured value.

A measured value is a number someone observed on one machine, with the unit, the machine, the day
and the tool. The same entry is what `wkc profile --into` and `wkc calibrate` write, what a workload
sheet records for a field marked `measured`, and what this block holds:

    measured:
      calibration_dir: calibration/        # optional: `wkc calibrate` files (or $WKC_MEASURED_DIR)
      values:
        accelerator.hbm_bandwidth_bytes_per_s:
          value: 2.95e+12
          unit: B/s
          spread: 1.1e+10                   # optional: standard deviation over the repeats
          repeats: 20
          machine: {kind: accelerator, id: h100-sxm, name: "NVIDIA H100 80GB HBM3 (driver 550.54)"}
          date: 2026-05-01
          tool: wkc calibrate 0.1.0

The key is a measurable field (measure/fields.py lists them, with their unit, the kind of machine
each binds to and the assumption it replaces). Machine kinds: `accelerator` (a catalog accelerator
id), `node` (a catalog system id: the node type), `cpu` (the CPU model as the OS reports it). A
value is applied only to the machine it was measured on; the compile refuses it for any other
("do not fill missing fields with a benchmark from an unrelated machine", seed 003).

Machines match on one rule everywhere (this block, the workload sheet, calibration files): the
same kind, and the same id once case-folded (a catalog id through the catalog's aliases; a CPU
model as text with its whitespace collapsed). No patterns, no token overlap.

The workload sheet's first form of a machine (`{system: dgx-h100}`, `{accelerator: h100-sxm}`,
`{cpu: "..."}`, other keys such as hostname kept as the name) is read as an alias of
`{kind, id, name}`, and a value given with its unit as text (`420s`, `262.5/s`) is parsed by the
unit's kind, so sheets written before this format stay valid.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..units import parse_byte_rate, parse_bytes, parse_count, parse_duration, parse_rate
from .common import Strict

MachineKind = Literal["accelerator", "node", "cpu"]
MACHINE_KINDS: tuple[MachineKind, ...] = ("accelerator", "node", "cpu")
# The workload sheet's first machine form: which key names which kind.
_ALIAS_KIND: dict[str, MachineKind] = {"system": "node", "accelerator": "accelerator", "cpu": "cpu"}


def _machine_alias(data: Any) -> Any:
    """`{system: dgx-h100, hostname: n1}` -> `{kind: node, id: dgx-h100, name: "hostname n1"}`."""
    if not isinstance(data, dict) or "id" in data:
        return data
    named = [k for k in _ALIAS_KIND if data.get(k)]
    if not named:
        if isinstance(data.get("kind"), str) and data["kind"] not in MACHINE_KINDS:
            raise ValueError(f"machine.kind {data['kind']!r}: one of {', '.join(MACHINE_KINDS)}, with the id "
                             "of that machine, e.g. {kind: node, id: dgx-h100}")
        return data
    if len(named) > 1:
        raise ValueError(f"machine names {', '.join(named)}: a value is measured on one machine; give "
                         "{kind: accelerator|node|cpu, id: ...}")
    key = named[0]
    rest = {k: v for k, v in data.items() if k not in (key, "kind", "name") and v is not None}
    label = data.get("name") or (data.get("kind") if data.get("kind") not in MACHINE_KINDS else None)
    name = "; ".join([str(label)] * bool(label) + [f"{k} {v}" for k, v in rest.items()]) or None
    return {"kind": _ALIAS_KIND[key], "id": str(data[key]), "name": name}


def unit_parser(unit: str) -> Callable[[Any, str], float]:
    """How a value written with its unit (`420s`, `2.9TB/s`, `262.5/s`, `12`) is read, by the unit's kind."""
    if unit == "s":
        return parse_duration
    if unit == "B":
        return parse_bytes
    if unit == "B/s":
        return parse_byte_rate
    if unit.endswith("/s") and unit != "FLOP/s":
        return parse_rate
    return parse_count


def same_dimension(a: str, b: str) -> bool:
    """Two unit names of the same quantity: equal, or both a count of things per second
    (items/s, images/s, samples/s, 1/s) or both a plain number (1, count)."""
    def kind(u: str) -> str:
        if u in ("1", "count", ""):
            return "number"
        if u.endswith("/s") and u.split("/")[0] not in ("B", "FLOP", "bit", "kB", "MB", "GB"):
            return "per-second"
        return u
    return kind(a) == kind(b)


class MachineRef(Strict):
    """The machine a value was measured on."""

    kind: MachineKind = Field(description="accelerator (catalog accelerator id), node (catalog system id) "
                                          "or cpu (CPU model as the OS reports it)")
    id: str = Field(min_length=1, description="the id matched against the machine being sized")
    name: str | None = Field(default=None, description="what a person reads: model, cores, memory, driver")

    _alias = model_validator(mode="before")(_machine_alias)

    def describe(self) -> str:
        return f"{self.kind} {self.id}" + (f" ({self.name})" if self.name else "")

    def label(self) -> str:
        """The sheet's first name for `describe` (kept for its importers)."""
        return self.describe()


class MeasuredValue(Strict):
    """One measured number: value (SI, in `unit`), the machine, the day, the tool."""

    value: float = Field(description="the measured value in SI units (the median over repeats)")
    unit: str = Field(min_length=1, description="the SI unit of `value`, e.g. B/s, FLOP/s, s, 1")
    machine: MachineRef
    date: dt.date = Field(description="the day it was measured")
    tool: str = Field(min_length=1, description="what measured it, with its version")
    spread: float | None = Field(default=None, ge=0, description="standard deviation over the repeats, in `unit`")
    repeats: int | None = Field(default=None, ge=1)
    note: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _value_with_unit(cls, data: Any) -> Any:
        """A value written with its unit as text is read by the unit's kind ('420s' with unit s)."""
        if isinstance(data, dict) and isinstance(data.get("value"), str) and isinstance(data.get("unit"), str):
            return {**data, "value": unit_parser(data["unit"])(data["value"], "measured.value")}
        return data

    @field_validator("value")
    @classmethod
    def _finite(cls, v: float) -> float:
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("a measured value must be a finite number")
        return v

    def describe(self) -> str:
        """'<machine> - <tool>, <date>': what provenance names as the machine."""
        return f"{self.machine.describe()} - {self.tool}, {self.date.isoformat()}"


class MeasuredIntake(Strict):
    """Measurements to use instead of assumptions, each bound to the machine it was taken on."""

    values: dict[str, MeasuredValue] = Field(
        default_factory=dict, description="measurable field (see `wkc profile --help`, measure/fields.py) -> entry")
    calibration_dir: Path | None = Field(
        default=None, description="directory of `wkc calibrate` files; each applies to its accelerator only")


def cpu_key(model: str) -> str:
    """CPU models compare on case-folded, whitespace-collapsed text (exact otherwise: no patterns)."""
    return " ".join(model.casefold().split())


__all__ = ["MACHINE_KINDS", "MachineKind", "MachineRef", "MeasuredIntake", "MeasuredValue", "cpu_key",
           "same_dimension", "unit_parser"]
