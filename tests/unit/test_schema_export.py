"""The shipped JSON Schemas are the models' schemas (regenerate with
`python -m workload_compiler.schema_export --write`), carry the result's schema_version, and
validate every bundled example."""

from __future__ import annotations

import json

import jsonschema
import pytest

from shared_data import REPO_ROOT
from workload_compiler import compile_workload
from workload_compiler.intake.load import read_intake
from workload_compiler.schema_export import NAMES, dumps, generated, shipped
from workload_compiler.spine.result import SCHEMA_VERSION

# intakes only (an offers file for `wkc supply` has no `kind`)
EXAMPLES = sorted(p for p in (REPO_ROOT / "examples").glob("*.yaml") if "kind" in (read_intake(p) or {}))


@pytest.mark.parametrize("name", NAMES)
def test_the_shipped_schema_is_the_generated_one(name: str) -> None:
    assert shipped(name) == dumps(generated(name)), (
        f"schemas/{name}.schema.json is stale: run `python -m workload_compiler.schema_export --write` "
        "(and bump SCHEMA_VERSION in spine/result.py when the change is not additive)")


@pytest.mark.parametrize("name", NAMES)
def test_the_schema_carries_the_result_schema_version(name: str) -> None:
    schema = json.loads(shipped(name))
    assert schema["x-schema-version"] == SCHEMA_VERSION and schema["$id"].endswith(f"/{SCHEMA_VERSION}")
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_validates_against_the_intake_schema(example) -> None:  # type: ignore[no-untyped-def]
    as_editor_sees_it = json.loads(json.dumps(read_intake(example), default=str))  # a YAML date is text there
    jsonschema.validate(as_editor_sees_it, json.loads(shipped("intake")))


def test_units_typed_as_text_are_allowed_and_marked() -> None:
    schema = json.loads(shipped("intake"))
    validator = jsonschema.Draft202012Validator(schema)
    intake = {"kind": "training", "model": {"preset": "llama3-8b", "params": "7B"},
              "training": {"tokens": "300B"}, "target": {"time_to_train": "30d"}, "facility": {"power": "2.5MW"}}
    assert not list(validator.iter_errors(intake))
    assert "x-quantity" in json.dumps(schema)
    assert list(validator.iter_errors({**intake, "training": {"tokens": "300B", "seq_lenn": 2}}))  # unknown key


def test_a_result_validates_against_the_result_schema() -> None:
    spec = compile_workload(REPO_ROOT / "examples" / "gpt3-175b-a100.yaml")
    jsonschema.validate(spec.model_dump(mode="json"), json.loads(shipped("result")))


def test_wkc_schema_prints_the_shipped_schema() -> None:
    from typer.testing import CliRunner

    from workload_compiler.cli.main import app

    result = CliRunner().invoke(app, ["schema", "intake"])
    assert result.exit_code == 0 and result.stdout == shipped("intake")
    assert CliRunner().invoke(app, ["schema", "nonsense"]).exit_code == 2
