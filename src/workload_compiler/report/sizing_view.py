"""Rendering of the sizing sections — collisions, alternatives, cost, sensitivity — for the terminal
(rich) and Markdown. One function per section and output; they read the typed sections and compute
nothing."""

from __future__ import annotations

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..sizing.result import Alternative, SensitivityRow, SensitivitySection
from ..spine.result import SystemSpec
from ..units import format_count, format_duration, format_power
from .format import format_quantity, format_value
from .layout import fitted
from .summary import lookup


def usd(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${format_count(value)}" if abs(value) >= 1e4 else f"${value:,.2f}"


def _time(value: float | None) -> str:
    return "—" if value is None else format_duration(value)


def _power(value: float | None) -> str:
    return "—" if value is None else format_power(value)


def _verdict(a: Alternative) -> str:
    if not a.feasible:
        return f"does not fit: {a.binding}"
    missed = [c.name for c in a.checks if c.met is False and c.kind == "target"]
    broken = [c.name for c in a.checks if c.met is False and c.kind == "pin"]
    met = "meets every target" if a.meets_targets else f"misses {', '.join(missed) or 'a target'}"
    return met + (f"; breaks {', '.join(broken)}" if broken else "")


def _row(a: Alternative, serving: bool) -> list[str]:
    price = usd(a.cost_usd_per_hour) + "/h" if serving and a.cost_usd_per_hour is not None else usd(a.cost_usd)
    if a.feasible and a.cost_usd is None and a.cost_usd_per_hour is None:
        price = "not priced"
    perf = (f"{a.replicas or 0} x {a.gpus_per_replica or 0}, TTFT {_time(a.ttft_s)}, "
            f"{a.request_rate_per_s or 0:,.3g} req/s" if serving else _time(a.time_s))
    return [str(a.rank or ""), a.name, a.change, f"{a.gpus:,}" if a.gpus else "—", perf,
            _power(a.facility_power_w), price, _verdict(a)]


def _headers(serving: bool) -> list[str]:
    return ["#", "alternative", "what changes", "GPUs", "replicas, TTFT, load" if serving else "time",
            "facility power", "$/h" if serving else "$ per run", "verdict"]


def terminal_collisions(spec: SystemSpec) -> Panel | None:
    if not spec.collisions:
        return None
    lines = [f"• [bold]{c.constraint}[/]: {c.detail}" for c in spec.collisions]
    return Panel("\n".join(lines), title="Collisions", title_align="left", border_style="red")


def terminal_alternatives(spec: SystemSpec, width: int | None = None) -> Panel | None:
    """The ranked alternatives; with `width`, laid out to fit it (records when the table is wider)."""
    if not spec.alternatives:
        return None
    serving = spec.kind == "inference"
    title = "Alternatives (each recompiled; cheapest meeting every target first)"
    if width is not None:
        body = fitted(_headers(serving), [_row(a, serving) for a in spec.alternatives], width - 4)
        return Panel(body, title=title if len(title) <= width - 6 else "Alternatives", title_align="left")
    table = Table()
    for col in _headers(serving):
        table.add_column(col, overflow="fold")
    for a in spec.alternatives:
        table.add_row(*_row(a, serving))
    return Panel(table, title=title, title_align="left")


def terminal_cost(spec: SystemSpec) -> Panel | None:
    c = spec.cost
    if c is None:
        return None
    if spec.kind == "inference":
        head = (f"{usd(c.usd_per_hour)}/h for {c.gpus:,} GPUs, {usd(c.usd_per_million_served_tokens)} per 1M "
                f"output tokens served ({usd(c.usd_per_million_served_tokens_at_capacity)} at capacity); "
                f"TCO {usd(c.tco_usd_per_year)}/year")
        energy = f"energy {(c.energy_wh_per_year or 0) / 1e6:,.0f} MWh/year"
    else:
        head = (f"{usd(c.cost_usd)} per run ({format_count(c.gpu_hours or 0)} GPU-hours at "
                f"{usd(c.usd_per_gpu_hour)}/GPU-h; {usd(c.usd_per_million_training_tokens)} per 1M tokens)")
        energy = f"energy {(c.energy_wh or 0) / 1e6:,.0f} MWh at PUE {c.pue:.2f}"
    energy += f", {usd(c.energy_cost_usd if spec.kind != 'inference' else c.energy_cost_usd_per_year)}"
    lines = [f"basis: {c.basis or 'no price'}" + (f" ({c.price_source})" if c.price_source else ""), head, energy]
    lines += [f"[dim]{k}: {why}[/]" for k, why in c.missing.items()]
    return Panel("\n".join(lines), title="Cost", title_align="left")


def _value(value: object, unit: str | None, field: str) -> str:
    """A varied value in its unit: the result field's declared one, else the one its assumption
    carries (an intake setting such as storage.write_bytes_per_s); text as it is."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return format_quantity(value, unit) if unit else format_value(field.split(".")[-1], value)
    return str(value)


def _delta(r: SensitivityRow, key: str) -> str:
    v = r.swing.get(key)
    if not v:
        return "—"
    return {"time_s": _time, "facility_power_w": _power, "cost_usd": usd}.get(key, lambda x: f"{x:,.0f}")(v)


def _sensitivity_table(spec: SystemSpec, s: SensitivitySection) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of `spec`'s tornado `s`, the same cells in the terminal and in Markdown: '—' where
    the assumption moves nothing."""
    serving = spec.kind == "inference"
    header = ["assumption", "default", "range", "Δ GPUs", "Δ replicas" if serving else "Δ time",
              "Δ facility power", "Δ $/h" if serving else "Δ $"]
    moved = ("gpus", "replicas" if serving else "time_s", "facility_power_w", "cost_usd")
    carried = {a.field: a.unit for a in spec.assumptions}
    rows = []
    for r in s.rows:
        unit = lookup(spec, r.field)[1] or carried.get(r.field)
        ends = (f"{_value(r.low.value, unit, r.field) if r.low else '—'} .. "
                f"{_value(r.high.value, unit, r.field) if r.high else '—'}")
        rows.append([r.field, _value(r.default, unit, r.field), ends, *(_delta(r, k) for k in moved)])
    return header, rows


def terminal_sensitivity(spec: SystemSpec, width: int) -> Panel | None:
    """The tornado, laid out to fit `width` (records when the table is wider)."""
    s = spec.sensitivity
    if s is None:
        return None
    header, rows = _sensitivity_table(spec, s)
    title = f"Sensitivity (tornado, {s.seconds:.2f} s)"
    sources = [Text(f"{r.field}: {r.source}", style="dim") for r in s.rows]   # under the rows they explain
    return Panel(Group(fitted(header, rows, width - 4), *sources), title=title, title_align="left")


def markdown_sections(spec: SystemSpec) -> list[str]:
    """Collisions, alternatives, cost and sensitivity as Markdown lines."""
    out: list[str] = []
    if spec.collisions:
        out += ["## Collisions", ""] + [f"- **{c.constraint}**: {c.detail}" for c in spec.collisions] + [""]
    if spec.alternatives:
        serving = spec.kind == "inference"
        out += ["## Alternatives", "", "| " + " | ".join(_headers(serving)) + " |",
                "|" + "---|" * len(_headers(serving))]
        out += ["| " + " | ".join(x.replace("|", "/") for x in _row(a, serving)) + " |" for a in spec.alternatives]
        out.append("")
    c = spec.cost
    if c is not None:
        out += ["## Cost", "", f"- basis: {c.basis or 'no price'} ({c.price_source or '—'})",
                f"- $ per run: {usd(c.cost_usd)}; $/h: {usd(c.usd_per_hour)}; effective $/GPU-h: "
                f"{usd(c.usd_per_gpu_hour)}; TCO/year: {usd(c.tco_usd_per_year)}",
                f"- energy: {(c.energy_wh or c.energy_wh_per_year or 0) / 1e6:,.0f} MWh"
                f"{'/year' if c.energy_wh is None else ''} at PUE {c.pue:.2f}"]
        out += [f"- {k}: {why}" for k, why in c.missing.items()] + [""]
    if spec.sensitivity is not None:
        header, rows = _sensitivity_table(spec, spec.sensitivity)
        out += ["## Sensitivity", "", "| " + " | ".join([*header, "source"]) + " |", "|" + "---|" * (len(header) + 1)]
        out += ["| " + " | ".join(c.replace("|", "/") for c in [*cells, r.source]) + " |"
                for cells, r in zip(rows, spec.sensitivity.rows, strict=True)]
        out.append("")
    return out
