"""The Markdown report: the same document as the terminal view, as tables."""

from __future__ import annotations

from typing import Any

from ..spine.result import SystemSpec
from .engagement_render import engagement_markdown
from .format import LAYER_TITLES, format_value, layer_data
from .sizing_view import markdown_sections
from .uncertainty_view import markdown_uncertainty


def _flatten(prefix: str, data: dict[str, Any]) -> list[tuple[str, str, Any]]:
    rows: list[tuple[str, str, Any]] = []
    for key, value in data.items():
        path = f"{prefix}.{key}"
        if isinstance(value, dict) and value and not all(isinstance(v, int | float) for v in value.values()):
            rows.extend(_flatten(path, value))
        elif isinstance(value, dict) and value:
            rows.extend((f"{path}.{k}", key, v) for k, v in value.items())
        else:
            rows.append((path, key, value))
    return rows


def render_markdown(spec: SystemSpec) -> str:
    doc = spec.model_dump(mode="json")
    out = [f"# {spec.name or spec.kind}", "",
           f"Kind: {spec.kind}. Feasible: {'yes' if spec.feasible else 'no — ' + str(spec.binding_constraint)}.", ""]
    out += markdown_uncertainty(spec)
    for name, heading in LAYER_TITLES.items():
        data = layer_data(doc, name)
        if not data:
            continue
        out += [f"## {heading}", "", "| value | | source |", "|---|---|---|"]
        blocks: list[str] = []  # multi-line values, moved out of the table (a cell holds one line)
        for path, key, value in _flatten(name, data):
            prov = spec.provenance.get(path)
            src = ""
            if prov:
                src = prov.source.value + (f": {prov.formula}" if prov.formula else "") + (
                    f": {prov.why}" if prov.why else "")
            shown = format_value(key, value).replace("|", "\\|")
            label = path.split(".", 1)[1]
            if "\n" in shown:
                blocks += [f"**{label}**:", "", *(f"- {line}" for line in shown.splitlines() if line.strip()), ""]
                shown = "(below the table)"
            out.append(f"| {label} | {shown} | {src.replace('|', '/')} |")
        out.append("")
        out += blocks
    out += markdown_sections(spec)
    if spec.measured is not None and spec.measured.entries:
        out += ["## Measured (bound to their machines)", "", "| field | value | status | machine | tool, date |",
                "|---|---|---|---|---|"]
        for e in spec.measured.entries:
            spread = f" ± {e.spread:.2g}" if e.spread is not None else ""
            unit = "" if e.unit == "1" else f" {e.unit}"
            out.append(f"| {e.field} | {e.value:.4g}{unit}{spread} | {e.status} | {e.machine.replace('|', '/')} | "
                       f"{e.tool}, {e.date} |")
        out.append("")
    out += engagement_markdown(spec)
    if spec.assumptions:
        out += ["## Assumptions requiring validation", ""]
        out += [f"- `{a.field}` = {format_value(a.field.split('.')[-1], a.value)} — {a.why}" for a in spec.assumptions]
        out.append("")
    return "\n".join(out)
