"""The Markdown report: the same document as the terminal view, as tables."""

from __future__ import annotations

from typing import Any

from ..spine.result import SystemSpec
from .engagement_render import engagement_markdown
from .format import LAYER_TITLES, format_value


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
    for name, heading in LAYER_TITLES.items():
        data = doc.get(name)
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
    if spec.collisions:
        out += ["## Collisions", ""]
        out += [f"- **{c.get('constraint')}**: {c.get('detail')}" for c in spec.collisions] + [""]
    if spec.alternatives:
        out += ["## Alternatives", "", "| alternative | what changes | GPUs | time to train | IT power |",
                "|---|---|---|---|---|"]
        for a in spec.alternatives:
            out.append(f"| {a.get('name')} | {a.get('change')} | {format_value('gpus', a.get('gpus'))} | "
                       f"{format_value('time_to_train_s', a.get('time_to_train_s'))} | "
                       f"{format_value('it_power_w', a.get('it_power_w'))} |")
        out.append("")
    out += engagement_markdown(spec)
    if spec.assumptions:
        out += ["## Assumptions requiring validation", ""]
        out += [f"- `{a.field}` = {format_value(a.field.split('.')[-1], a.value)} — {a.why}" for a in spec.assumptions]
        out.append("")
    return "\n".join(out)
