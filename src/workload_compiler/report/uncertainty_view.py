"""How sure the headline numbers are: each number beside the band our held-out error gives it
(spine/uncertainty.py), or the sentence saying that no case of its kind was validated. Numbers that
share a basis (the step time, the throughput and the times to train all rest on the same held-out
runs) are listed together and the basis is said once."""

from __future__ import annotations

from rich.panel import Panel
from rich.table import Table
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


def by_basis(lines: list[tuple[str, str, str]]) -> list[tuple[str, list[tuple[str, str]]]]:
    """[(basis, [(path, shown), ...]), ...]: the numbers grouped by the basis of their band, the
    groups in the order their first number appears."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for path, shown, basis in lines:
        groups.setdefault(basis, []).append((path, shown))
    return list(groups.items())


def terminal_uncertainty(spec: SystemSpec) -> Panel | None:
    groups = by_basis(band_lines(spec))
    if not groups:
        return None
    # a grid keeps a wrapped line under its own text (a hanging indent after the bullet)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for basis, numbers in groups:
        for p, shown in numbers:
            grid.add_row("•", Text.assemble((p, "cyan"), " ", shown))
        grid.add_row("", Text(basis, style="dim"))
    return Panel(grid, title="How sure: each headline number and the band of our held-out error",
                 title_align="left", border_style="cyan")


def markdown_uncertainty(spec: SystemSpec) -> list[str]:
    groups = by_basis(band_lines(spec))
    if not groups:
        return []
    out = ["## How sure", "", "| number | value (band) | basis |", "|---|---|---|"]
    for n, (_, numbers) in enumerate(groups, start=1):
        out += [f"| {p} | {shown.replace('|', '/')} | [{n}] |" for p, shown in numbers]
    out.append("")
    out += [f"[{n}] {basis.replace('|', '/')}  " for n, (basis, _) in enumerate(groups, start=1)]
    return [*out, ""]
