"""The document as rows a renderer lays out: one walk over the typed sections, shared by the
terminal and the Markdown reports (and any section another package adds to `SystemSpec`).

Each row has the value's dotted path, its label, its text formatted by the unit its field declares
(`quantity()`), its provenance, its depth, and whether it is a headline (shown in the concise
report). A list of models or of text becomes `lines` (bullets below the row), never a table cell
holding line breaks. Nothing is computed here: every number comes from the document.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ..provenance import Provenance
from ..quantity import is_headline, unit_field_of, unit_of
from .format import format_quantity

# Key endings a label drops when the field's declared unit is shown with the value anyway.
_UNIT_ENDINGS = {"s": ("_s",), "B": ("_bytes",), "W": ("_w",), "B/s": ("_bytes_per_s",), "bit/s": ("_bits_per_s",),
                 "m2": ("_m2",), "L/min": ("_l_per_min",), "m3/s": ("_m3_per_s",), "K": ("_k",)}
# What an ending says when a sibling key ends the same way (checkpoint_write_s, checkpoint_write_bytes_per_s):
# 'checkpoint write time' and 'checkpoint write rate' instead of 'checkpoint write' twice.
_ENDING_WORDS = {"_s": "time", "_bytes": "size", "_w": "power", "_bytes_per_s": "rate", "_bits_per_s": "rate",
                 "_m2": "area", "_l_per_min": "flow", "_m3_per_s": "flow", "_k": "temperature"}
MAX_LIST_LINES = 24    # longer lists are cut in the report (the JSON holds all of them)


def _unit_ending(label: str, unit: str | None) -> str | None:
    """The unit ending a label may drop ('_s' of 'checkpoint_interval_s' in s), keeping two words at least."""
    for ending in _UNIT_ENDINGS.get(unit or "", ()):
        if label.endswith(ending) and "_" in label[: -len(ending)]:
            return ending
    return None


def label_words(key: str, unit: str | None, clash: bool = False) -> str:
    """A key in words, less the unit ending its value shows ('checkpoint_interval_s' -> 'checkpoint
    interval'; keys stay the contract in JSON), or with the ending in a word where a sibling key
    would read alike (`clash`: 'checkpoint write time' / 'checkpoint write rate')."""
    ending = _unit_ending(key, unit)
    if ending:
        key = key[: -len(ending)] + (f"_{_ENDING_WORDS[ending]}" if clash else "")
    return key.replace("_", " ")


def _clashing(units: dict[str, str | None]) -> frozenset[str]:
    seen: dict[str, list[str]] = {}
    for name, unit in units.items():
        ending = _unit_ending(name, unit)
        seen.setdefault(name[: -len(ending)] if ending else name, []).append(name)
    return frozenset(n for names in seen.values() if len(names) > 1 for n in names)


def sibling_labels(units: dict[str, str | None]) -> dict[str, str]:
    """The words of sibling keys (key -> its unit), no two alike (every renderer's labels)."""
    clash = _clashing(units)
    return {k: label_words(k, u, k in clash) for k, u in units.items()}


@functools.cache
def clashing_fields(cls: type[BaseModel]) -> frozenset[str]:
    """The fields of a section whose labels would read alike once their unit endings are dropped."""
    return _clashing({name: unit_of(cls, name) for name in cls.model_fields})


@dataclass(frozen=True)
class Row:
    path: str
    label: str
    text: str                                     # "" for a heading row
    depth: int = 0
    headline: bool = False
    heading: bool = False                         # a nested section: its rows follow, one level deeper
    lines: list[str] = field(default_factory=list)  # bullets below the row (lists of models or text)
    provenance: Provenance | None = None
    unit: str | None = None                       # the unit the field declares
    clash: bool = False                           # a sibling's label reads alike without its unit ending

    @property
    def words(self) -> str:
        """The label for people (`label_words`)."""
        return label_words(self.label, self.unit, self.clash)

    @property
    def source(self) -> str:
        return self.provenance.source.value if self.provenance else ""

    @property
    def note(self) -> str:
        p = self.provenance
        return (p.formula or p.why or p.machine or "") if p else ""


def _fields(model: BaseModel) -> Iterator[tuple[str, Any, str | None, bool]]:
    """(name, value, unit, headline) of each field that holds a value, declared order; extra keys
    (sections that allow them) after, without a unit."""
    cls = type(model)
    set_only = cls.model_config.get("extra") == "allow"
    for name in cls.model_fields:
        if set_only and name not in model.model_fields_set:
            continue
        info = cls.model_fields[name]
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if info.exclude or extra.get("render") == "elsewhere":   # a section of its own renders it
            continue
        sibling = unit_field_of(cls, name)
        unit = unit_of(cls, name) or (str(getattr(model, sibling)) if sibling and getattr(model, sibling, None)
                                      else None)
        yield name, getattr(model, name), unit, is_headline(cls, name)
    for name, value in (model.model_extra or {}).items():
        yield name, value, None, False


def inline(value: Any, unit: str | None = None) -> str:
    """A model or mapping on one line: 'tp 8 · pp 8 · dp 16' (for a headline row and list items)."""
    if isinstance(value, BaseModel):
        return " · ".join(f"{name} {inline(v, u)}" for name, v, u, _ in _fields(value)
                          if v is not None and not isinstance(v, list | dict | BaseModel))
    if isinstance(value, dict):
        return " · ".join(f"{k} {inline(v, unit)}" for k, v in value.items()
                          if v is not None and not isinstance(v, list | dict))
    return format_quantity(value, unit)


def _list_lines(items: list[Any], unit: str | None) -> list[str]:
    lines = [inline(x, unit) for x in items[:MAX_LIST_LINES]]
    if len(items) > MAX_LIST_LINES:
        lines.append(f"… and {len(items) - MAX_LIST_LINES} more (in the JSON document)")
    return lines


def _numeric(d: dict[str, Any]) -> bool:
    return bool(d) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in d.values())


def rows(value: Any, path: str, provenance: dict[str, Provenance], *, depth: int = 0,
         unit: str | None = None) -> Iterator[Row]:
    """The rows of one section (a model, or a mapping of numbers or sections)."""
    clashes = {f"{path}.{n}" for n in clashing_fields(type(value))} if isinstance(value, BaseModel) else set()
    for row in _rows(value, path, provenance, depth=depth, unit=unit):
        yield dataclasses.replace(row, clash=True) if row.path in clashes else row


def _rows(value: Any, path: str, provenance: dict[str, Provenance], *, depth: int = 0,
          unit: str | None = None) -> Iterator[Row]:
    items: Iterator[tuple[str, Any, str | None, bool]]
    if isinstance(value, BaseModel):
        items = _fields(value)
    elif isinstance(value, dict):
        items = ((str(k), v, unit, False) for k, v in value.items())
    else:
        return
    for name, v, u, headline in items:
        p = f"{path}.{name}"
        prov = provenance.get(p)
        if isinstance(v, BaseModel) or (isinstance(v, dict) and v and not _numeric(v)
                                        and all(isinstance(x, dict | BaseModel) for x in v.values())):
            yield Row(p, name, inline(v, u) if headline else "", depth, headline, heading=not headline,
                      provenance=prov, unit=u)
            if not headline:
                yield from rows(v, p, provenance, depth=depth + 1, unit=u)
        elif isinstance(v, dict) and _numeric(v):
            yield Row(p, name, "", depth, headline, heading=True, provenance=prov, unit=u)
            for k, x in v.items():
                yield Row(f"{p}.{k}", k, format_quantity(x, u), depth + 1, False, provenance=provenance.get(f"{p}.{k}"))
        elif isinstance(v, list) and v and all(isinstance(x, dict | BaseModel | str) for x in v):
            yield Row(p, name, f"{len(v)} item(s)" if not all(isinstance(x, str) for x in v) else "", depth,
                      headline, lines=_list_lines(v, u), provenance=prov, unit=u)
        else:
            yield Row(p, name, format_quantity(v, u) if not isinstance(v, dict) else inline(v, u), depth, headline,
                      provenance=prov, unit=u)


def headline_rows(value: Any, path: str, provenance: dict[str, Provenance], limit: int = 8) -> list[Row]:
    """The concise view of a section: its headline fields (nested sections' headlines included),
    or, for a section that marks none, its first `limit` plain values."""
    every = list(rows(value, path, provenance))
    marked = [r for r in every if r.depth == 0 and r.headline and r.text and r.text != "—"]
    marked += _nested_headlines(value, path, provenance)
    if marked:
        return marked
    return [r for r in every if r.depth == 0 and r.text and not r.lines and not r.heading][:limit]


def _nested_headlines(value: Any, path: str, provenance: dict[str, Provenance]) -> list[Row]:
    """Headline fields of nested sections that are not themselves marked (fabric.scale_out.tiers)."""
    out: list[Row] = []
    if not isinstance(value, BaseModel):
        return out
    for name, v, _, headline in _fields(value):
        if isinstance(v, BaseModel) and not headline:
            for r in rows(v, f"{path}.{name}", provenance):
                if r.headline and r.depth == 0 and r.text and r.text != "—":
                    out.append(Row(r.path, f"{name} {r.label}", r.text, 0, True, provenance=r.provenance,
                                   unit=r.unit))
    return out


__all__ = ["MAX_LIST_LINES", "Row", "headline_rows", "inline", "rows"]
