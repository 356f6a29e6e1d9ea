"""Units in the types: a result field declares its unit once, in its pydantic field metadata, and
the JSON Schema, the renderers and the web page read it from there (never from a key's spelling).

    class StorageOut(Doc):
        checkpoint_write_s: float = quantity("s", "time to write one checkpoint")

`unit_of(Model, "checkpoint_write_s")` -> "s"; the exported schema holds `"unit": "s"` beside the
field's description. Values stay plain SI numbers (seconds, bytes, watts, FLOP/s), except where
the unit says otherwise ("TFLOP/s", "USD/Mtoken": the key names that scale and the unit states it).
`"fraction"` is a share in [0, 1] (shown as a percentage); `"1"` a dimensionless ratio (PUE,
speedup); `"count"` a number of things. A dict of numbers declares the unit of its values.

`headline=True` marks a field the concise report shows (the summary and the six layers); the
rest appear with `--detail`. `info(description)` is the same metadata for a field without a unit.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

Unit = Literal[
    "s", "B", "B/s", "bit/s", "W", "Wh", "J", "FLOP", "FLOP/s", "1", "count", "tokens", "tokens/s",
    "requests/s", "items/s", "USD", "USD/h", "USD/kWh", "m2", "m3/s", "L/min", "K", "degC", "m", "Hz",
    "fraction", "TFLOP/s", "FLOP/B", "B/token", "USD/Mtoken", "ns/day", "years/day", "cfm", "nm", "1/s",
    "U", "m3/h", "1/day",
]
UNITS: tuple[str, ...] = get_args(Unit)


def _extra(kwargs: dict[str, Any], headline: bool) -> dict[str, Any]:
    extra = dict(kwargs.pop("json_schema_extra", None) or {})
    if headline:
        extra["headline"] = True
    return extra


def quantity(unit: Unit, description: str = "", *, headline: bool = False, **kwargs: Any) -> Any:
    """A pydantic Field carrying its unit (and description) in the JSON Schema."""
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}; known: {UNITS}")
    extra = _extra(kwargs, headline)
    extra["unit"] = unit
    return Field(description=description or None, json_schema_extra=extra, **kwargs)


def quantity_in(unit_field: str, description: str = "", *, headline: bool = False, **kwargs: Any) -> Any:
    """A number whose unit differs row by row and is held in a sibling field (`unit_field`), e.g.
    an acceptance target in B/s or FLOP/s beside `unit`."""
    extra = _extra(kwargs, headline)
    extra["unit_field"] = unit_field
    return Field(description=description or None, json_schema_extra=extra, **kwargs)


def unit_by_key(units: dict[str, Unit], description: str = "", **kwargs: Any) -> Any:
    """A mapping whose values have a unit each, by key (`{"gpus": "count", "time_s": "s"}`)."""
    extra = _extra(kwargs, False)
    extra["unit_by_key"] = dict(units)
    return Field(description=description or None, json_schema_extra=extra, **kwargs)


def same_unit_as(what: str, description: str = "", **kwargs: Any) -> Any:
    """A number in the unit of another value it qualifies (a band's ends: the headline number's)."""
    extra = _extra(kwargs, False)
    extra["unit_same_as"] = what
    return Field(description=description or None, json_schema_extra=extra, **kwargs)


def info(description: str = "", *, headline: bool = False, **kwargs: Any) -> Any:
    """A pydantic Field for a value without a unit (text, a flag, a choice): its description, and
    whether the concise report shows it."""
    extra = _extra(kwargs, headline)
    return Field(description=description or None, json_schema_extra=extra or None, **kwargs)


def _schema_extra(model: type[BaseModel] | BaseModel, field: str) -> dict[str, Any]:
    cls = model if isinstance(model, type) else type(model)
    info_ = cls.model_fields.get(field)
    extra = info_.json_schema_extra if info_ is not None else None
    return extra if isinstance(extra, dict) else {}


def unit_of(model: type[BaseModel] | BaseModel, field: str) -> str | None:
    """The unit a model's field declares, or None."""
    unit = _schema_extra(model, field).get("unit")
    return str(unit) if unit is not None else None


def unit_field_of(model: type[BaseModel] | BaseModel, field: str) -> str | None:
    """The sibling field that holds this field's unit (see `quantity_in`), or None."""
    name = _schema_extra(model, field).get("unit_field")
    return str(name) if name is not None else None


def is_headline(model: type[BaseModel] | BaseModel, field: str) -> bool:
    """Whether the concise report shows this field."""
    return bool(_schema_extra(model, field).get("headline"))


__all__ = ["UNITS", "Unit", "info", "is_headline", "quantity", "quantity_in", "same_unit_as", "unit_by_key",
           "unit_field_of", "unit_of"]
