"""The JSON Schemas of the intake and of the result, generated from the pydantic models and
shipped in the package (`schemas/intake.schema.json`, `schemas/result.schema.json`).

The result document's `schema_version` names the schema it follows: the shipped files carry the
same version (`x-schema-version`) and a test fails when the models and the shipped files drift
apart, so a change to either is a change to the other. Regenerate with
`python -m workload_compiler.schema_export --write`.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, TypeAdapter

from .intake.load import known_kinds, workload_model
from .spine.result import SCHEMA_VERSION, SystemSpec

SchemaName = Literal["intake", "result"]
NAMES: tuple[SchemaName, ...] = ("intake", "result")
_ID = "https://workload-compiler.invalid/schemas/{name}/{version}"


def intake_models() -> list[type[BaseModel]]:
    """One intake model per registered kind (training, inference, hpc, ...), in registry order."""
    return [workload_model(kind) for kind in known_kinds()]


def intake_schema() -> dict[str, Any]:
    """Every kind's intake as one schema: `oneOf` the kinds, told apart by `kind`."""
    models = tuple(intake_models())
    union: Any = Annotated[Union[models], Field(discriminator="kind")]  # noqa: UP007 (a runtime tuple)
    schema = TypeAdapter(union).json_schema(mode="validation")
    return _stamp(schema, "intake", "A workload intake (YAML or JSON): every field optional unless marked "
                                     "required; quantities accept units as text ('7B', '2.5MW', '30d').")


def result_schema() -> dict[str, Any]:
    return _stamp(SystemSpec.model_json_schema(mode="serialization"), "result",
                  "The compiled six-layer system specification (plain SI numbers; units in `unit`).")


def _stamp(schema: dict[str, Any], name: str, description: str) -> dict[str, Any]:
    head = {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": _ID.format(name=name, version=SCHEMA_VERSION),
            "title": f"workload-compiler {name}", "description": description,
            "x-schema-version": SCHEMA_VERSION}
    return {**head, **{k: v for k, v in schema.items() if k not in head}}


def generated(name: SchemaName) -> dict[str, Any]:
    return intake_schema() if name == "intake" else result_schema()


def dumps(schema: dict[str, Any]) -> str:
    """Deterministic text: sorted keys, two-space indent, a final newline."""
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def shipped(name: SchemaName) -> str:
    """The schema file shipped with the package (what `wkc schema` prints)."""
    return resources.files(__package__).joinpath(f"schemas/{name}.schema.json").read_text(encoding="utf-8")


def write_shipped() -> list[str]:
    """Regenerate the shipped files from the models (a development step, not run by users)."""
    written = []
    for name in NAMES:
        path = resources.files(__package__).joinpath(f"schemas/{name}.schema.json")
        with resources.as_file(path) as real:
            real.write_text(dumps(generated(name)), encoding="utf-8")
            written.append(str(real))
    return written


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        print("\n".join(write_shipped()))
    else:
        print("usage: python -m workload_compiler.schema_export --write", file=sys.stderr)
        sys.exit(2)
