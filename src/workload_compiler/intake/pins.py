"""Pins: "select a layer, pin a value, recompile". A pin is a dotted intake key and a value
(`facility.power=1.5MW`, `compute.accelerator=b200`), applied to an intake mapping before it is
validated, so a pinned value goes through exactly the rules a value written in the YAML does.

An unknown key is an `InputError` naming the nearest valid keys of that archetype's intake.
"""

from __future__ import annotations

import copy
import difflib
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

import yaml
from pydantic import BaseModel

from ..errors import InputError


def parse_pin(text: str) -> tuple[str, Any]:
    """'facility.power=1.5MW' -> ('facility.power', '1.5MW'); the value is read as a YAML scalar
    (`8` an integer, `true` a boolean, `null` to unpin, `1.5MW` stays text for the unit parser)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise InputError("--set", text, "KEY=VALUE with a dotted intake key, e.g. facility.power=1.5MW")
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError:
        value = raw.strip()
    if isinstance(value, (dict, list)):
        raise InputError("--set", text, "a single value (a number, a word, true/false or null), not a mapping or list")
    return key, value


def _submodel(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside `X`, `X | None` or `Optional[X]`, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _submodel(arg)
            if found is not None:
                return found
    return None


def intake_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every dotted key of an intake model, sections and leaves: 'compute', 'compute.gpus', ..."""
    keys: list[str] = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        keys.append(key)
        sub = _submodel(field.annotation)
        if sub is not None:
            keys += intake_keys(sub, key + ".")
    return keys


def _check_key(key: str, model: type[BaseModel]) -> None:
    current: type[BaseModel] | None = model
    for depth, part in enumerate(key.split(".")):
        if current is None or part not in current.model_fields:
            known = intake_keys(model)
            near = difflib.get_close_matches(key, known, n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(near)}?" if near else "see `wkc schema intake` for the keys"
            where = ".".join(key.split(".")[:depth]) or "the intake"
            raise InputError("--set", key, f"a key of {where}; {hint}")
        current = _submodel(current.model_fields[part].annotation)


def apply_pins(intake: Mapping[str, Any], pins: Mapping[str, Any] | Iterable[tuple[str, Any]],
               model: type[BaseModel] | None = None) -> dict[str, Any]:
    """A deep copy of `intake` with each dotted key set to its value (None removes the key, i.e.
    unpins it). With `model` (the archetype's intake class) each key is checked first."""
    out: dict[str, Any] = copy.deepcopy(dict(intake))
    items = pins.items() if isinstance(pins, Mapping) else pins
    for key, value in items:
        if model is not None:
            _check_key(key, model)
        parts = key.split(".")
        node = out
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {} if child is None else child
                if not isinstance(child, dict):
                    raise InputError("--set", key, f"{part} holds a value, not a section")
                node[part] = child
            node = child
        if value is None:
            node.pop(parts[-1], None)
        else:
            node[parts[-1]] = value
    return out


__all__ = ["apply_pins", "intake_keys", "parse_pin"]
