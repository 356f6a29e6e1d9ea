"""The terminal report (rich): one panel per layer, each value with its provenance mark."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..spine.result import SearchSummary, SystemSpec
from .engagement_render import render_engagement
from .format import LAYER_TITLES, format_value

_MARK = {"given": "[green]given[/]", "assumed": "[yellow]assumed[/]", "derived": "[cyan]derived[/]",
         "measured": "[magenta]measured[/]"}


def _rows(prefix: str, data: dict[str, Any], spec: SystemSpec, table: Table, depth: int = 0,
          unit_key: str | None = None) -> None:
    for key, value in data.items():
        path = f"{prefix}.{key}"
        prov = spec.provenance.get(path)
        mark = _MARK.get(prov.source.value, "") if prov else ""
        if prov and prov.formula:
            mark += f" [dim]{prov.formula}[/]"
        elif prov and prov.why:
            mark += f" [dim]{prov.why}[/]"
        label = "  " * depth + key
        if isinstance(value, dict) and value and depth < 2:
            table.add_row(label, "", mark)
            numeric = all(isinstance(v, int | float) for v in value.values())
            _rows(path, value, spec, table, depth + 1, key if numeric else None)
        else:
            table.add_row(label, Text(format_value(unit_key or key, value)), mark)


def layer_table(name: str, data: dict[str, Any], spec: SystemSpec) -> Table:
    table = Table(show_header=False, box=None, pad_edge=False, expand=False)
    table.add_column("key", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("source", overflow="fold")
    _rows(name, data, spec, table)
    return table


def render(spec: SystemSpec, console: Console) -> None:
    title = spec.name or f"{spec.kind} workload"
    status = "[green]feasible[/]" if spec.feasible else f"[red]infeasible[/] — {spec.binding_constraint}"
    console.print(Panel(f"[bold]{title}[/]  ({spec.kind})  {status}", expand=False))
    doc = spec.model_dump(mode="json")
    for name, heading in LAYER_TITLES.items():
        data = doc.get(name)
        if data:
            console.print(Panel(layer_table(name, data, spec), title=heading, title_align="left"))
    if isinstance(spec.search, SearchSummary):
        rejected = ", ".join(f"{k}: {v:,}" for k, v in spec.search.rejected.items()) or "none"
        console.print(Panel(f"evaluated {spec.search.evaluated:,} layouts in {spec.search.seconds:.2f} s; "
                            f"rejected: {rejected}", title="Search", title_align="left"))
    if spec.collisions:
        lines = [f"• [bold]{c.get('constraint')}[/]: {c.get('detail')}" for c in spec.collisions]
        console.print(Panel("\n".join(lines), title="Collisions", title_align="left", border_style="red"))
    if spec.alternatives:
        table = Table(title=None)
        for col in ("alternative", "what changes", "GPUs", "time to train", "IT power", "meets target / binds"):
            table.add_column(col)
        for a in spec.alternatives:
            verdict = "—" if a.get("meets_target") is None else ("yes" if a["meets_target"] else "no")
            if not a.get("feasible", True):
                verdict = f"infeasible: {a.get('binding')}"
            table.add_row(str(a.get("name")), str(a.get("change")), format_value("gpus", a.get("gpus")),
                          format_value("time_to_train_s", a.get("time_to_train_s")),
                          format_value("it_power_w", a.get("it_power_w")), verdict)
        console.print(Panel(table, title="Alternatives", title_align="left"))
    render_engagement(spec, console)
    if spec.assumptions:
        body = Group(*[Text.from_markup(f"• [yellow]{a.field}[/] = {format_value(a.field.split('.')[-1], a.value)}"
                                        f" — {a.why}") for a in spec.assumptions])
        console.print(Panel(body, title="Assumptions requiring validation", title_align="left",
                            border_style="yellow"))
