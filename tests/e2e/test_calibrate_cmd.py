"""`wkc calibrate` end to end: without a GPU it says so, exits 0 and writes nothing; `--from-raw`
analyzes a recorded run and writes the calibration file compile reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from workload_compiler.cli.main import app
from workload_compiler.measure import gpu_bench

FIXTURES = Path(__file__).parents[1] / "fixtures" / "calibration"
runner = CliRunner()


def test_the_real_gpu_probe_never_raises() -> None:
    ok, what = gpu_bench.gpu_status()
    assert isinstance(ok, bool) and what


def test_without_a_gpu_it_says_so_exits_zero_and_writes_nothing(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu_bench, "gpu_status", lambda: (False, "PyTorch sees no GPU"))
    out = tmp_path / "cal"
    r = runner.invoke(app, ["calibrate", "--out", str(out)])
    assert r.exit_code == 0
    assert "No GPU to calibrate" in r.stdout and "nothing was written" in r.stdout
    assert not out.exists()
    r = runner.invoke(app, ["calibrate", "--out", str(out), "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout) == {"gpu": False, "reason": "PyTorch sees no GPU", "written": []}
    assert not out.exists()


def test_from_raw_writes_a_calibration_file_for_that_accelerator(tmp_path: Path) -> None:
    r = runner.invoke(app, ["calibrate", "--from-raw", str(FIXTURES / "h100-sxm.raw.yaml"), "--system", "dgx-h100",
                            "--out", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["written"] == [str(tmp_path / "h100-sxm.yaml")]
    cal = yaml.safe_load((tmp_path / "h100-sxm.yaml").read_text())
    assert cal["schema"] == "wkc-calibration/1" and cal["accelerator"] == "h100-sxm" and cal["synthetic"] is True
    assert cal["values"]["accelerator.gemm_e_max.bf16"]["machine"]["id"] == "h100-sxm"


def test_from_raw_into_an_intake_then_compile(tmp_path: Path) -> None:
    intake = tmp_path / "w.yaml"
    intake.write_text((Path(__file__).parents[2] / "examples" / "llama3-70b-plan.yaml").read_text())
    r = runner.invoke(app, ["calibrate", "--from-raw", str(FIXTURES / "h100-sxm.raw.yaml"), "--out",
                            str(tmp_path / "cal"), "--into", str(intake)])
    assert r.exit_code == 0, r.output
    assert "# Llama 3 70B" in intake.read_text()     # the intake's comments survive
    doc = json.loads(runner.invoke(app, ["compile", str(intake), "--json"]).stdout)
    assert doc["provenance"]["compute.step_time_s"]["source"] == "measured"


def test_an_unknown_device_name_needs_an_accelerator_id(tmp_path: Path) -> None:
    data = yaml.safe_load((FIXTURES / "a100-sxm-80gb.raw.yaml").read_text())
    data["device"]["name"] = "Mystery GPU 9000"
    raw = tmp_path / "x.raw.yaml"
    raw.write_text(yaml.safe_dump(data))
    r = runner.invoke(app, ["calibrate", "--from-raw", str(raw), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "--accelerator" in r.stderr
    r = runner.invoke(app, ["calibrate", "--from-raw", str(raw), "--accelerator", "a100-sxm-80gb",
                            "--out", str(tmp_path / "o")])
    assert r.exit_code == 0 and (tmp_path / "o" / "a100-sxm-80gb.yaml").exists()


def test_a_broken_raw_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema: something-else\n")
    r = runner.invoke(app, ["calibrate", "--from-raw", str(bad)])
    assert r.exit_code == 2 and "wkc-calibration-raw/1" in r.stderr and "Traceback" not in r.output
