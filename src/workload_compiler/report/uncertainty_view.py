"""How sure the headline numbers are: each number beside the band our held-out error gives it
(spine/uncertainty.py), or the sentence saying that no case of its kind was validated."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.panel import Panel
from rich.text import Text

from ..spine.result import SystemSpec
from .format import format_value


def _value(spec: SystemSpec, path: str) -> Any:
    layer, _, key = path.partition(".")
    section = getattr(spec, layer, None)
    if section is None:
        return None
    return section.get(key) if isinstance(section, dict) else getattr(section, key, None)


def band_lines(spec: SystemSpec) -> list[tuple[str, str, str]]:
    """(path, 'value (low to high)', basis) for each headline number with a band entry."""
    out = []
    for path, band in spec.uncertainty.items():
        key = path.rsplit(".", 1)[-1]
        value = format_value(key, _value(spec, path))
        if band.low is not None and band.high is not None:
            shown = f"{value} ({format_value(key, band.low)} to {format_value(key, band.high)})"
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
