"""A revision diff as text rows (terminal, web page): inputs as typed, outputs formatted by the unit
their field declares, old -> new."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..store.diff import Change, RevisionDiff
from .format import format_quantity
from .summary import unit_of_path
from .view import value_text

_INDEX = re.compile(r"\[\d+\]")


@dataclass(frozen=True)
class DiffRow:
    path: str
    old: str
    new: str
    kind: str


def _as_typed(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, list | dict):
        return str(value)
    return str(value)


def _formatted(path: str, value: Any) -> str:
    if value is None:
        return "—"
    key = _INDEX.sub("", path.rsplit(".", 1)[-1])
    if key == "parallelism":
        return value_text(key, value)
    return format_quantity(value, unit_of_path(path))   # by the unit the result's types declare


def rows(changes: list[Change], *, typed: bool) -> list[DiffRow]:
    show = _as_typed if typed else None
    return [DiffRow(c.path, show(c.old) if show else _formatted(c.path, c.old),
                    show(c.new) if show else _formatted(c.path, c.new), c.kind) for c in changes]


def sections(diff: RevisionDiff) -> list[tuple[str, list[DiffRow]]]:
    """(heading, rows) in reading order: inputs, outputs, assumptions, versions (empty ones left out)."""
    parts = [("Inputs", rows(diff.inputs, typed=True)), ("Outputs that moved", rows(diff.outputs, typed=False)),
             ("Assumptions", rows(diff.assumptions, typed=True)), ("Tool and catalog", rows(diff.versions, typed=True))]
    return [(h, r) for h, r in parts if r]


__all__ = ["DiffRow", "rows", "sections"]
