"""How sure the headline numbers are: each number beside the band our held-out error gives it
(spine/uncertainty.py), or the sentence saying that no case of its kind was validated."""

from __future__ import annotations

from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from ..spine.result import SystemSpec
from .format import format_quantity
from .summary import lookup


def band_lines(spec: SystemSpec) -> list[tuple[str, str, str]]:
    """(path, 'value (low to high)', basis) for each headline number with a band entry, formatted
    by the unit its field declares."""
    out = []
    for path, band in spec.uncertainty.items():
        got, unit = lookup(spec, path)
        value = format_quantity(got, unit)
        if band.low is not None and band.high is not None:
            shown = f"{value} ({format_quantity(band.low, unit)} to {format_quantity(band.high, unit)})"
        else:
            shown = f"{value} (no band)"
        out.append((path, shown, band.basis))
    return out


def terminal_uncertainty(spec: SystemSpec) -> Panel | None:
    lines = band_lines(spec)
    if not lines:
        return None
    body = Group(*[Text.from_markup(f"• [cyan]{p}[/] {Text(shown).plain} [dim]— {Text(basis).plain}[/]")
                   for p, shown, basis in lines])
    return Panel(body, title="How sure: each headline number and the band of our held-out error",
                 title_align="left", border_style="cyan")


def markdown_uncertainty(spec: SystemSpec) -> list[str]:
    lines = band_lines(spec)
    if not lines:
        return []
    out = ["## How sure", "", "| number | value (band) | basis |", "|---|---|---|"]
    out += [f"| {p} | {shown.replace('|', '/')} | {basis.replace('|', '/')} |" for p, shown, basis in lines]
    return [*out, ""]
