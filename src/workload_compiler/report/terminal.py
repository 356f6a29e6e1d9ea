"""The terminal report (rich): a summary first (verdict, headline numbers, collisions, top
assumptions), then the six layers with their headline values; `detail=True` shows every value of
every section, with the formula or the reason beside it.

Lines are laid out here at the console's width and wrapped at spaces, so a word or a number is
never split or cut at 80 columns (a pipeline layout string wider than the line breaks after its
'|' separators). Any section a package adds to `SystemSpec` is rendered from its
field metadata, without code here.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from ..spine.result import SystemSpec
from .engagement_render import render_engagement
from .format import LAYER_TITLES
from .rows import Row, headline_rows, rows
from .sections import extra_sections, section_title
from .sizing_view import terminal_alternatives, terminal_cost, terminal_sensitivity
from .summary import Summary, summarize
from .uncertainty_view import terminal_uncertainty

_STYLE = {"given": "green", "assumed": "yellow", "derived": "cyan", "measured": "magenta"}
_VERDICT_STYLE = {"meets target": "bold green", "feasible": "bold green", "target open": "bold yellow",
                  "misses target": "bold yellow", "infeasible": "bold red"}
SOURCE_WIDTH = 8     # "assumed", "measured"
MAX_LABEL = 30


def _wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width` characters, broken at spaces; a longer word (a pipeline layout
    string) after its separators (`_split_word`), else it keeps its line."""
    width = max(width, 8)
    out: list[str] = []
    for para in text.splitlines() or [""]:
        for line in textwrap.wrap(para, width=width, break_long_words=False, break_on_hyphens=False) or [""]:
            out += _split_word(line, width) if len(line) > width else [line]
    return out


def _split_word(word: str, width: int) -> list[str]:
    """A word wider than the line in pieces of at most `width`, each ending at a '|' (a Megatron
    layout string's stage separator) or a ',', so the pieces join back to the word with nothing
    inserted; a piece with no separator in reach stays whole."""
    parts = [p for p in re.findall(r"[^|,]*[|,]?", word) if p]
    lines = [""]
    for part in parts:
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return lines


def label_of(row: Row) -> str:
    return "  " * row.depth + row.words


def _row_lines(row: Row, width: int, label_w: int, detail: bool) -> list[Text]:
    value_w = width - label_w - SOURCE_WIDTH - 2
    labels = _wrap(label_of(row), label_w)
    values = _wrap(row.text, value_w) if row.text else [""]
    if any(len(v) > value_w for v in values):       # one long word: give the value the whole line
        values = ["", *_wrap(row.text, width - 2)]
    out: list[Text] = []
    for i in range(max(len(labels), len(values))):
        line = Text()
        lab = labels[i] if i < len(labels) else ""
        val = values[i] if i < len(values) else ""
        if i == 0 or len(val) <= value_w:
            line.append(lab.ljust(label_w), style="bold" if row.heading else "")
            line.append(" ")
            line.append(val.ljust(value_w))
        else:
            line.append("  " + val)
        if i == 0 and row.source:
            line.append(" " + row.source.rjust(SOURCE_WIDTH - 1), style=_STYLE.get(row.source, ""))
        out.append(line)
    if detail and row.note:
        out += [Text("    " + n, style="dim") for n in _wrap(row.note, width - 4)]
    indent = "  " * (row.depth + 1)
    for item in row.lines:
        out += [Text(indent + ("• " if j == 0 else "  ") + part)
                for j, part in enumerate(_wrap(item, width - len(indent) - 2))]
    return out


def section_lines(section_rows: list[Row], width: int, detail: bool) -> list[Text]:
    if not section_rows:
        return []
    label_w = min(MAX_LABEL, max(len(label_of(r)) for r in section_rows), max(12, width // 3))
    out: list[Text] = []
    for r in section_rows:
        out += _row_lines(r, width, label_w, detail)
    return out


def _summary_panel(s: Summary, width: int) -> Panel:
    inner = width - 4
    body: list[Text] = []
    verdict = Text(s.verdict_code.upper(), style=_VERDICT_STYLE.get(s.verdict_code, "bold"))
    head = s.verdict if s.verdict_code in ("infeasible", "feasible", "meets target", "target open") else \
        "feasible, but a target collides (below)"
    rest = head.split(": ", 1)[1] if s.verdict_code == "infeasible" and ": " in head else (
        "" if s.verdict_code == "infeasible" else head)
    for i, line in enumerate(_wrap(rest, inner - len(s.verdict_code) - 3) or [""]):
        t = verdict.copy() if i == 0 else Text(" " * len(s.verdict_code))
        t.append("   " + line)
        body.append(t)
    label_w = max((len(label) for label, _ in s.numbers), default=0)
    for label, value in s.numbers:
        for j, part in enumerate(_wrap(value, inner - label_w - 2)):
            body.append(Text((label if j == 0 else "").ljust(label_w) + "  " + part))
    more = f" (+{s.more_assumptions} more: --detail)" if s.more_assumptions else ""
    for title, style, items in (("collisions", "bold red", s.collisions), ("warnings", "bold yellow", s.warnings),
                                (f"top assumptions{more}", "bold yellow", s.assumptions)):
        if items:
            body.append(Text(title, style=style))
            body += [Text(("• " if j == 0 else "  ") + p)
                     for item in items for j, p in enumerate(_wrap(item, inner - 2))]
    name = [Text(line, style="bold") for line in _wrap(s.title, inner)]   # in the body: wrapped, never cut
    return Panel(Group(*name, *body), title="Summary", title_align="left")


def _fit(title: str, width: int) -> str:
    """A panel title that fits its border (cut at a word, with an ellipsis mark of our own)."""
    if len(title) <= width:
        return title
    cut = title[: width - 4].rsplit(" ", 1)[0]
    return cut + " ..."


def _section(name: str, value: Any, spec: SystemSpec, width: int, detail: bool) -> Panel | None:
    section_rows = list(rows(value, name, spec.provenance)) if detail else headline_rows(value, name, spec.provenance)
    lines = section_lines(section_rows, width - 4, detail)
    if not lines:
        return None
    title = LAYER_TITLES.get(name) or section_title(name)
    return Panel(Group(*lines), title=_fit(title, width - 6), title_align="left")


def render(spec: SystemSpec, console: Console, *, detail: bool = False) -> None:
    width = console.width
    console.print(_summary_panel(summarize(spec), width))
    bands = terminal_uncertainty(spec)
    if bands is not None:
        console.print(bands)
    for name in [*LAYER_TITLES, *extra_sections(spec)]:
        value = getattr(spec, name, None)
        if value:
            panel = _section(name, value, spec, width, detail)
            if panel is not None:
                console.print(panel)
    if detail:
        alternatives = terminal_alternatives(spec, width)
        if alternatives is not None:
            console.print(alternatives)
    elif spec.alternatives:
        top = spec.alternatives[:TOP_ALTERNATIVES]
        more = len(spec.alternatives) - len(top)
        lines = [Text(("• " if j == 0 else "  ") + p) for a in top for j, p in enumerate(_wrap(_alternative(a),
                                                                                              width - 6))]
        title = f"Alternatives (the first {len(top)}; {more} more with --detail)" if more else "Alternatives"
        console.print(Panel(Group(*lines), title=_fit(title, width - 6), title_align="left"))
    for panel in (terminal_cost(spec), terminal_sensitivity(spec, width)):
        if panel is not None:
            console.print(panel)
    if spec.measured is not None and spec.measured.entries:
        lines = [Text(("• " if j == 0 else "  ") + p) for e in spec.measured.entries
                 for j, p in enumerate(_wrap(_measured(e), width - 6))]
        console.print(Panel(Group(*lines), title="Measured (bound to their machines)", title_align="left",
                            border_style="magenta"))
    render_engagement(spec, console, detail=detail)
    if detail and spec.assumptions:
        lines = [Text(("• " if j == 0 else "  ") + p) for a in spec.assumptions
                 for j, p in enumerate(_wrap(f"{a.field} = {_assumed(spec, a.field, a.value, a.unit)}: {a.why}",
                                             width - 6))]
        console.print(Panel(Group(*lines), title="Assumptions requiring validation", title_align="left",
                            border_style="yellow"))
    if spec.unreachable:
        lines = [Text(p) for k, why in spec.unreachable.items() for p in _wrap(f"{k}: {why}", width - 6)]
        console.print(Panel(Group(*lines), title="Unreachable values (null in JSON)", title_align="left"))


TOP_ALTERNATIVES = 3   # the concise report lists the best few; --detail the ranked table


def _measured(e: Any) -> str:
    unit = "" if e.unit == "1" else f" {e.unit}"
    spread = f" ± {e.spread:.2g}" if e.spread is not None else ""
    note = f" ({e.note})" if e.note else ""
    return f"{e.field} = {e.value:.4g}{unit}{spread}: {e.status}; {e.machine}, {e.tool}, {e.date}{note}"


def _assumed(spec: SystemSpec, field: str, value: Any, unit: str | None) -> str:
    from .summary import assumption_text
    return assumption_text(spec, field, value, unit)


def _alternative(a: Any) -> str:
    from .sections import alternative_text
    return alternative_text(a)


__all__ = ["render", "section_lines"]
