"""The engagement sections in the terminal (rich) and in Markdown: the tables of
report/engagement_tables.py laid out, one panel or one `##` section each."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table as RichTable
from rich.text import Text

from ..spine.result import SystemSpec
from .engagement_tables import Table, engagement_tables

SHORT_COLUMN = 14   # a column whose cells all fit in this many characters keeps its width


def _rich(table: Table) -> Group:
    """Short columns (ids, statuses, numbers) keep their width, so the text columns (why, answer,
    question) get the rest of an 80-column terminal instead of all columns shrinking alike."""
    widest = [max([len(row[i]) for row in table.rows if i < len(row)] + [len(col)])
              for i, col in enumerate(table.header)]
    t = RichTable(show_header=True, header_style="bold", expand=False)
    for col, w in zip(table.header, widest, strict=True):
        t.add_column(col, overflow="fold", no_wrap=w <= SHORT_COLUMN)
    for row in table.rows:
        t.add_row(*(Text(cell) for cell in row))
    return Group(*(Text(line) for line in table.lines), t)


def render_engagement(spec: SystemSpec, console: Console) -> None:
    for table in engagement_tables(spec):
        console.print(Panel(_rich(table), title=table.title, title_align="left"))


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
