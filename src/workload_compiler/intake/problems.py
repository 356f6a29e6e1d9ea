"""pydantic's validation errors in the user's words: the field (a dotted intake key), the value, and
what is allowed, with "did you mean" for an unknown key or an unknown choice.

pydantic reports a union field once per member, with tags such as `function-before[<lambda>(),
float]` in the location; here the tags are dropped and the members' errors merged, keeping the
member whose type matches what the user wrote (a mapping is answered by the mapping's rules).
"""

from __future__ import annotations

import re
import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from ..errors import MISSING, UNKNOWN_KEY, InputError, Problem, near_miss, shown

_TYPE_WORDS = {
    "int_parsing": "a whole number", "int_type": "a whole number", "int_from_float": "a whole number",
    "float_parsing": "a number", "float_type": "a number", "finite_number": "a finite number",
    "string_type": "text", "bool_parsing": "true or false", "bool_type": "true or false",
    "list_type": "a list", "dict_type": "a mapping of keys to values", "none_required": "null",
    "string_too_long": "shorter text", "too_long": "fewer items", "too_short": "more items",
}
_MISMATCH = {"model_type", "model_attributes_type", "dict_type", "list_type", "int_type", "int_parsing", "float_type",
             "float_parsing", "string_type", "bool_type", "bool_parsing", "is_instance_of", "none_required"}
_BOUND = {"greater_than": "more than", "greater_than_equal": "at least", "less_than": "less than",
          "less_than_equal": "at most"}
_BOUND_KEY = {"greater_than": "gt", "greater_than_equal": "ge", "less_than": "lt", "less_than_equal": "le"}


def submodel(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside `X`, `X | None`, `list[X]` or `Annotated[X, ...]`, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = submodel(arg)
        if found is not None:
            return found
    return None


def _field(model: type[BaseModel] | None, name: Any) -> tuple[str, FieldInfo] | None:
    if model is None or not isinstance(name, str):
        return None
    for key, info in model.model_fields.items():
        if name in (key, info.alias):
            return (info.alias or key), info
    return None


def _is_tag(part: Any) -> bool:
    """A union member's tag in a pydantic location, not a key the user wrote."""
    return isinstance(part, str) and bool(re.search(r"[\[\]()<>]|^[A-Z]", part) or part in (
        "int", "float", "str", "bool", "list", "dict", "none", "function-before", "function-after"))


def _walk(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> tuple[str, type[BaseModel] | None,
                                                                      FieldInfo | None, bool]:
    """The dotted key, the model holding the last key, that key's FieldInfo, and whether a union
    tag was crossed."""
    parts: list[str] = []
    current, parent, info, tagged = model, model, None, False
    for part in loc:
        found = _field(current, part)
        if found is not None:
            parts.append(found[0])
            parent, info = current, found[1]
            current = submodel(info.annotation)
        elif isinstance(part, int):
            parts[-1:] = [f"{parts[-1]}[{part}]"] if parts else [f"[{part}]"]
        elif _is_tag(part):
            tagged = True
        else:
            parts.append(str(part))
            parent, info, current = current, None, None
    return ".".join(parts) or "(intake)", parent, info, tagged


def _choices(expected: str) -> list[str]:
    return [a or b for a, b in re.findall(r"'([^']*)'|(\d+)", expected)]


def _keys(model: type[BaseModel] | None) -> list[str]:
    return [info.alias or k for k, info in model.model_fields.items()] if model else []


def elsewhere(root: type[BaseModel] | None, name: str, depth: int = 3) -> list[str]:
    """Dotted keys of `root`'s tree (to `depth` levels) that are `name`, or that a user is known to
    call `name` (a field's `also_called`: a training `precision` is a serving intake's `weights`)."""
    found: list[str] = []

    def walk(model: type[BaseModel], path: str, left: int) -> None:
        for key, info in model.model_fields.items():
            shown_key = info.alias or key
            dotted = f"{path}.{shown_key}" if path else shown_key
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            also = extra.get("also_called")
            if name == shown_key or (isinstance(also, list) and name in also):
                found.append(dotted)
            sub = submodel(info.annotation)
            if sub is not None and left > 1:
                walk(sub, dotted, left - 1)

    if root is not None:
        walk(root, "", depth)
    return sorted(found, key=lambda dotted: dotted.count("."))   # the shallowest first


def _allowed(e: Any, parent: type[BaseModel] | None, info: FieldInfo | None, path: str,
             root: type[BaseModel] | None = None) -> str:
    kind, ctx = e["type"], e.get("ctx") or {}
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        keys = _keys(parent)
        where, _, name = path.rpartition(".")
        hint = near_miss(name, keys) or "".join(f"did you mean {p}? " for p in elsewhere(root, name)[:1])
        return f"{hint}the keys of {where or 'the intake'}: {', '.join(keys)}"
    if kind in ("literal_error", "enum"):
        options = _choices(str(ctx.get("expected", "")))
        return f"{near_miss(e.get('input'), options)}one of: {', '.join(options)}"
    if kind in _BOUND:
        reason = _bound_reason(info, _BOUND_KEY[kind])
        return f"{_BOUND[kind]} {_number(ctx.get(_BOUND_KEY[kind]))}" + (f" ({reason})" if reason else "")
    if kind in ("model_type", "model_attributes_type"):
        sub = submodel(info.annotation) if info is not None else None
        if not sub:
            return "a mapping of keys to values"
        keys, given = _keys(sub), e.get("input")
        # a bare value where a mapping goes (`ttft: 2s`): show it in the mapping's shape
        value = given if isinstance(given, str) and 0 < len(given) <= 24 and given.isprintable() else shown(given)
        example = f" (e.g. {path.rpartition('.')[2]}: {{{keys[0]}: {value}}})" \
            if keys and isinstance(given, str | int | float) and not isinstance(given, bool) else ""
        return f"a mapping with keys: {', '.join(keys)}{example}"
    if kind in ("value_error", "assertion_error"):
        error = ctx.get("error")
        if isinstance(error, InputError):
            return error.allowed
        return str(e["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if kind == "recursion_loop":
        return "a document without cycles"
    return _TYPE_WORDS.get(kind, str(e["msg"]))


def _number(value: Any) -> str:
    if isinstance(value, int | float) and float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return shown(value)


def _bound_reason(info: FieldInfo | None, key: str) -> str:
    extra = info.json_schema_extra if info is not None else None
    if isinstance(extra, dict):
        reasons = extra.get("bounds")
        if isinstance(reasons, dict):
            return str(reasons.get(key, ""))
        if isinstance(reasons, str) and key in ("le", "lt"):
            return reasons
    return ""


def _mismatch(e: Any, tagged: bool) -> bool:
    """An error that only says "this union member does not take that type"."""
    if e["type"] in _MISMATCH:
        return True
    return tagged and e["type"] == "value_error" and isinstance(e.get("input"), dict | list)


def problems_of(exc: ValidationError, model: type[BaseModel] | None = None, prefix: str = "") -> list[Problem]:
    """One problem per field. `model` is the validated class (for key lists and bound reasons);
    `prefix` is prepended to every field (a section validated on its own)."""
    grouped: dict[str, list[tuple[Any, bool, type[BaseModel] | None, FieldInfo | None]]] = {}
    own: list[Problem] = []
    for e in exc.errors():
        raised = (e.get("ctx") or {}).get("error")
        if isinstance(raised, InputError) and not e["loc"]:
            # a whole-intake rule of ours (a model validator at the root) names its fields by their dotted path
            own += [p if not prefix or p.field.startswith(prefix + ".") else Problem(f"{prefix}.{p.field}", p.value,
                                                                                   p.allowed) for p in raised.problems]
            continue
        path, parent, info, tagged = _walk(model, tuple(e["loc"]))
        if prefix:
            path = prefix if path == "(intake)" else f"{prefix}.{path}"
        # members of one union group by the key that holds the union
        grouped.setdefault(path if not tagged else _union_key(path, e), []).append((e, tagged, parent, info))
    problems: list[Problem] = []
    for entries in grouped.values():
        meaningful = [x for x in entries if not _mismatch(x[0], x[1])] or entries
        seen: dict[str, Problem] = {}
        for e, _tagged, parent, info in meaningful:
            path, _, _, _ = _walk(model, tuple(e["loc"]))
            path = (f"{prefix}.{path}" if path != "(intake)" else prefix) if prefix else path
            value = MISSING if e["type"] == "missing" else e.get("input")
            if e["type"] == "extra_forbidden":
                value = UNKNOWN_KEY
            allowed = _allowed(e, parent, info, path, model)
            if path in seen and len(meaningful) > 1:
                previous = seen[path]
                if allowed not in previous.allowed:
                    seen[path] = Problem(path, previous.value, f"{previous.allowed}, or {allowed}")
            else:
                seen[path] = Problem(path, value, allowed)
        problems.extend(seen.values())
    return own + problems


def _union_key(path: str, e: Any) -> str:
    """The key holding the union: the location up to the first member tag."""
    head: list[str] = []
    for part in e["loc"]:
        if _is_tag(part):
            break
        head.append(str(part))
    return "|".join(head) or path


def input_error(exc: ValidationError, model: type[BaseModel] | None = None, prefix: str = "") -> InputError:
    """The InputError a ValidationError means to the user."""
    problems = problems_of(exc, model, prefix)
    if not problems:  # pragma: no cover - pydantic always reports at least one error
        problems = [Problem(prefix or "(intake)", None, str(exc))]
    return InputError.of(problems)


__all__ = ["elsewhere", "input_error", "problems_of", "submodel"]
