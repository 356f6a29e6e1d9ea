"""The engagement sections in the terminal (rich) and in Markdown: the tables of
report/engagement_tables.py laid out, one panel or one `##` section each."""

from __future__ import annotations

import textwrap

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table as RichTable
from rich.text import Text

from ..spine.result import SystemSpec
from .engagement_tables import Table, engagement_tables


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width=max(width, 8), break_long_words=False, break_on_hyphens=False) or [""]


def _records(table: Table, width: int) -> list[Text]:
    """A table too wide for the terminal, one row after the other as 'column: value' lines,
    wrapped at spaces (a word or number is never split)."""
    out: list[Text] = []
    for row in table.rows:
        for i, (head, cell) in enumerate(zip(table.header, row, strict=False)):
            if i == 0:
                out += [Text(("• " if j == 0 else "  ") + part, style="bold") for j, part in
                        enumerate(_wrap(cell, width - 2))]
            elif cell:
                out += [Text(("    " if j else f"  {head}: ") + part) for j, part in
                        enumerate(_wrap(cell, width - len(head) - 4))]
    return out


def _rich(table: Table, width: int) -> Group:
    lines = [Text(part) for line in table.lines for part in _wrap(line, width)]
    natural = sum(max(len(c) for c in [h, *(r[i] for r in table.rows if i < len(r))]) + 3
                  for i, h in enumerate(table.header)) + 1
    if natural > width:
        return Group(*lines, *_records(table, width))
    t = RichTable(show_header=True, header_style="bold", expand=False)
    for col in table.header:
        t.add_column(col, no_wrap=True)
    for row in table.rows:
        t.add_row(*(Text(cell) for cell in row))
    return Group(*lines, t)


CONCISE_ROWS = 3   # rows of each engagement table in the concise report (all of them with --detail)


def render_engagement(spec: SystemSpec, console: Console, *, detail: bool = True) -> None:
    for table in engagement_tables(spec):
        if not detail and len(table.rows) > CONCISE_ROWS:
            more = len(table.rows) - CONCISE_ROWS
            note = f"(first {CONCISE_ROWS} of {len(table.rows)} rows; {more} more with --detail)"
            table = Table(table.title, table.header, table.rows[:CONCISE_ROWS], [*table.lines, note])
        title = table.title if len(table.title) <= console.width - 6 else table.title[: console.width - 10] + " ..."
        console.print(Panel(_rich(table, console.width - 4), title=title, title_align="left"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def engagement_markdown(spec: SystemSpec) -> list[str]:
    out: list[str] = []
    for table in engagement_tables(spec):
        out += [f"## {table.title}", ""]
        out += [*(_cell(line) for line in table.lines), ""] if table.lines else []
        out += ["| " + " | ".join(_cell(h) for h in table.header) + " |",
                "|" + "---|" * len(table.header)]
        out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
        out.append("")
    return out


__all__ = ["engagement_markdown", "render_engagement"]
