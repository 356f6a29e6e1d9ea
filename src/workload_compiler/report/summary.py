"""The first thing a report says: the verdict, the headline numbers (with their uncertainty band
when the document has one), the collisions and the assumptions that matter most.

Which numbers head a report depends on the archetype (`HEADLINES`); each is read from the
document by its dotted path and formatted by the unit its field declares.
"""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..quantity import unit_field_of, unit_of
from ..spine.result import SystemSpec
from ..spine.verdict import verdict
from .format import format_quantity
from .rows import inline

TOP_ASSUMPTIONS = 5

# (label, value path, target path or None) per kind.
HEADLINES: dict[str, list[tuple[str, str, str | None]]] = {
    "training": [
        ("GPUs", "compute.gpus", None), ("accelerator", "compute.accelerator_name", None),
        ("layout", "compute.parallelism", None),
        ("time to train", "objective.goodput_adjusted_time_to_train_s", "objective.time_to_train_target_s"),
        ("throughput", "compute.tokens_per_s", None), ("MFU", "compute.mfu", None),
        ("memory per GPU", "compute.memory_per_gpu_bytes", None), ("IT power", "facility.it_power_w", None),
        ("facility power", "facility.facility_power_w", None), ("racks", "facility.racks", None)],
    "inference": [
        ("GPUs", "compute.gpus", None), ("accelerator", "compute.accelerator_name", None),
        ("replicas", "inference.replicas", None), ("mode", "inference.mode", None),
        ("TTFT", "inference.ttft_s", "objective.ttft_target_s"),
        ("TPOT", "inference.tpot_s", "objective.tpot_target_s"),
        ("output tokens/s", "inference.output_tokens_per_s", None),
        ("cost", "inference.cost_per_million_tokens", None), ("facility power", "facility.facility_power_w", None)],
    "hpc": [
        ("GPUs", "compute.gpus", None), ("accelerator", "compute.accelerator_name", None),
        ("time per step", "hpc.time_per_step_s", "objective.time_per_step_target_s"),
        ("time to solution", "hpc.time_to_solution_s", "objective.time_to_solution_target_s"),
        ("bound by", "hpc.bound", None), ("facility power", "facility.facility_power_w", None)],
    "generic": [
        ("GPUs", "compute.gpus", None), ("accelerator", "compute.accelerator_name", None),
        ("time to result", "objective.time_to_result_s", "objective.time_to_result_target_s"),
        ("samples/s", "pipeline.effective_samples_per_s", None), ("bound by", "compute.bottleneck", None),
        ("IT power", "facility.it_power_w", None), ("facility power", "facility.facility_power_w", None)],
}
FALLBACK = [("time to train", "objective.time_to_train_s", "objective.time_to_train_target_s")]


def _by_key(extra: Any) -> dict[str, Any]:
    units = extra.get("unit_by_key") if isinstance(extra, dict) else None
    return dict(units) if isinstance(units, dict) else {}


def lookup(spec: SystemSpec, path: str) -> tuple[Any, str | None]:
    """The value at a dotted document path and the unit its field declares (None, None if absent).
    A list item is named by its index ('alternatives.0.gpus'); a unit held in a sibling field
    (`quantity_in`) or given per key (`unit_by_key`) is found as well."""
    node: Any = spec
    unit: str | None = None
    by_key: dict[str, Any] = {}
    for part in path.split("."):
        if isinstance(node, BaseModel):
            cls = type(node)
            if part not in cls.model_fields and part not in (node.model_extra or {}):
                return None, None
            sibling = unit_field_of(cls, part)
            extra = cls.model_fields[part].json_schema_extra if part in cls.model_fields else None
            by_key = _by_key(extra)
            own = unit_of(cls, part) or (str(getattr(node, sibling)) if sibling and getattr(node, sibling, None)
                                         else None)
            unit = own   # a model's field declares its own unit; a mapping's entries take the field's
            node = getattr(node, part)
        elif isinstance(node, dict):
            unit = str(by_key[part]) if part in by_key else unit
            by_key = {}
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None, None
    return node, unit


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def unit_of_path(path: str, root: type[BaseModel] = SystemSpec) -> str | None:
    """The unit the result's types declare at a document path, from the types alone (a stored
    document, a diff of two): 'compute.step_time_s' -> 's', 'alternatives[2].gpus' -> 'count'. A
    section with several shapes (by kind) answers with the first that has the field; a unit held
    in a sibling field needs the document (`unit_at`)."""
    models: list[type[BaseModel]] = [root]
    unit: str | None = None
    by_key: dict[str, Any] = {}
    for part in re.sub(r"\[\d+\]", "", path).split("."):
        if not part or part.isdigit():
            continue
        owner = next((m for m in models if part in m.model_fields), None)
        if owner is not None:
            info = owner.model_fields[part]
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            unit, by_key = unit_of(owner, part), _by_key(extra)
            models = _models(info.annotation)
        elif models:
            return None   # a key the types do not declare
        else:
            unit, by_key = (str(by_key[part]) if part in by_key else unit), {}
    return unit


def unit_at(spec: SystemSpec, path: str) -> str | None:
    """The unit the document's types declare for the value at `path` (None: no unit, or no such field)."""
    return lookup(spec, path)[1]


def _band(spec: SystemSpec, path: str, unit: str | None) -> str:
    """' (band 30.1 d to 35.2 d)' from `spec.uncertainty[path]` when the document carries one. The basis
    is left to the "How sure" section that follows the summary: repeated on every headline number it
    tripled the summary's length."""
    span = band_span(spec, path, unit)
    return f" (band {span})" if span else ""


def band_span(spec: SystemSpec, path: str, unit: str | None) -> str:
    """'30.1 d to 35.2 d': the band of the value at `path`, formatted by its unit; '' when it has none."""
    bands = getattr(spec, "uncertainty", None)
    if isinstance(bands, BaseModel):
        bands = bands.model_dump()
    band = bands.get(path) if isinstance(bands, dict) else None
    if isinstance(band, BaseModel):
        band = band.model_dump()
    if not isinstance(band, dict) or band.get("low") is None or band.get("high") is None:
        return ""
    return f"{format_quantity(band['low'], unit)} to {format_quantity(band['high'], unit)}"


@dataclass(frozen=True)
class Summary:
    title: str
    verdict_code: str
    verdict: str
    numbers: list[tuple[str, str]]
    collisions: list[str]
    assumptions: list[str]
    more_assumptions: int
    warnings: tuple[str, ...] = ()    # what the layout search warns about (a tight memory fit, an optimistic MFU)


def _number(spec: SystemSpec, label: str, path: str, target: str | None) -> tuple[str, str] | None:
    value, unit = lookup(spec, path)
    if value is None and path in spec.unreachable:
        why = spec.unreachable[path]
        return label, "unreachable (infeasible)" if why.startswith("not reached:") else f"unreachable ({why})"
    if value is None:
        if path == "objective.goodput_adjusted_time_to_train_s":   # no reliability layer: the raw time
            return _number(spec, label, "objective.time_to_train_s", target)
        return None
    text = inline(value, unit) if isinstance(value, BaseModel) else format_quantity(value, unit)
    if path == "objective.time_to_result_s" and spec.pipeline is not None and \
            spec.pipeline.time_to_result_is_lower_bound:   # a stage is left open (to measure)
        text = "at least " + text
    text += _band(spec, path, unit)
    goal, goal_unit = lookup(spec, target) if target else (None, None)
    if goal is not None:
        text += f" (target {format_quantity(goal, goal_unit)})"
    return label, text


def assumption_text(spec: SystemSpec, field: str, value: Any, unit: str | None = None) -> str:
    """The assumed value in its unit: the assumption's own, else the one its result field declares."""
    unit = unit or lookup(spec, field)[1]
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return format_quantity(value, unit)


def search_warnings(spec: SystemSpec) -> tuple[str, ...]:
    """What the layout search warns about (a tight memory fit, an optimistic MFU): every renderer
    (terminal, Markdown, HTML, the workbench) reads them from here."""
    return tuple(str(w) for w in (getattr(spec.compute, "warnings", None) or ()))


def summarize(spec: SystemSpec) -> Summary:
    v = verdict(spec)
    numbers = [n for label, path, target in HEADLINES.get(spec.kind, FALLBACK)
               if (n := _number(spec, label, path, target)) is not None]
    collisions = [f"{c.get('constraint')}: {c.get('detail')}" for c in spec.collisions]
    top = spec.assumptions[:TOP_ASSUMPTIONS]
    assumptions = [f"{a.field} = {assumption_text(spec, a.field, a.value, a.unit)}: {a.why}" for a in top]
    return Summary(title=f"{spec.name or spec.kind + ' workload'} ({spec.kind})", verdict_code=v.code,
                   verdict=v.text, numbers=numbers, collisions=collisions, assumptions=assumptions,
                   more_assumptions=max(0, len(spec.assumptions) - TOP_ASSUMPTIONS),
                   warnings=search_warnings(spec))


__all__ = ["HEADLINES", "Summary", "assumption_text", "lookup", "search_warnings", "summarize", "unit_at",
           "unit_of_path"]
