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
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from .common import Strict

MachineKind = Literal["accelerator", "node", "cpu"]


class MachineRef(Strict):
    """The machine a value was measured on."""

    kind: MachineKind = Field(description="accelerator (catalog accelerator id), node (catalog system id) "
                                          "or cpu (CPU model as the OS reports it)")
    id: str = Field(min_length=1, description="the id matched against the machine being sized")
    name: str | None = Field(default=None, description="what a person reads: model, cores, memory, driver")

    def describe(self) -> str:
        return f"{self.kind} {self.id}" + (f" ({self.name})" if self.name else "")


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


__all__ = ["MachineKind", "MachineRef", "MeasuredIntake", "MeasuredValue"]
