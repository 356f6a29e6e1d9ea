"""The Markdown report: the same document and order as the terminal view, as valid tables.

A table cell holds one line: a list (the software stack, the Pareto front, an explanation) is
written as bullets below its section's table, never as line breaks inside a row; `|` in text is
escaped. `detail=True` writes every value with its formula or reason; otherwise the headline
values, as the terminal does.
"""

from __future__ import annotations

from typing import Any

from ..spine.result import SystemSpec
from .engagement_render import engagement_markdown
from .format import LAYER_TITLES
from .rows import Row, headline_rows, rows
from .sections import extra_sections, section_title
from .sizing_view import markdown_sections
from .summary import assumption_text, summarize
from .uncertainty_view import markdown_uncertainty


def cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _source(r: Row, detail: bool) -> str:
    if not r.source:
        return ""
    return cell(f"{r.source}: {r.note}" if r.note else r.source)   # a document: the formula or reason too


def _table(section_rows: list[Row], detail: bool) -> list[str]:
    out = ["| value | | source |", "|---|---|---|"]
    below: list[str] = []
    for r in section_rows:
        label = ("&nbsp;" * 2 * r.depth) + cell(r.words)
        text = cell(r.text) if r.text else ("(below)" if r.lines else "")
        out.append(f"| {'**' + label + '**' if r.heading else label} | {text} | {_source(r, detail)} |")
        if r.lines:
            below += ["", f"**{cell(r.words)}**", ""] + [f"- {cell(line)}" for line in r.lines]
    return [*out, "", *below[1:], *([""] if below else [])]


def _bullets(items: list[str]) -> list[str]:
    return [f"- {cell(i)}" for i in items] + [""]


def render_markdown(spec: SystemSpec, *, detail: bool = False) -> str:
    s = summarize(spec)
    out = [f"# {cell(spec.name or spec.kind)}", "", f"Kind: {spec.kind}. **Verdict: {s.verdict_code}**: "
           f"{cell(s.verdict)}.", "", "| headline | |", "|---|---|"]
    out += [f"| {cell(label)} | {cell(value)} |" for label, value in s.numbers] + [""]
    if s.warnings:
        out += ["**Warnings**", "", *_bullets(list(s.warnings))]
    out += markdown_uncertainty(spec)
    for name in [*LAYER_TITLES, *extra_sections(spec)]:
        value: Any = getattr(spec, name, None)
        if not value:
            continue
        section_rows = list(rows(value, name, spec.provenance)) if detail else headline_rows(
            value, name, spec.provenance)
        if section_rows:
            out += [f"## {LAYER_TITLES.get(name) or section_title(name)}", "", *_table(section_rows, detail)]
    out += markdown_sections(spec)   # collisions, alternatives, cost, sensitivity (report/sizing_view.py)
    if spec.measured is not None and spec.measured.entries:
        out += ["## Measured (bound to their machines)", "", "| field | value | status | machine | tool, date |",
                "|---|---|---|---|---|"]
        for e in spec.measured.entries:
            spread = f" ± {e.spread:.2g}" if e.spread is not None else ""
            unit = "" if e.unit == "1" else f" {e.unit}"
            out.append(f"| {cell(e.field)} | {e.value:.4g}{unit}{spread} | {cell(e.status)} | {cell(e.machine)} | "
                       f"{cell(e.tool)}, {cell(e.date)} |")
        out.append("")
    out += engagement_markdown(spec)
    if spec.assumptions:
        shown = spec.assumptions if detail else spec.assumptions[:5]
        more = "" if detail or len(spec.assumptions) <= 5 else f" ({len(spec.assumptions) - 5} more with --detail)"
        out += [f"## Assumptions requiring validation{more}", ""]
        out += _bullets([f"`{a.field}` = {assumption_text(spec, a.field, a.value, a.unit)}: {a.why}" for a in shown])
    if spec.unreachable:
        out += ["## Unreachable values (null in JSON)", "", *_bullets([f"`{k}`: {v}" for k, v in
                                                                         spec.unreachable.items()])]
    return "\n".join(out).rstrip() + "\n"


__all__ = ["cell", "render_markdown"]
