"""Every number in a result is finite: a value the model cannot reach (a time to train with no
layout, a wait at a saturated queue) is `null` in the document, and `unreachable` says why, keyed
by its dotted path (`"compute.tokens_per_s": "no layout fits"`; list items as `name[]`).

Passes that know why a value is unreachable record it themselves (`spec.unreachable[path] = why`
with the value None); this pass catches the rest, so JSON output never holds Infinity or NaN.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from .result import SystemSpec

NOT_FINITE = "no finite value: the model's formula diverges for this input (a zero rate or an unbounded wait)"


def _reason(spec: SystemSpec) -> str:
    if not spec.feasible and spec.binding_constraint:
        return f"not reached: {spec.binding_constraint}"
    return NOT_FINITE


def _bad(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _own_reason(value: Any, why: str) -> str:
    """An item that says it is infeasible (an alternative) gives its own binding as the reason."""
    get = value.get if isinstance(value, dict) else getattr(value, "get", None) if isinstance(value, BaseModel) \
        else None
    if get is not None and get("feasible") is False and get("binding"):
        return f"not reached: {get('binding')}"
    return why


def _clean(value: Any, path: str, found: dict[str, str], why: str) -> Any:
    """The value with every non-finite float replaced by None (in place for models, dicts and
    lists); each replaced path is added to `found`."""
    if _bad(value):
        found.setdefault(path, why)
        return None
    why = _own_reason(value, why)
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            item = getattr(value, name)
            cleaned = _clean(item, f"{path}.{name}" if path else name, found, why)
            if cleaned is not item:
                value.__dict__[name] = cleaned   # frozen layer models too: the document is being finished
        return value
    if isinstance(value, dict):
        for key in list(value):
            item = value[key]
            cleaned = _clean(item, f"{path}.{key}" if path else str(key), found, why)
            if cleaned is not item:
                value[key] = cleaned
        return value
    if isinstance(value, list):
        for i, item in enumerate(value):
            cleaned = _clean(item, f"{path}[]", found, why)
            if cleaned is not item:
                value[i] = cleaned
        return value
    return value


def make_finite(spec: SystemSpec) -> SystemSpec:
    """The spec with no inf or NaN left; what was replaced is listed in `spec.unreachable`."""
    found: dict[str, str] = {}
    why = _reason(spec)
    for name in type(spec).model_fields:
        if name in ("unreachable", "provenance"):
            continue
        item = getattr(spec, name)
        cleaned = _clean(item, name, found, why)
        if cleaned is not item:
            spec.__dict__[name] = cleaned
    for path, reason in found.items():
        spec.unreachable.setdefault(path, reason)
    return spec


def finite_json(value: Any) -> Any:
    """A JSON-ready structure (dicts, lists, scalars) with non-finite floats as None, for command
    outputs that are not a SystemSpec (`wkc fit --json`, `wkc plan --json`)."""
    if _bad(value):
        return None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return value


__all__ = ["NOT_FINITE", "finite_json", "make_finite"]
