"""Units in the types: a result field declares its unit once, in its pydantic field metadata, and
the JSON Schema, the renderers and the web page read it from there (never from a key's spelling).

    class StorageOut(Doc):
        checkpoint_write_s: float = quantity("s", "time to write one checkpoint")

`unit_of(Model, "checkpoint_write_s")` -> "s"; the exported schema holds `"unit": "s"` beside the
field's description. Values stay plain SI numbers (seconds, bytes, watts, FLOP/s).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

Unit = Literal[
    "s", "B", "B/s", "bit/s", "W", "Wh", "J", "FLOP", "FLOP/s", "1", "count", "tokens", "tokens/s",
    "requests/s", "items/s", "USD", "USD/h", "USD/kWh", "m2", "m3/s", "L/min", "K", "degC", "m", "Hz",
]
UNITS: tuple[str, ...] = get_args(Unit)


def quantity(unit: Unit, description: str = "", **kwargs: Any) -> Any:
    """A pydantic Field carrying its unit (and description) in the JSON Schema."""
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}; known: {UNITS}")
    extra = dict(kwargs.pop("json_schema_extra", None) or {})
    extra["unit"] = unit
    return Field(description=description or None, json_schema_extra=extra, **kwargs)


def unit_of(model: type[BaseModel] | BaseModel, field: str) -> str | None:
    """The unit a model's field declares, or None."""
    cls = model if isinstance(model, type) else type(model)
    info = cls.model_fields.get(field)
    extra = info.json_schema_extra if info is not None else None
    if isinstance(extra, dict):
        unit = extra.get("unit")
        return str(unit) if unit is not None else None
    return None


__all__ = ["UNITS", "Unit", "quantity", "unit_of"]
