"""Units live in the types (DESIGN: 'Units live in the types')."""

import pytest
from pydantic import BaseModel

from workload_compiler.quantity import quantity, unit_of


class _Out(BaseModel):
    step_time_s: float = quantity("s", "one optimizer step")
    name: str = "x"


def test_unit_is_in_the_field_and_the_schema() -> None:
    assert unit_of(_Out, "step_time_s") == "s"
    assert unit_of(_Out(step_time_s=1.0), "name") is None
    prop = _Out.model_json_schema()["properties"]["step_time_s"]
    assert prop["unit"] == "s" and prop["description"] == "one optimizer step"


def test_unknown_unit_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown unit"):
        quantity("furlongs")  # type: ignore[arg-type]
