"""The workload sheet (starter article, seed 003): input source and size, preparation,
computation, outputs and dependencies, each number `known`, `to_measure`, `assumed` (with why),
`measured` (with the machine) or `derived` (with its formula).

The rows come from the compiled document (a table per archetype, below) and from the intake's
`sheet.items`; the status of a row comes from the intake's `sheet.fields`, else from whether the
user gave the key, else from the provenance the passes recorded. A measurement is refused unless
it ran on the kind of machine being sized ("do not fill missing fields with a benchmark from an
unrelated machine").
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..catalog.loader import Catalog
from ..errors import InputError
from ..intake.measured import MeasuredValue
from ..intake.pins import intake_keys
from ..intake.sheet import SheetIntake
from ..quantity import Unit
from ..spine.doc import Doc
from .measurement import ARTICLE_RULE, measured_on, sized_machine
from .view import get_path, section_dict

RowStatus = Literal["known", "to_measure", "assumed", "measured", "derived"]


class SheetRow(Doc):
    section: str
    item: str
    key: str | None = Field(default=None, description="the intake key that sets it")
    value: float | str | bool | None = None
    unit: Unit | None = Field(default=None, description="unit of value (SI base), when a number")
    status: RowStatus
    why: str | None = Field(default=None, description="why assumed, the formula if derived, or what to measure")
    machine: str | None = Field(default=None, description="measured: the machine it ran on")
    measure_on: str | None = Field(default=None, description="to_measure: the kind of machine it must come from")
    date: str | None = None
    tool: str | None = None


class WorkloadSheet(Doc):
    """The article's sheet: every number with its status; the open ones become questions."""

    rows: list[SheetRow]
    known: int
    to_measure: int
    assumed: int
    measured: int
    derived: int
    rule: str = ARTICLE_RULE


@dataclass(frozen=True)
class RowSpec:
    section: str
    item: str
    key: str | None
    path: str | None
    unit: Unit | None = None
    prov: str | None = None   # provenance path when it differs from `path`


_SHARED: tuple[RowSpec, ...] = (
    RowSpec("dependencies", "accelerator", "compute.accelerator", "compute.accelerator"),
    RowSpec("dependencies", "system (node type)", "compute.system", "compute.system"),
    RowSpec("dependencies", "GPUs", "compute.gpus", "compute.gpus", "count"),
    RowSpec("dependencies", "framework", None, "software.framework"),
    RowSpec("dependencies", "access model", "software.access_model", "software.access_model"),
    RowSpec("dependencies", "compute fabric", "fabric.switch", "fabric.scale_out.technology", prov="fabric.switch"),
)
_STORAGE: tuple[RowSpec, ...] = (
    RowSpec("outputs", "checkpoint size", None, "storage.checkpoint_bytes", "B"),
    RowSpec("outputs", "checkpoint interval", "reliability.checkpoint_interval", "storage.checkpoint_interval_s", "s"),
    RowSpec("outputs", "retained checkpoints", "storage.retained_checkpoints", "storage.retained_checkpoints", "count"),
    RowSpec("dependencies", "storage tier", "storage.tier", "storage.tier"),
    RowSpec("dependencies", "checkpoint write bandwidth", "storage.write_bandwidth",
            "storage.checkpoint_write_bytes_per_s", "B/s", prov="storage.write_bytes_per_s"),
    RowSpec("dependencies", "failure rate", "reliability.failure_rate", "reliability.failure_rate"),
    RowSpec("dependencies", "restart time", "reliability.restart_time", "reliability.restart_s", "s"),
)
ROWS: dict[str, tuple[RowSpec, ...]] = {
    "training": (
        RowSpec("input", "training tokens", "training.tokens", "objective.tokens", "tokens"),
        RowSpec("input", "dataset on storage", "storage.dataset_tokens", "storage.dataset_bytes", "B"),
        RowSpec("input", "bytes per token", "storage.token_bytes", "storage.bytes_per_item", "B",
                prov="storage.bytes_per_token"),
        RowSpec("preparation", "sequence length", "training.seq_len", "objective.seq_len", "count"),
        RowSpec("preparation", "global batch (sequences)", "training.global_batch_size",
                "objective.global_batch_size", "count"),
        RowSpec("computation", "model", "model.preset", "objective.model"),
        RowSpec("computation", "parameters", "model.params", "objective.params", "count"),
        RowSpec("computation", "FLOPs per token", None, "objective.flops_per_token", "FLOP"),
        RowSpec("computation", "precision", "training.precision", "objective.precision"),
        RowSpec("computation", "step time", None, "compute.step_time_s", "s"),
        *_STORAGE, *_SHARED),
    "inference": (
        RowSpec("input", "request rate", "serving.request_rate", "objective.request_rate_per_s", "requests/s"),
        RowSpec("input", "input tokens per request", "serving.input_tokens", "objective.input_tokens", "tokens"),
        RowSpec("computation", "model", "model.preset", "objective.model"),
        RowSpec("computation", "parameters", "model.params", "objective.params", "count"),
        RowSpec("computation", "weights precision", "serving.weights", "objective.weights"),
        RowSpec("computation", "KV cache precision", "serving.kv_cache_dtype", "objective.kv_cache_dtype"),
        RowSpec("computation", "TTFT target", "serving.ttft", "objective.ttft_target_s", "s"),
        RowSpec("computation", "TPOT target", "serving.tpot", "objective.tpot_target_s", "s"),
        RowSpec("outputs", "output tokens per request", "serving.output_tokens", "objective.output_tokens", "tokens"),
        *_SHARED),
    "hpc": (
        RowSpec("input", "problem size", "problem.size", "objective.problem_size", "count"),
        RowSpec("computation", "solver class", "application.class", "hpc.solver_class"),
        RowSpec("computation", "FLOPs per unit-step", "profile.flops_per_unit_step", "hpc.flops_per_unit_step", "FLOP"),
        RowSpec("computation", "bytes per unit-step", "profile.bytes_per_unit_step", "hpc.bytes_per_unit_step", "B"),
        RowSpec("computation", "time per step", None, "hpc.time_per_step_s", "s"),
        RowSpec("outputs", "output per step", "io.output_bytes_per_step", "storage.output_bytes_per_step", "B"),
        *_SHARED),
    "generic": (
        RowSpec("input", "samples per epoch", "data.samples", "objective.samples", "count"),
        RowSpec("input", "bytes per sample on storage", "data.sample_size", "objective.sample_bytes", "B"),
        RowSpec("input", "dataset size", None, "objective.dataset_bytes", "B"),
        RowSpec("input", "epochs", "data.epochs", "objective.epochs", "count"),
        RowSpec("preparation", "host cores per GPU", "pipeline.cpu_cores_per_gpu", "compute.cpu_cores_per_gpu",
                "count"),
        RowSpec("preparation", "decode rate per core", "pipeline.decode_rate_per_core",
                "compute.decode_rate_per_core", "items/s"),
        RowSpec("preparation", "bytes copied to the GPU per sample", "pipeline.device_bytes_per_sample", None, "B"),
        RowSpec("computation", "FLOPs per sample", "model.flops_per_sample", "objective.flops_per_sample", "FLOP"),
        RowSpec("computation", "forward FLOPs per sample", "model.forward_flops_per_sample", None, "FLOP"),
        RowSpec("computation", "parameters", "model.params", None, "count"),
        RowSpec("computation", "precision", "pipeline.precision", "compute.precision", prov="compute.precision"),
        RowSpec("computation", "GPU efficiency", "pipeline.gpu_efficiency", "compute.gpu_efficiency", "1"),
        RowSpec("computation", "samples per GPU per second", "pipeline.gpu_samples_per_s",
                "compute.gpu_samples_per_s_per_gpu", "items/s", prov="compute.gpu_samples_per_s_per_gpu"),
        RowSpec("computation", "batch per GPU", "pipeline.batch_size_per_gpu", "compute.batch_size_per_gpu", "count"),
        RowSpec("outputs", "output bytes per sample", "outputs.bytes_per_sample", None, "B"),
        *_STORAGE, *_SHARED,
        RowSpec("dependencies", "host CPU", "compute.host_cpu", "compute.host_cpu")),
}
# The unit of each intake key a row shows: what a measured value of that key must be in.
KEY_UNITS: dict[str, str] = {r.key: r.unit for rows in ROWS.values() for r in rows if r.key and r.unit}
# The result path each intake key sets, whose provenance a measured value of the key replaces.
KEY_PATHS: dict[str, str] = {r.key: path for rows in ROWS.values() for r in rows
                             if r.key and (path := r.prov or r.path)}

def given_keys(model: BaseModel, prefix: str = "") -> set[str]:
    """Dotted keys the intake set (pydantic's fields-set, recursively): what the user gave."""
    keys: set[str] = set()
    for name in model.model_fields_set:
        value = getattr(model, name)
        alias = type(model).model_fields[name].alias or name
        key = f"{prefix}{alias}"
        if isinstance(value, BaseModel):
            keys |= given_keys(value, key + ".")
        elif value is not None:
            keys.add(key)
    return keys


def _is_given(key: str, given: set[str]) -> bool:
    """The key itself, or any field under it (serving.ttft given as {p99: 2s})."""
    return key in given or any(g.startswith(key + ".") for g in given)


def check_field_keys(sheet: SheetIntake, model: type[BaseModel]) -> None:
    known = [k for k in intake_keys(model) if not k.startswith(("sheet", "boundary", "operations"))]
    for key in sheet.fields:
        if key not in known:
            near = difflib.get_close_matches(key, known, n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(near)}?" if near else "a dotted intake key of this workload"
            raise InputError(f"sheet.fields.{key}", key, hint)


def measured_why(entry: MeasuredValue, reference: str | None = None) -> str:
    """'measured with wkc profile 0.1.0 (median of 5 repeats, spread 12 items/s; measured.values.host...)'."""
    detail = [f"median of {entry.repeats} repeats" if entry.repeats else None,
              f"spread {entry.spread:.3g} {entry.unit}" if entry.spread is not None else None,
              f"from measured.values.{reference}" if reference else None, entry.note]
    extra = "; ".join(d for d in detail if d)
    return f"measured with {entry.tool}" + (f" ({extra})" if extra else "")


def _measured_row(spec: RowSpec, entry: MeasuredValue, value: Any, reference: str | None) -> SheetRow:
    return SheetRow(section=spec.section, item=spec.item, key=spec.key, value=value, unit=spec.unit,
                    status="measured", machine=entry.machine.describe(), tool=entry.tool,
                    date=entry.date.isoformat(), why=measured_why(entry, reference))


def _row(spec: RowSpec, doc: dict[str, Any], workload: BaseModel, sheet: SheetIntake, given: set[str],
         provenance: dict[str, Any], spec_compute: dict[str, Any] | None, catalog: Catalog,
         measured: dict[str, tuple[MeasuredValue, str | None]]) -> SheetRow | None:
    value = get_path(doc, spec.path) if spec.path else None
    if value is None and spec.key:
        value = get_path(workload.model_dump(mode="json", by_alias=True), spec.key)
    field = sheet.fields.get(spec.key) if spec.key else None
    if spec.key in measured:
        entry, reference = measured[spec.key]
        return _measured_row(spec, entry, value, reference)
    if field is not None and field.status == "to_measure":
        on = sized_machine(measured_on(spec.key or ""), spec_compute, workload, catalog)
        held = provenance.get(spec.prov or spec.path or "")
        placeholder = f"; until then the sizing carries the rule's assumption ({held.why})" if (
            held is not None and held.why and value is not None) else "; the stage it sets stays open"
        return SheetRow(section=spec.section, item=spec.item, key=spec.key, value=None, unit=spec.unit,
                        status="to_measure", why=(field.why or "still to measure") + placeholder, measure_on=on)
    if field is not None and field.status == "assumed":
        return SheetRow(section=spec.section, item=spec.item, key=spec.key, value=value, unit=spec.unit,
                        status="assumed", why=field.why)
    if spec.key and _is_given(spec.key, given):
        return SheetRow(section=spec.section, item=spec.item, key=spec.key, value=value, unit=spec.unit,
                        status="known", why=field.note if field else None)
    prov = provenance.get(spec.prov or spec.path or "")
    if value is None:
        return None
    if prov is not None and prov.source.value == "assumed":
        return SheetRow(section=spec.section, item=spec.item, key=spec.key, value=value, unit=spec.unit,
                        status="assumed", why=prov.why)
    if prov is not None and prov.source.value == "given":
        return SheetRow(section=spec.section, item=spec.item, key=spec.key, value=value, unit=spec.unit,
                        status="known")
    formula = prov.formula if prov is not None else None
    return SheetRow(section=spec.section, item=spec.item, key=spec.key, value=value, unit=spec.unit,
                    status="derived", why=formula or "derived by the sizing")


def check_statuses(sheet: SheetIntake, given: set[str], raw: dict[str, Any]) -> None:
    """A to_measure key has no value yet; a known or assumed key has one."""
    for key, f in sheet.fields.items():
        present = _is_given(key, given)
        if f.status == "to_measure" and present:
            raise InputError(f"sheet.fields.{key}", get_path(raw, key),
                             "no value for a to_measure field (remove it from the intake, or mark it known or "
                             f"assumed). {ARTICLE_RULE}")
        if f.status in ("known", "assumed") and not present:
            raise InputError(f"sheet.fields.{key}", None, f"a {f.status} field has its value in the intake "
                             f"under {key}; give it, or mark the field to_measure")


def build_sheet(kind: str, doc: dict[str, Any], workload: BaseModel, sheet: SheetIntake, given: set[str],
                provenance: dict[str, Any], catalog: Catalog,
                measured: dict[str, tuple[MeasuredValue, str | None]] | None = None) -> WorkloadSheet:
    """The sheet's rows; `measured`: intake key -> (its measured value, the `measured.values` key it
    was read from, if any)."""
    spec_compute = section_dict(doc, "compute")
    found = measured or {}
    rows = [r for spec in ROWS.get(kind, _SHARED)
            if (r := _row(spec, doc, workload, sheet, given, provenance, spec_compute, catalog, found)) is not None]
    for item in sheet.items:
        m = item.measured
        rows.append(SheetRow(section=item.section, item=item.item, value=m.value if m else item.value,
                             unit=_unit(m.unit) if m else None, status=item.status,
                             why=measured_why(m) if m else item.why, machine=m.machine.describe() if m else None,
                             tool=m.tool if m else None, date=m.date.isoformat() if m else None))
    order = ("input", "preparation", "computation", "outputs", "dependencies")
    rows.sort(key=lambda r: order.index(r.section))
    count = {s: sum(r.status == s for r in rows) for s in ("known", "to_measure", "assumed", "measured", "derived")}
    return WorkloadSheet(rows=rows, **count)


def _unit(unit: str) -> Unit | None:
    """The row unit when the measured unit is one the result schema names."""
    from ..quantity import UNITS
    return unit if unit in UNITS else None   # type: ignore[return-value]


__all__ = ["KEY_PATHS", "KEY_UNITS", "ROWS", "SheetRow", "WorkloadSheet", "build_sheet", "check_field_keys",
           "check_statuses", "given_keys", "measured_why"]
