"""`wkc node-check` end to end: on this machine, on a shipped snapshot against a sized spec, and
`--fleet` over the shipped sample reports."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from workload_compiler.cli.main import app

NODES = Path(__file__).parents[1] / "fixtures" / "nodes"
EXAMPLES = Path(__file__).parents[2] / "examples"
runner = CliRunner()


def test_on_this_machine() -> None:
    r = runner.invoke(app, ["node-check", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["schema"] == "wkc-node-check/1" and doc["report"]["threads"] >= 1
    assert {i["status"] for i in doc["items"]} <= {"pass", "fail", "not applicable here"}
    r = runner.invoke(app, ["node-check"])
    assert r.exit_code == 0 and "driver_consistency" in r.stdout


def test_a_snapshot_against_a_spec_and_saving_one(tmp_path: Path) -> None:
    r = runner.invoke(app, ["node-check", "--snapshot", str(NODES / "dgx-a02.snapshot.json"), "--spec",
                            str(EXAMPLES / "llama3-70b-plan.yaml"), "--json"])
    assert r.exit_code == 0, r.output
    items = {i["id"]: i["status"] for i in json.loads(r.stdout)["items"]}
    assert items["rdma_transport"] == "fail" and items["gpus_present"] == "pass"
    strict = runner.invoke(app, ["node-check", "--snapshot", str(NODES / "dgx-a02.snapshot.json"), "--strict"])
    assert strict.exit_code == 1
    saved = tmp_path / "me.json"
    assert runner.invoke(app, ["node-check", "--save-snapshot", str(saved), "--json"]).exit_code == 0
    again = runner.invoke(app, ["node-check", "--snapshot", str(saved), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["report"]["source"] == "live"


def test_fleet_over_the_sample_reports() -> None:
    r = runner.invoke(app, ["node-check", "--fleet", str(NODES / "fleet"), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["nodes"] == ["dgx-a01", "dgx-a02", "dgx-a03"]
    assert "gpu driver" in {d["key"] for d in doc["differences"]}
    text = runner.invoke(app, ["node-check", "--fleet", str(NODES / "fleet")])
    flat = " ".join(text.stdout.replace("│", " ").split())
    assert "535.104.05" in flat and "dgx-a02" in flat
    assert runner.invoke(app, ["node-check", "--fleet", str(NODES / "fleet"), "--strict"]).exit_code == 1


def test_bad_inputs_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text((NODES / "fleet" / "dgx-a01.json").read_text())
    for args in (["--fleet", str(tmp_path)], ["--fleet", str(tmp_path / "none")],
                 ["--snapshot", str(tmp_path / "missing.json")], ["--snapshot", str(NODES / "make_fixtures.py")]):
        r = runner.invoke(app, ["node-check", *args])
        assert r.exit_code == 2 and "Traceback" not in r.output, args
    (tmp_path / "junk.json").write_text("{}")
    r = runner.invoke(app, ["node-check", "--fleet", str(tmp_path)])
    assert r.exit_code == 2 and "node-check report" in r.stderr
