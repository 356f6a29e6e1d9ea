"""`wkc profile` end to end on this machine (small sizes: the default size is timed by
benchmarks/bench_profile.py): three stages apart with spread, the machine, --into accepted by compile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workload_compiler.cli.main import app

EXAMPLES = Path(__file__).parents[2] / "examples"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_measured_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WKC_MEASURED_DIR", raising=False)


def test_json_has_three_stages_per_format_with_spread_and_the_machine(tmp_path: Path) -> None:
    r = runner.invoke(app, ["profile", "--size", "1MB", "--repeats", "2", "--workdir", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    stages = {(s["format"], s["stage"]): s for s in doc["stages"]}
    assert set(stages) == {(f, s) for f in ("json", "csv", "image") for s in ("read", "parse", "compute")}
    for s in stages.values():
        assert len(s["time"]["samples_s"]) == 2 and s["time"]["stdev_s"] >= 0 and s["rate"] > 0
    m = doc["machine"]
    assert m["cpu_model"] and m["cores"] >= 1 and m["python"] and m["libraries"]["numpy"] and m["os"]
    assert "GPU training speed" in doc["does_not_predict"]
    assert list(tmp_path.iterdir()) == []          # the generated data set is removed


def test_the_table_shows_the_stages_and_what_it_does_not_predict(tmp_path: Path) -> None:
    r = runner.invoke(app, ["profile", "--size", "1MB", "--repeats", "2", "--format", "csv", "--workdir",
                            str(tmp_path)])
    assert r.exit_code == 0, r.output
    text = " ".join(r.stdout.replace("│", " ").split())
    for word in ("read", "parse", "compute", "What this does not predict", "GPU training speed",
                 "host.read_bytes_per_s"):
        assert word in text


def test_into_writes_values_that_compile_accepts_and_records(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text((EXAMPLES / "llama3-70b-plan.yaml").read_text())
    r = runner.invoke(app, ["profile", "--size", "1MB", "--repeats", "2", "--workdir", str(tmp_path), "--into",
                            str(sheet)])
    assert r.exit_code == 0, r.output
    c = runner.invoke(app, ["compile", str(sheet), "--json"])
    assert c.exit_code == 0, c.output
    doc = json.loads(c.stdout)
    fields = {e["field"]: e for e in doc["measured"]["entries"]}
    assert "host.read_bytes_per_s" in fields and "host.parse_records_per_s_per_core.json" in fields
    assert all(e["machine_kind"] == "cpu" and e["status"] == "recorded" for e in fields.values())
    assert doc["provenance"]["measured.host.read_bytes_per_s"]["source"] == "measured"
    # a second profile merges over the first
    r = runner.invoke(app, ["profile", "--size", "1MB", "--repeats", "2", "--format", "json", "--workdir",
                            str(tmp_path), "--into", str(sheet)])
    assert r.exit_code == 0
    assert runner.invoke(app, ["compile", str(sheet), "--json"]).exit_code == 0


def test_input_dir_profiles_existing_files(tmp_path: Path) -> None:
    data = tmp_path / "data"
    r = runner.invoke(app, ["profile", "--size", "1MB", "--repeats", "2", "--workdir", str(tmp_path), "--keep",
                            "--json"])
    assert r.exit_code == 0
    root = Path(json.loads(r.stdout)["dataset"]["root"])
    root.rename(data)
    r = runner.invoke(app, ["profile", "--input", str(data), "--repeats", "2", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["dataset"]["source"] == "input" and set(doc["dataset"]["formats"]) == {"json", "csv", "image"}
    assert data.exists()                            # an input directory is never removed


@pytest.mark.parametrize("args", [["--size", "lots"], ["--size", "10GiB0"], ["--format", "parquet"],
                                  ["--input", "/nonexistent/dir"], ["--size", "10"]])
def test_bad_options_are_clear_errors(args: list[str]) -> None:
    r = runner.invoke(app, ["profile", *args])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_profile_into_feeds_a_sheet_field_that_compile_binds_to_this_cpu(tmp_path: Path) -> None:
    """The article's exercise into the article's sheet: `wkc profile --into` writes the measured block,
    a sheet field names its entry (or holds a copy of it), and compile applies it only where the
    sized host CPU is this one."""
    import yaml
    data = yaml.safe_load((EXAMPLES / "image-classifier-generic.yaml").read_text())
    data["pipeline"]["cpu_cores_per_gpu"] = 8
    data["sheet"]["fields"]["pipeline.decode_rate_per_core"] = {"measured": "host.parse_records_per_s_per_core.image"}
    sheet = tmp_path / "tmp.yaml"
    sheet.write_text(yaml.safe_dump(data, sort_keys=False))
    r = runner.invoke(app, ["profile", "--size", "100kB", "--repeats", "2", "--format", "image", "--workdir",
                            str(tmp_path), "--into", str(sheet)])
    assert r.exit_code == 0, r.output
    written = yaml.safe_load(sheet.read_text())
    entry = written["measured"]["values"]["host.parse_records_per_s_per_core.image"]
    cpu = entry["machine"]["id"]
    assert entry["machine"]["kind"] == "cpu" and entry["unit"] == "items/s" and entry["value"] > 0

    # sized on the DGX H100's host CPU: this machine's CPU is another one, so the value is refused
    bad = runner.invoke(app, ["compile", str(sheet), "--json"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert "sheet.fields.pipeline.decode_rate_per_core.measured.machine" in bad.stderr and cpu in bad.stderr
    assert "compute.host_cpu" in bad.stderr

    # the nodes' host CPU named as the OS reports it: the profile's value is the decode rate
    written["compute"]["host_cpu"] = cpu
    sheet.write_text(yaml.safe_dump(written, sort_keys=False))
    ok = runner.invoke(app, ["compile", str(sheet), "--json"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout)
    row = next(r for r in doc["sheet"]["rows"] if r["item"] == "decode rate per core")
    assert row["status"] == "measured" and row["value"] == entry["value"] and cpu in row["machine"]
    stage = next(s for s in doc["pipeline"]["stages"] if s["name"] == "cpu_decode")
    assert stage["samples_per_s"] == pytest.approx(8 * 8 * entry["value"])
    prov = doc["provenance"]["compute.decode_rate_per_core"]
    assert prov["source"] == "measured" and cpu in prov["machine"] and "wkc profile" in prov["machine"]
    (m,) = [e for e in doc["measured"]["entries"] if e["field"] == "host.parse_records_per_s_per_core.image"]
    assert m["status"] == "applied"

    # the same entry copied into the sheet field is the same value, the same format
    written["sheet"]["fields"]["pipeline.decode_rate_per_core"] = {"measured": entry}
    del written["measured"]
    sheet.write_text(yaml.safe_dump(written, sort_keys=False))
    inline = runner.invoke(app, ["compile", str(sheet), "--json"])
    assert inline.exit_code == 0, inline.output
    stage = next(s for s in json.loads(inline.stdout)["pipeline"]["stages"] if s["name"] == "cpu_decode")
    assert stage["samples_per_s"] == pytest.approx(8 * 8 * entry["value"])


def test_an_into_file_it_cannot_write_fails_before_the_run(tmp_path: Path) -> None:
    bad = tmp_path / "sheet.yaml"
    bad.write_text("kind: [\n")
    r = runner.invoke(app, ["profile", "--size", "100kB", "--repeats", "2", "--workdir", str(tmp_path),
                            "--into", str(bad), "--json"])
    assert r.exit_code == 2 and "--into" in r.stderr and r.stdout == ""     # nothing was measured
    assert bad.read_text() == "kind: [\n"
