"""The terminal report (rich): one panel per layer, each value with its provenance mark."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..spine.result import SearchSummary, SystemSpec
from .engagement_render import render_engagement
from .format import LAYER_TITLES, format_value, layer_data
from .sizing_view import terminal_alternatives, terminal_collisions, terminal_cost, terminal_sensitivity
from .uncertainty_view import terminal_uncertainty

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
    bands = terminal_uncertainty(spec)
    if bands is not None:
        console.print(bands)
    doc = spec.model_dump(mode="json")
    for name, heading in LAYER_TITLES.items():
        data = layer_data(doc, name)
        if data:
            console.print(Panel(layer_table(name, data, spec), title=heading, title_align="left"))
    if isinstance(spec.search, SearchSummary):
        rejected = ", ".join(f"{k}: {v:,}" for k, v in spec.search.rejected.items()) or "none"
        console.print(Panel(f"evaluated {spec.search.evaluated:,} layouts in {spec.search.seconds:.2f} s; "
                            f"rejected: {rejected}", title="Search", title_align="left"))
    for section in (terminal_collisions, terminal_alternatives, terminal_cost, terminal_sensitivity):
        panel = section(spec)
        if panel is not None:
            console.print(panel)
    if spec.measured is not None and spec.measured.entries:
        lines = [f"• [magenta]{e.field}[/] = {e.value:.4g}{'' if e.unit == '1' else ' ' + e.unit}"
                 + (f" ± {e.spread:.2g}" if e.spread is not None else "")
                 + f" — {e.status} — {e.machine}, {e.tool}, {e.date}" + (f" [dim]({e.note})[/]" if e.note else "")
                 for e in spec.measured.entries]
        console.print(Panel(Group(*[Text.from_markup(line) for line in lines]),
                            title="Measured (bound to their machines)", title_align="left", border_style="magenta"))
    render_engagement(spec, console)
    if spec.assumptions:
        body = Group(*[Text.from_markup(f"• [yellow]{a.field}[/] = {format_value(a.field.split('.')[-1], a.value)}"
                                        f" — {a.why}") for a in spec.assumptions])
        console.print(Panel(body, title="Assumptions requiring validation", title_align="left",
                            border_style="yellow"))
