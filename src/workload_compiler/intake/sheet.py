"""The workload sheet section of any intake (starter article, seed 003): which numbers are known,
which are still to measure, which are assumed (and why), which were measured (and on what).

    sheet:
      fields:                                  # dotted intake keys of this workload
        pipeline.gpu_samples_per_s: {status: to_measure, why: "measure on the node: depends on the kernels"}
        model.flops_per_sample: {status: known, note: "ResNet-50, He et al. 2016 Table 1"}
        pipeline.gpu_efficiency: {status: assumed, why: "a convnet at batch 256 in bf16"}
        reliability.restart_time:              # a measured value: the one format (intake/measured.py)
          measured: {value: 420, unit: s, machine: {kind: node, id: dgx-h100}, date: 2026-01-10, tool: drill}
        pipeline.decode_rate_per_core:         # or the key of an entry of the intake's `measured` block,
          measured: host.parse_records_per_s_per_core.image   # which `wkc profile --into` writes
      items:                                   # rows the model does not compute
      - {section: input, item: source, value: "JPEG files in an object-store bucket", status: known}

"Do not fill missing fields with a benchmark from an unrelated machine": a `to_measure` field
stays open until a measurement from the same kind of machine as the one being sized is entered;
one from another kind of machine is refused (engagement/measurement.py checks the kind before the
compile and the machine once the sizing has chosen it, by the one rule of measure/machine_match.py).

A measured value has the one format of `intake/measured.py` (`MeasuredValue`: value, unit, machine
{kind, id, name}, date, tool, spread, repeats, note); the sheet's first machine form
(`{system: dgx-h100}`) is read as its alias. `Machine` and `MeasuredEntry` stay importable as
the names of `MachineRef` and `MeasuredValue`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from .common import Strict
from .measured import MachineRef, MeasuredValue

SheetSection = Literal["input", "preparation", "computation", "outputs", "dependencies"]
FieldStatus = Literal["known", "to_measure", "assumed", "measured"]

Machine = MachineRef            # the sheet's earlier names, kept for importers
MeasuredEntry = MeasuredValue


class SheetField(Strict):
    """The status of one intake key's number on the sheet."""

    status: FieldStatus | None = None
    why: str | None = Field(default=None, description="why it is assumed, or why it must be measured")
    note: str | None = Field(default=None, description="where a known number comes from")
    measured: MeasuredValue | None = Field(default=None, description="the measured value (intake/measured.py)")
    measured_key: str | None = Field(
        default=None, min_length=1, description="the key of an entry of the intake's `measured.values` (what "
                                                "`wkc profile --into` writes); `measured: KEY` is read as this")

    @model_validator(mode="before")
    @classmethod
    def _reference(cls, data: Any) -> Any:
        """`measured: host.read_bytes_per_s` names an entry of the `measured` block."""
        if isinstance(data, dict) and isinstance(data.get("measured"), str):
            return {**{k: v for k, v in data.items() if k != "measured"}, "measured_key": data["measured"]}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> SheetField:
        if self.measured is not None and self.measured_key is not None:
            raise ValueError("a measured value or the key of one in measured.values, not both")
        if self.measured is not None or self.measured_key is not None:
            if self.status not in (None, "measured", "to_measure"):
                raise ValueError(f"status {self.status!r} with a measured value: use status measured")
            self.status = "measured"
        elif self.status == "measured":
            raise ValueError("status measured needs a measured entry: {value, unit, machine: {kind, id}, date, tool}")
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
    measured: MeasuredValue | None = None

    @model_validator(mode="after")
    def _consistent(self) -> SheetItem:
        if self.measured is not None:
            self.status = "measured"
        elif self.status == "measured":
            raise ValueError("status measured needs a measured entry: {value, unit, machine: {kind, id}, date, tool}")
        if self.status == "to_measure" and self.value is not None:
            raise ValueError("a to_measure item has no value yet (do not fill it from another machine)")
        if self.status == "assumed" and not self.why:
            raise ValueError("an assumed item needs a why")
        return self


class SheetIntake(Strict):
    fields: dict[str, SheetField] = Field(default_factory=dict, description="dotted intake key -> status")
    items: list[SheetItem] = Field(default_factory=list)


__all__ = ["FieldStatus", "Machine", "MeasuredEntry", "SheetField", "SheetIntake", "SheetItem", "SheetSection"]
