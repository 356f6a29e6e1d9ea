"""The engagement sections (sheet, next questions, data path, operating boundary, boundary
register, operations, acceptance, MIG) as titled tables of strings, formatted from the typed
models' units; the terminal and Markdown renderers lay the same tables out (compute nothing).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ..quantity import unit_of
from ..spine.result import SystemSpec
from .format import format_quantity, si


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    lines: list[str] = field(default_factory=list)   # sentences above the table


def fmt(value: Any, unit: str | None) -> str:
    """One value by its declared unit (report/format.py `format_quantity`), byte rates with four
    digits: an acceptance threshold reads 338.2 GB/s, not 338 GB/s."""
    if unit == "B/s" and isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return si(float(value), "B/s", digits=4)
    return format_quantity(value, unit)


def field_value(model: BaseModel, name: str) -> str:
    return fmt(getattr(model, name), unit_of(model, name))


def sheet_table(spec: SystemSpec) -> Table | None:
    s = spec.sheet
    if s is None:
        return None
    def note(r: Any) -> str:
        if r.status == "to_measure":
            return f"{r.why or ''}; measure on {r.measure_on}" if r.measure_on else (r.why or "")
        return r.machine or r.why or ""

    rows: list[list[str]] = []
    section = ""
    for r in s.rows:   # the article's sections as headings inside the table, not a column of repeats
        if r.section != section:
            section = r.section
            rows.append([section.upper(), "", "", ""])
        rows.append([r.item, fmt(r.value, r.unit), r.status, note(r)])
    return Table("Workload sheet", ["item", "value", "status", "why / machine"], rows, [
        f"{s.known} known, {s.to_measure} to measure, {s.assumed} assumed, {s.measured} measured, "
        f"{s.derived} derived. {s.rule}"])


def questions_table(spec: SystemSpec) -> Table | None:
    q = spec.next_questions
    if q is None:
        return None
    rows = [[str(i), x.question, x.status, x.effect] for i, x in enumerate(q.questions, 1)]
    lines = [f"Learning path: {' -> '.join(f'{s.title} ({s.questions})' for s in q.learning_path) or 'none open'}."]
    lines += [f"{s.title}: {s.why}" for s in q.learning_path] + [q.programs]
    return Table("Next questions", ["#", "question", "status", "what it moves"], rows, lines)


def pipeline_table(spec: SystemSpec) -> Table | None:
    p = spec.pipeline
    if p is None:
        return None
    rows = [[s.label, fmt(s.samples_per_s, "items/s"), fmt(s.samples_per_s_per_gpu, "items/s"),
             s.open_reason or s.formula] for s in p.stages]
    lines = [p.verdict] + [f"unbind: {u}" for u in p.unbind] + [
        f"time to result {field_value(p, 'time_to_result_s')}"
        + (" (a lower bound while a stage is open)" if p.time_to_result_is_lower_bound else "")
        + f" at {field_value(p, 'effective_samples_per_s')} effective"]
    return Table("Data path (storage -> CPU -> host-to-device -> GPU -> writes)",
                 ["stage", "samples/s", "per GPU", "how / why open"], rows, lines)


def boundary_table(spec: SystemSpec) -> Table | None:
    b = spec.operating_boundary
    if b is None:
        return None
    mark = {"confirmed": " ✓", "proposed": " ?", "TO DEFINE": ""}
    rows = []
    for layer in b.layers:
        row = [layer]
        for function in b.functions:
            c = b.cell(layer, function)
            row.append((c.actor or "TO DEFINE") + mark.get(c.status, ""))
        rows.append(row)
    counts = ", ".join(f"{k} {v}" for k, v in b.status_counts.items())
    suggestions = [f"{c.layer}: {c.suggestion}" for c in b.cells if c.suggestion]
    return Table("Operating boundary", ["layer", *b.functions], rows, [
        f"Access model: {b.access_model_name} ({b.operator_scope}). Cells: {counts} (✓ confirmed, ? proposed).",
        *([f"Suggested by the access model: {'; '.join(suggestions)}"] if suggestions else []),
        f"{b.note} Contractual model: {b.contractual_model}."])


def register_table(spec: SystemSpec) -> Table | None:
    r = spec.boundary_register
    if r is None:
        return None
    rows = [[i.id, i.title, i.status, i.owner or i.decided_by, i.answer or i.sizing_view or ""] for i in r.items]
    scope = [f"01 {'exclusive' if e.exclusive else 'shared'}: {e.resource} {fmt(e.quantity, e.unit)} — {e.why}"
             for e in r.items[0].scope] if r.items else []
    return Table("Boundary register", ["id", "item", "status", "owner", "answer / what the sizing says"], rows,
                 [*scope, r.note])


def operations_table(spec: SystemSpec) -> Table | None:
    o = spec.operations
    if o is None:
        return None
    rows = [[p.part, p.layer, fmt(p.failures_per_week, "count"), "—" if p.spares is None else str(p.spares),
             fmt(p.rma_per_year, "count"), p.rma_actor or "—", p.incidents_actor or "—"] for p in o.parts]
    lines = [f"{o.fleet_gpus:,} GPUs at {o.failure_rate_per_gpu_day:.3g} interruptions per GPU-day "
             f"({o.failure_rate_source}): {field_value(o, 'failures_per_week')} failures and "
             f"{field_value(o, 'incidents_per_week')} incidents a week, "
             f"{field_value(o, 'manual_interventions_per_week')} needing manual work; "
             f"on-call {field_value(o, 'on_call_time_per_week_s')} a week; "
             f"{field_value(o, 'rma_per_year')} RMAs a year; spares pool {o.spares_total} parts for a "
             f"{field_value(o, 'restore_time_s')} restore at {field_value(o, 'service_level')}.",
             f"Split by part: {o.mix_source}; each part's source is in the JSON (operations.parts[].source).",
             *o.notes]
    return Table("Operations load", ["part", "layer", "failures/week", "spares", "RMA/year", "RMA by",
                                     "incidents by"], rows, lines)


def acceptance_table(spec: SystemSpec) -> Table | None:
    a = spec.acceptance
    if a is None:
        return None
    sources = list(dict.fromkeys(t.fraction_source for t in a.targets))   # numbered in table order
    rows = [[t.test, t.tier or "", fmt(t.message_bytes, "B") if t.message_bytes else (t.precision or ""),
             fmt(t.expected, t.unit), fmt(t.fraction_of_peak, "fraction") if t.fraction_of_peak is not None else "—",
             t.tool, f"[{sources.index(t.fraction_source) + 1}]"] for t in a.targets]
    checks: dict[str, int] = {}
    for t in a.targets:
        if t.readiness_check:
            checks[t.readiness_check] = checks.get(t.readiness_check, 0) + 1
    numbered = ", ".join(f"{k} ({v})" for k, v in checks.items())
    return Table("Acceptance targets", ["test", "tier", "size / precision", "expected", "of peak", "tool", "src"],
                 rows, [a.note, f"Node-readiness checks these give numbers to: {numbered}.",
                        *(f"[{i}] {src}" for i, src in enumerate(sources, 1))])


def mig_table(spec: SystemSpec) -> Table | None:
    m = spec.mig
    if m is None:
        return None
    rows = [[p.profile, fmt(p.memory_bytes, "B"), "yes" if p.fits else "no", str(p.replicas_per_gpu),
             "—" if p.gpus_needed is None else str(p.gpus_needed), fmt(p.cost_usd_per_hour, "USD/h"),
             fmt(p.fractional_gpus, "count"), p.why] for p in m.profiles]
    return Table("MIG and fractional GPUs", ["profile", "slice memory", "fits", "per GPU", "GPUs", "cost",
                                             "fractional GPUs", "why"], rows,
                 [m.verdict, f"whole GPUs: {m.gpus_whole} at {fmt(m.cost_usd_per_hour_whole, 'USD/h')}",
                  f"source: {m.source}"])


def engagement_tables(spec: SystemSpec) -> Iterator[Table]:
    for build in (pipeline_table, sheet_table, questions_table, boundary_table, register_table, operations_table,
                  acceptance_table, mig_table):
        table = build(spec)
        if table is not None:
            yield table


__all__ = ["Table", "engagement_tables", "field_value", "fmt"]
