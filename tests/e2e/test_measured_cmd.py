"""Measured values end to end: refused for another machine (exit 2), applied with `measured`
provenance naming the machine for the right one, in every archetype and in `wkc plan`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from workload_compiler.cli.main import app

EXAMPLES = Path(__file__).parents[2] / "examples"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "calibration"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_measured_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WKC_MEASURED_DIR", raising=False)


def value(v: float, unit: str, kind: str, machine: str, tool: str = "wkc calibrate 0.1.0") -> dict[str, Any]:
    return {"value": v, "unit": unit, "machine": {"kind": kind, "id": machine, "name": "test bench"},
            "date": "2026-05-01", "tool": tool}


def intake_with(example: str, tmp: Path, values: dict[str, Any], **extra: Any) -> Path:
    data = yaml.safe_load((EXAMPLES / example).read_text())
    data["measured"] = {"values": values, **extra}
    path = tmp / example
    path.write_text(yaml.safe_dump(data))
    return path


def compile_json(path: Path) -> tuple[int, dict[str, Any], str]:
    r = runner.invoke(app, ["compile", str(path), "--json"])
    return r.exit_code, (json.loads(r.stdout) if r.exit_code == 0 else {}), r.stderr


def test_a_measurement_of_another_accelerator_is_refused_with_the_reason(tmp_path: Path) -> None:
    path = intake_with("llama3-70b-plan.yaml", tmp_path, {
        "accelerator.hbm_bandwidth_bytes_per_s": value(1.7e12, "B/s", "accelerator", "a100-sxm-80gb")})
    code, _, err = compile_json(path)
    assert code == 2
    assert "measured.values.accelerator.hbm_bandwidth_bytes_per_s" in err
    assert "a100-sxm-80gb" in err and "h100-sxm" in err and "unrelated machine" in err
    assert "Traceback" not in err


def test_a_measurement_of_another_node_type_is_refused(tmp_path: Path) -> None:
    path = intake_with("llama3-70b-plan.yaml", tmp_path, {
        "fabric.scale_up_busbw_bytes_per_s.all_reduce": value(3.6e11, "B/s", "node", "hgx-h100")})
    code, _, err = compile_json(path)
    assert code == 2 and "hgx-h100" in err and "dgx-h100" in err


def test_a_measurement_of_the_sized_machine_is_applied_with_measured_provenance(tmp_path: Path) -> None:
    _, base, _ = compile_json(EXAMPLES / "llama3-70b-plan.yaml")
    path = intake_with("llama3-70b-plan.yaml", tmp_path, {
        "accelerator.gemm_e_max.bf16": value(0.78, "1", "accelerator", "h100-sxm"),
        "accelerator.gemm_kernel_overhead_s.bf16": value(1.0e-5, "s", "accelerator", "h100-sxm"),
        "accelerator.gemm_e_max.fp8": value(0.70, "1", "accelerator", "h100-sxm")})
    code, doc, _ = compile_json(path)
    assert code == 0
    assert doc["compute"]["step_time_s"] < base["compute"]["step_time_s"]   # e_max 0.78 > fitted 0.697
    prov = doc["provenance"]["compute.step_time_s"]
    assert prov["source"] == "measured" and "h100-sxm" in prov["machine"] and "wkc calibrate" in prov["machine"]
    assert prov["formula"] == base["provenance"]["compute.step_time_s"]["formula"]
    assert doc["provenance"]["measured.accelerator.gemm_e_max.bf16"]["source"] == "measured"
    status = {e["field"]: e["status"] for e in doc["measured"]["entries"]}
    assert status["accelerator.gemm_e_max.bf16"] == "applied"
    assert status["accelerator.gemm_e_max.fp8"] == "recorded"      # the run is bf16
    assert base.get("measured") is None and base["provenance"]["compute.step_time_s"]["source"] == "derived"


def test_measured_hbm_moves_inference_and_hpc_results(tmp_path: Path) -> None:
    for example, acc, key in (("llama3.3-70b-chat.yaml", "h200-sxm", "inference.tpot_s"),
                              ("hpc-cfd-lbm.yaml", "h100-sxm", "hpc.time_per_step_s")):
        _, base, _ = compile_json(EXAMPLES / example)
        path = intake_with(example, tmp_path, {"accelerator.hbm_bandwidth_bytes_per_s": value(
            1.5e12, "B/s", "accelerator", acc)})
        code, doc, err = compile_json(path)
        assert code == 0, err
        section, field = key.split(".")
        assert doc[section][field] != pytest.approx(base[section][field], rel=1e-3), example
        assert doc["provenance"][key]["source"] == "measured" and acc in doc["provenance"][key]["machine"]


def test_a_cpu_profile_is_recorded_not_refused_and_not_applied(tmp_path: Path) -> None:
    path = intake_with("llama3-70b-plan.yaml", tmp_path, {
        "host.read_bytes_per_s": value(2.5e8, "B/s", "cpu", "AMD EPYC", tool="wkc profile 0.1.0")})
    code, doc, _ = compile_json(path)
    assert code == 0
    (e,) = doc["measured"]["entries"]
    assert e["status"] == "recorded" and "Xeon Platinum 8480C" in e["note"]
    assert doc["provenance"]["compute.step_time_s"]["source"] == "derived"


def test_a_calibration_dir_applies_to_its_accelerator_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cal = tmp_path / "cal"
    r = runner.invoke(app, ["calibrate", "--from-raw", str(FIXTURES / "h100-sxm.raw.yaml"), "--system", "dgx-h100",
                            "--out", str(cal)])
    assert r.exit_code == 0, r.output
    # relative to the intake file, like hf_config
    path = intake_with("llama3-70b-plan.yaml", tmp_path, {}, calibration_dir="cal")
    code, doc, _ = compile_json(path)
    assert code == 0
    assert {e["status"] for e in doc["measured"]["entries"]} == {"applied"}
    assert all(e["origin"].endswith("h100-sxm.yaml") for e in doc["measured"]["entries"])
    assert doc["provenance"]["compute.mfu"]["source"] == "measured"
    # the same library through the environment; an A100 intake does not use it and is not refused
    monkeypatch.setenv("WKC_MEASURED_DIR", str(cal))
    code, a100, _ = compile_json(EXAMPLES / "gpt3-175b-a100.yaml")
    assert code == 0 and a100["measured"]["entries"] == []
    assert a100["provenance"]["compute.step_time_s"]["source"] == "derived"
    code, h100, _ = compile_json(EXAMPLES / "llama3-70b-plan.yaml")
    assert code == 0 and h100["compute"]["step_time_s"] == pytest.approx(doc["compute"]["step_time_s"])


def test_an_intake_entry_wins_over_the_library_for_the_same_field(tmp_path: Path) -> None:
    cal = tmp_path / "cal"
    runner.invoke(app, ["calibrate", "--from-raw", str(FIXTURES / "h100-sxm.raw.yaml"), "--out", str(cal)])
    path = intake_with("llama3-70b-plan.yaml", tmp_path, {
        "accelerator.hbm_bandwidth_bytes_per_s": value(2.0e12, "B/s", "accelerator", "h100-sxm")},
        calibration_dir=str(cal))
    code, doc, _ = compile_json(path)
    assert code == 0
    hbm = [e for e in doc["measured"]["entries"] if e["field"] == "accelerator.hbm_bandwidth_bytes_per_s"]
    assert [(e["value"], e["origin"]) for e in hbm] == [(2.0e12, "intake")]


def test_plan_uses_the_same_measurements_and_refusals(tmp_path: Path) -> None:
    base = json.loads(runner.invoke(app, ["plan", str(EXAMPLES / "llama3-70b-plan.yaml"), "--json"]).stdout)
    good = intake_with("llama3-70b-plan.yaml", tmp_path, {
        "accelerator.hbm_bandwidth_bytes_per_s": value(1.0e12, "B/s", "accelerator", "h100-sxm")})
    r = runner.invoke(app, ["plan", str(good), "--json"])
    assert r.exit_code == 0
    assert json.loads(r.stdout)["layouts"][0]["step_time_s"] > base["layouts"][0]["step_time_s"]
    bad = intake_with("llama3-70b-plan.yaml", tmp_path, {
        "accelerator.hbm_bandwidth_bytes_per_s": value(1.0e12, "B/s", "accelerator", "b200")})
    assert runner.invoke(app, ["plan", str(bad), "--json"]).exit_code == 2


def test_a_malformed_entry_is_a_clear_input_error(tmp_path: Path) -> None:
    path = intake_with("llama3-70b-plan.yaml", tmp_path, {
        "accelerator.hbm_bandwidth_bytes_per_s": {"value": 2e12, "unit": "B/s", "date": "2026-05-01"}})
    code, _, err = compile_json(path)
    assert code == 2 and "machine" in err and "Traceback" not in err


def test_the_reports_show_the_measured_values_with_their_machine(tmp_path: Path) -> None:
    path = intake_with("llama3-70b-plan.yaml", tmp_path, {
        "accelerator.hbm_bandwidth_bytes_per_s": value(2.9e12, "B/s", "accelerator", "h100-sxm")})
    md = runner.invoke(app, ["compile", str(path), "--md"])
    assert md.exit_code == 0
    row = next(line for line in md.stdout.splitlines() if line.startswith("| accelerator.hbm_bandwidth_bytes_per_s"))
    assert "2.9e+12 B/s" in row and "applied" in row and "h100-sxm" in row
    assert "measured: training step-time model" in md.stdout          # the step time's provenance
    term = runner.invoke(app, ["compile", str(path)])
    assert term.exit_code == 0 and "Measured (bound to their machines)" in term.stdout


def test_a_bus_bandwidth_measured_on_the_node_moves_the_generic_pipelines_all_reduce(tmp_path: Path) -> None:
    _, base, _ = compile_json(EXAMPLES / "image-classifier-generic.yaml")
    path = intake_with("image-classifier-generic.yaml", tmp_path, {
        "fabric.scale_up_busbw_bytes_per_s.all_reduce": value(1.0e11, "B/s", "node", "dgx-h100")})
    code, doc, err = compile_json(path)
    assert code == 0, err
    (e,) = doc["measured"]["entries"]
    assert e["status"] == "applied"                             # the generic model reads it
    assert doc["pipeline"]["allreduce_s"] > base["pipeline"]["allreduce_s"]   # 100 GB/s < 0.8 x 450 GB/s
    assert doc["provenance"]["pipeline.pipeline_samples_per_s"]["source"] == "measured"
    bad = intake_with("image-classifier-generic.yaml", tmp_path, {
        "fabric.scale_up_busbw_bytes_per_s.all_reduce": value(1.0e11, "B/s", "node", "dgx-a100")})
    code, _, err = compile_json(bad)
    assert code == 2 and "dgx-a100" in err and "dgx-h100" in err


def test_a_sheet_value_for_another_machine_kind_is_refused_with_exit_2(tmp_path: Path) -> None:
    data = yaml.safe_load((EXAMPLES / "image-classifier-generic.yaml").read_text())
    data["sheet"]["fields"]["pipeline.decode_rate_per_core"] = {
        "measured": value(260, "items/s", "node", "dgx-h100", tool="loader timing")}
    path = tmp_path / "wrong-kind.yaml"
    path.write_text(yaml.safe_dump(data))
    code, _, err = compile_json(path)
    assert code == 2 and "Traceback" not in err
    assert "sheet.fields.pipeline.decode_rate_per_core.measured.machine.kind" in err
    assert "property of the host CPU model" in err and "unrelated machine" in err
