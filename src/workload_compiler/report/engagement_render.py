"""The engagement sections in the terminal (rich) and in Markdown: the tables of
report/engagement_tables.py laid out, one panel or one `##` section each (report/layout.py: a
table when it fits the terminal, its rows as records when it does not)."""

from __future__ import annotations

from rich.console import Console
from rich.panel import Panel

from ..spine.result import SystemSpec
from .engagement_tables import Table, engagement_tables
from .layout import fitted

CONCISE_ROWS = 3   # rows of each engagement table in the concise report (all of them with --detail)


def render_engagement(spec: SystemSpec, console: Console, *, detail: bool = True) -> None:
    for table in engagement_tables(spec):
        if not detail and len(table.rows) > CONCISE_ROWS:
            more = len(table.rows) - CONCISE_ROWS
            note = f"(first {CONCISE_ROWS} of {len(table.rows)} rows; {more} more with --detail)"
            table = Table(table.title, table.header, table.rows[:CONCISE_ROWS], [*table.lines, note])
        title = table.title if len(table.title) <= console.width - 6 else table.title[: console.width - 10] + " ..."
        console.print(Panel(fitted(table.header, table.rows, console.width - 4, table.lines), title=title,
                            title_align="left"))


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
