"""Every seed-000 concept of issue 9 in the result document (JSON) and in the terminal and
Markdown reports: sheet, next questions, learning path, operating boundary, boundary register,
operations, acceptance, MIG, the generic data path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workload_compiler.cli.main import app
from workload_compiler.spine.result import SystemSpec

EXAMPLES = Path(__file__).parents[2] / "examples"
runner = CliRunner()
SECTIONS = ["sheet", "next_questions", "operating_boundary", "boundary_register", "operations", "acceptance"]


def run(*args: str) -> str:
    result = runner.invoke(app, list(args), env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("name", ["llama3.1-405b-4096-h100.yaml", "image-classifier-generic.yaml",
                                  "llama3.1-8b-mig.yaml"])
def test_json_holds_every_engagement_section(name: str) -> None:
    doc = json.loads(run("compile", str(EXAMPLES / name), "--json"))
    for key in SECTIONS:
        assert doc[key], key
    assert doc["boundary_register"]["note"].startswith("No capacity is implied")
    assert doc["next_questions"]["learning_path"]
    if name.startswith("image"):
        assert doc["pipeline"]["stages"] and doc["kind"] == "generic"
    if "mig" in name:
        assert doc["mig"]["profiles"]


def test_markdown_has_every_section_as_valid_tables() -> None:
    md = run("compile", str(EXAMPLES / "llama3.1-405b-4096-h100.yaml"), "--md")
    for heading in ("## Workload sheet", "## Next questions", "## Operating boundary", "## Boundary register",
                    "## Operations load", "## Acceptance targets"):
        assert heading in md
    assert "No capacity is implied by this register." in md and "Learning path:" in md
    # the engagement sections' tables (the layer tables are issue 12's to fix)
    lines = md[md.index("## Workload sheet"):md.index("## Assumptions requiring validation")].splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---"):
            width = lines[i - 1].count("|")
            j = i + 1
            while j < len(lines) and lines[j].startswith("|"):
                assert lines[j].replace("\\|", "").count("|") == width, lines[j]
                j += 1


def test_terminal_report_shows_the_sections_and_the_data_path() -> None:
    out = run("compile", str(EXAMPLES / "image-classifier-generic.yaml"))
    for title in ("Data path", "Workload sheet", "Next questions", "Operating boundary", "Boundary register",
                  "Operations load", "Acceptance targets"):
        assert title in out
    assert "to_measure" in out and "whether the input keeps up is open" in out


def test_result_sections_declare_units_in_the_json_schema() -> None:
    schema = json.dumps(SystemSpec.model_json_schema())
    for key in ("failures_per_week", "restore_time_s", "time_to_result_s", "memory_bytes", "samples_per_s"):
        assert f'"{key}"' in schema
    props = SystemSpec.model_json_schema()["$defs"]["OperationsLoad"]["properties"]
    assert props["restore_time_s"]["unit"] == "s" and props["failures_per_week"]["unit"] == "count"
