"""Tables that fit the terminal: a rich table when its columns fit the width, else the same rows as
records ('column: value' lines), wrapped at spaces, so a word or a number is never split or cut."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text


def wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width` characters, broken at spaces only (a longer word keeps its line)."""
    out: list[str] = []
    for para in str(text).splitlines() or [""]:
        out += textwrap.wrap(para, width=max(width, 8), break_long_words=False, break_on_hyphens=False) or [""]
    return out


def records(header: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> list[Text]:
    """Each row as a bullet (its first cell; under a "#" column, "n) " and the second cell) and
    'column: value' lines below it."""
    out: list[Text] = []
    numbered = bool(header) and header[0] == "#"
    for row in rows:
        title, rest = (f"{row[0]}) {row[1]}", 2) if numbered and len(row) > 1 else (row[0] if row else "", 1)
        out += [Text(("• " if j == 0 else "  ") + part, style="bold") for j, part in enumerate(wrap(title, width - 2))]
        for head, cell in list(zip(header, row, strict=False))[rest:]:
            if cell:
                out += [Text(("    " if j else f"  {head}: ") + part)
                        for j, part in enumerate(wrap(cell, width - len(head) - 4))]
    return out


def packed(parts: Sequence[str], width: int, indent: str = "  ", sep: str = " · ") -> list[str]:
    """`parts` joined by `sep` into lines of at most `width` (each line starting with `indent`); a part
    moves whole to the next line rather than split, and one longer than a line wraps at its spaces."""
    lines: list[str] = []
    line = ""
    for part in parts:
        joined = f"{line}{sep}{part}" if line else part
        if len(indent) + len(joined) <= width:
            line = joined
            continue
        if line:
            lines.append(indent + line)
        pieces = wrap(part, width - len(indent))
        lines += [indent + p for p in pieces[:-1]]
        line = pieces[-1]
    return lines + ([indent + line] if line else [])


def natural_width(header: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    """Columns a table of `rows` under `header` takes with no cell wrapped (borders included)."""
    return sum(max(len(c) for c in [h, *(r[i] for r in rows if i < len(r))]) + 3 for i, h in enumerate(header)) + 1


def fitted(header: Sequence[str], rows: Sequence[Sequence[str]], width: int,
           lines: Sequence[str] = ()) -> RenderableType:
    """A table of `rows` under `header` (and `lines` of text above it) laid out for `width`."""
    above = [Text(part) for line in lines for part in wrap(line, width)]
    if natural_width(header, rows) > width:
        return Group(*above, *records(header, rows, width))
    t = Table(show_header=True, header_style="bold", expand=False)
    for col in header:
        t.add_column(col, no_wrap=True)
    for row in rows:
        t.add_row(*(Text(cell) for cell in row))
    return Group(*above, t)


__all__ = ["fitted", "natural_width", "packed", "records", "wrap"]
