"""Units in the types: every numeric field of every section of the result document declares its
unit (`quantity()`), and no example's result holds a key its section does not declare."""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from workload_compiler import compile_workload
from workload_compiler.quantity import UNITS, unit_field_of, unit_of
from workload_compiler.spine.result import SystemSpec

EXAMPLES = sorted(p for p in (Path(__file__).parents[2] / "examples").glob("*.yaml")
                  if re.search(r"^kind:", p.read_text(encoding="utf-8"), re.M))
NOT_QUANTITIES = {"schema_version"}


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def _numeric(annotation: Any) -> bool:
    """int or float (alone, optional, or as the values of a dict), not bool."""
    if annotation in (int, float):
        return True
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_numeric(a) for a in args if a is not type(None))
    if origin is dict and len(args) == 2:
        return _numeric(args[1])
    if origin is list and args:
        return _numeric(args[0])
    return False


def _sections() -> dict[str, type[BaseModel]]:
    seen: dict[str, type[BaseModel]] = {}
    todo = [SystemSpec]
    while todo:
        model = todo.pop()
        if model.__name__ in seen:
            continue
        seen[model.__name__] = model
        for info in model.model_fields.values():
            todo += _models(info.annotation)
    return seen


def _declared(model: type[BaseModel], field: str) -> bool:
    """A unit of its own, a sibling field holding it, a unit per key, or another value's unit."""
    extra = model.model_fields[field].json_schema_extra
    extra = extra if isinstance(extra, dict) else {}
    return (unit_of(model, field) is not None or unit_field_of(model, field) is not None
            or "unit_by_key" in extra or "unit_same_as" in extra)


def test_every_numeric_result_field_declares_its_unit() -> None:
    missing = [f"{name}.{field}" for name, model in sorted(_sections().items())
               if name not in ("Provenance", "Assumption")
               for field, info in model.model_fields.items()
               if not info.exclude and field not in NOT_QUANTITIES and _numeric(info.annotation)
               and not _declared(model, field)]
    assert not missing, f"numeric result fields without a unit (declare them with quantity()): {missing}"


def test_declared_units_are_known_and_in_the_schema() -> None:
    for model in _sections().values():
        for field in model.model_fields:
            unit = unit_of(model, field)
            assert unit is None or unit in UNITS
    schema = SystemSpec.model_json_schema(mode="serialization")
    assert schema["$defs"]["ComputeLayer"]["properties"]["step_time_s"]["unit"] == "s"
    assert schema["$defs"]["FacilityLayer"]["properties"]["it_power_w"]["unit"] == "W"


def _extras(value: Any, path: str) -> list[str]:
    found: list[str] = []
    if isinstance(value, BaseModel):
        found += [f"{path}.{k}" for k in (value.model_extra or {})]
        for name in type(value).model_fields:
            found += _extras(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, list):
        for v in value:
            found += _extras(v, f"{path}[]")
    elif isinstance(value, dict):
        for k, v in value.items():
            found += _extras(v, f"{path}.{k}")
    return found


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_no_example_result_holds_an_undeclared_key(path: Path) -> None:
    spec = compile_workload(path)
    assert not sorted(set(_extras(spec, ""))), "declare these keys (with their unit) in spine/sections_*.py"


@pytest.mark.parametrize("path", EXAMPLES[:4], ids=lambda p: p.stem)
def test_a_document_read_back_from_json_is_the_same_document(path: Path) -> None:
    spec = compile_workload(path)
    again = SystemSpec.model_validate(spec.model_dump(mode="json"))
    assert type(again.objective) is type(spec.objective) and type(again.compute) is type(spec.compute)
    assert again.model_dump(mode="json") == spec.model_dump(mode="json")
