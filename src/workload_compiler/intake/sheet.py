"""The workload sheet section of any intake (starter article, seed 003): which numbers are known,
which are still to measure, which are assumed (and why), which were measured (and on what).

    sheet:
      fields:                                  # dotted intake keys of this workload
        pipeline.decode_rate_per_core: {status: to_measure, why: depends on the host CPU and JPEG sizes}
        model.flops_per_sample: {status: known, note: "ResNet-50, He et al. 2016 Table 1"}
        pipeline.gpu_efficiency: {status: assumed, why: "a convnet at batch 256 in bf16"}
        pipeline.cpu_cores_per_gpu:
          measured: {value: 12, unit: count, machine: {system: dgx-h100}, date: 2026-01-10, tool: lscpu}
      items:                                   # rows the model does not compute
      - {section: input, item: source, value: "JPEG files in an object-store bucket", status: known}

"Do not fill missing fields with a benchmark from an unrelated machine": a `to_measure` field
stays open until a measurement from the same kind of machine as the one being sized is entered;
one from another kind of machine is refused (engagement/sheet.py checks the machine once the
sizing has chosen it).

`MeasuredEntry` has the shape of the `measured` intake block of issue 11 (intake/measured.py,
not yet in main): value, unit, machine, date, tool. Until that lands this is its minimal form.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from .common import Strict

SheetSection = Literal["input", "preparation", "computation", "outputs", "dependencies"]
FieldStatus = Literal["known", "to_measure", "assumed", "measured"]


class Machine(Strict):
    """The machine a measurement ran on. Extra keys (OS, library versions, ...) are kept, since
    the profiling tool records more than the kind check needs."""

    model_config = ConfigDict(extra="allow")

    kind: str | None = Field(default=None,
                             description="a free label; a catalog system or accelerator id is read as one")
    system: str | None = Field(default=None, description="catalog system id (node type), e.g. dgx-h100")
    accelerator: str | None = Field(default=None, description="catalog accelerator id, e.g. h100-sxm")
    cpu: str | None = Field(default=None, description="CPU model, e.g. Intel Xeon Platinum 8480C")
    cores: int | None = Field(default=None, ge=1)
    hostname: str | None = None

    def label(self) -> str:
        parts = [p for p in (self.kind, self.system, self.accelerator, self.cpu, self.hostname) if p]
        return " / ".join(dict.fromkeys(parts)) or "(unnamed machine)"


def _machine(value: Any) -> Any:
    return {"kind": value} if isinstance(value, str) else value


class MeasuredEntry(Strict):
    """One measured value: what goes into the intake key (a number in the key's units, or text
    with its unit as the YAML takes it, e.g. '310/s'), and where it came from."""

    value: float | str
    unit: str | None = Field(default=None, description="the unit the tool reported (shown beside the value)")
    machine: Machine
    date: dt.date | None = None
    tool: str | None = None

    _as_machine = field_validator("machine", mode="before")(_machine)


class SheetField(Strict):
    """The status of one intake key's number on the sheet."""

    status: FieldStatus | None = None
    why: str | None = Field(default=None, description="why it is assumed, or why it must be measured")
    note: str | None = Field(default=None, description="where a known number comes from")
    measured: MeasuredEntry | None = None

    @model_validator(mode="after")
    def _consistent(self) -> SheetField:
        if self.measured is not None:
            if self.status not in (None, "measured", "to_measure"):
                raise ValueError(f"status {self.status!r} with a measured value: use status measured")
            self.status = "measured"
        elif self.status == "measured":
            raise ValueError("status measured needs a measured entry: {value, unit, machine, date, tool}")
        if self.status is None:
            raise ValueError("give a status (known | to_measure | assumed) or a measured entry")
        if self.status == "assumed" and not self.why:
            raise ValueError("an assumed number needs a why")
        return self


class SheetItem(Strict):
    """A sheet row the model does not compute (input source, preparation steps, dependencies)."""

    section: SheetSection
    item: str = Field(min_length=1)
    value: float | str | None = None
    unit: str | None = None
    status: FieldStatus = "known"
    why: str | None = None
    measured: MeasuredEntry | None = None

    @model_validator(mode="after")
    def _consistent(self) -> SheetItem:
        if self.measured is not None:
            self.status = "measured"
        elif self.status == "measured":
            raise ValueError("status measured needs a measured entry: {value, unit, machine, date, tool}")
        if self.status == "to_measure" and self.value is not None:
            raise ValueError("a to_measure item has no value yet (do not fill it from another machine)")
        if self.status == "assumed" and not self.why:
            raise ValueError("an assumed item needs a why")
        return self


class SheetIntake(Strict):
    fields: dict[str, SheetField] = Field(default_factory=dict, description="dotted intake key -> status")
    items: list[SheetItem] = Field(default_factory=list)


__all__ = ["FieldStatus", "Machine", "MeasuredEntry", "SheetField", "SheetIntake", "SheetItem", "SheetSection"]
