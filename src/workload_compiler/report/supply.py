"""The supply check as a ranked table (terminal, Markdown): one row per offer, then per offer its
layer checks and open confirmations. Formats from the typed model; computes nothing."""

from __future__ import annotations

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..engagement.supply import OfferCheck, SupplyCheck
from .engagement_tables import fmt

_STYLE = {"fits": "green", "substitution": "yellow", "gap": "red", "open": "cyan"}


def _usd(v: float | None) -> str:
    if v is None:
        return "—"
    return f"${v / 1e6:,.2f}M" if v >= 1e6 else f"${v:,.0f}"


def _row(o: OfferCheck) -> list[str]:
    sub = o.substitution
    change = "—" if sub is None or sub.time_change is None else f"{100 * sub.time_change:+.0f}%"
    power = "—" if sub is None or sub.power_change is None else f"{100 * sub.power_change:+.0f}%"
    return [str(o.rank), o.id, f"{o.count:,} {o.accelerator}", o.verdict, fmt(o.time_to_result_s, "s"), change, power,
            fmt(o.lead_time_s, "s"), fmt(o.time_from_order_s, "s"), _usd(o.cost_usd), str(len(o.open_confirmations))]


HEADER = ["#", "id", "GPUs", "verdict", "run", "Δ run", "Δ power", "lead", "order→end", "cost", "open"]
# the terminal keeps the columns that rank (80 columns); Δ power and the open count are in each offer's panel
TERMINAL = ("#", "id", "GPUs", "verdict", "run", "Δ run", "lead", "order→end", "cost")


def _requirement(s: SupplyCheck) -> str:
    r = s.requirement
    return (f"Requirement: {r.name or r.kind}: {r.gpus:,} x {r.accelerator} ({r.system}), time to result "
            f"{fmt(r.time_to_result_s, 's')}, IT power {fmt(r.it_power_w, 'W')}, access model {r.access_model}. "
            f"Ranked by {s.ranking}.")


def render_supply(s: SupplyCheck, console: Console) -> None:
    table = Table(show_header=True, header_style="bold", pad_edge=False, box=box.SIMPLE_HEAD, padding=(0, 1),
                  collapse_padding=True, show_edge=False)
    keep = [HEADER.index(c) for c in TERMINAL]
    for col in TERMINAL:
        table.add_column(col, overflow="fold", no_wrap=col != "GPUs", min_width=13 if col == "GPUs" else None)
    for o in s.offers:
        cells = _row(o)
        cells[3] = f"[{_STYLE[o.verdict]}]{o.verdict}[/]"
        table.add_row(*(cells[i] for i in keep))
    console.print(Text(_requirement(s)))
    console.print(table)
    console.print(Text(s.note))
    for o in s.offers:
        lines = [Text.from_markup(f"[{_STYLE[c.status]}]{c.status:>12}[/] {c.layer}: {c.detail}") for c in o.layers]
        if o.substitution is not None:
            lines.append(Text(f"substitution: {o.substitution.rule}"
                              + (f" (does not compile: {o.substitution.binding})" if not o.substitution.feasible
                                 else "")))
        lines += [Text(f"open: {c.item} — {c.detail}") for c in o.open_confirmations]
        if o.cost_basis:
            lines.append(Text(f"cost: {o.cost_basis}"))
        console.print(Panel(Group(*lines), title=f"{o.rank}. offer {o.id} ({o.supplier or '—'}): {o.verdict}",
                            title_align="left"))


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def supply_markdown(s: SupplyCheck) -> str:
    out = ["# Supply check", "", _md(_requirement(s)), "", "| " + " | ".join(HEADER) + " |",
           "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(_md(c) for c in _row(o)) + " |" for o in s.offers]
    out += ["", s.note, ""]
    for o in s.offers:
        out += [f"## {o.rank}. Offer {o.id} ({_md(o.supplier or '—')}): {o.verdict}", "",
                "| layer | status | required | offered | detail |", "|---|---|---|---|---|"]
        out += [f"| {c.layer} | {c.status} | {_md(c.required)} | {_md(c.offered)} | {_md(c.detail)} |"
                for c in o.layers]
        out.append("")
        if o.substitution is not None:
            out += [f"Substitution: {_md(o.substitution.rule)}.", ""]
        if o.open_confirmations:
            out += ["Open confirmations:", ""] + [f"- {c.item}: {_md(c.detail)}" for c in o.open_confirmations]
            out.append("")
        if o.cost_basis:
            out += [f"Cost basis: {_md(o.cost_basis)}.", ""]
    return "\n".join(out)


__all__ = ["render_supply", "supply_markdown"]
