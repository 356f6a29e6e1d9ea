"""Watts to work for every archetype: `wkc fit` with serving targets answers replicas and tokens/s
at the SLO; with an HPC intake, the time to solution in the hall; and a facility pin in an
inference intake fills the hall with the fleet."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from workload_compiler import compile_workload
from workload_compiler.cli.main import app

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_fit_serves_llama_at_the_slo() -> None:
    result = CliRunner().invoke(app, ["fit", "--power", "2MW", "--rack-power", "40kW", "--model", "llama3.3-70b",
                                      "--ttft", "500ms", "--availability", "n+1", "--gpu", "h100-sxm", "--json"])
    assert result.exit_code == 0, result.output
    row = next(r for r in json.loads(result.stdout)["systems"] if r["system"] == "dgx-h100")
    assert row["answer_feasible"] and row["serve_gpus"] <= row["gpus"]
    assert row["ttft_s"] <= 0.5 and row["output_tokens_per_s"] > 0
    if row["mode"] == "aggregated":
        assert row["replicas"] * row["gpus_per_replica"] == row["serve_gpus"]
    assert "serves" in row["answer"] and "replicas of" in row["answer"] and "N+1" in row["answer"]
    assert row["facility_power_w"] <= 2e6


def test_fit_answers_time_to_solution_for_an_hpc_intake() -> None:
    result = CliRunner().invoke(app, ["fit", "--power", "500kW", "--rack-power", "40kW", "--intake",
                                      str(EXAMPLES / "hpc-fft-spectral.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["systems"]
    assert len(rows) == 1 and rows[0]["system"] == "dgx-a100"
    row = rows[0]
    assert row["time_to_solution_s"] > 0 and row["solve_gpus"] <= row["gpus"]
    assert row["fastest_time_to_solution_s"] <= row["time_to_solution_s"]
    assert row["fastest_gpus"] <= row["gpus"] and "solves it in" in row["answer"]


def test_a_hall_in_an_inference_intake_is_filled_by_the_fleet() -> None:
    data = {"kind": "inference", "model": {"preset": "llama3.3-70b"},
            "serving": {"weights": "fp8", "ttft": {"p99": "1s"}, "tpot": {"p99": "50ms"}},
            "compute": {"accelerator": "h200-sxm"}, "facility": {"power": "500kW", "rack_power": "40kW"}}
    spec = compile_workload(data)
    assert spec.feasible and spec.compute is not None
    held = spec.provenance["facility.hall_gpus"]
    assert held.source.value == "derived"
    assert (spec.facility or {})["facility_power_w"] <= 500e3 * 1.001
    assert (spec.inference or {})["request_rate_per_s"] > 0 and spec.compute["gpus"] >= 8


def test_a_hall_in_an_hpc_intake_without_target_solves_fastest() -> None:
    data = {"kind": "hpc", "application": {"class": "cfd_lbm"}, "problem": {"size": "512^3"}, "steps": 20000,
            "compute": {"accelerator": "h100-sxm"}, "facility": {"power": "300kW", "rack_power": "40kW"}}
    hall = compile_workload(data)
    alone = compile_workload({k: v for k, v in data.items() if k != "facility"})
    assert hall.compute is not None and alone.compute is not None
    assert hall.compute["gpus"] >= alone.compute["gpus"]
    assert (hall.hpc or {})["time_to_solution_s"] <= (alone.hpc or {})["time_to_solution_s"]
    assert (hall.facility or {})["facility_power_w"] <= 300e3 * 1.001


def test_a_given_load_says_what_share_of_the_hall_it_takes(tmp_path: Path) -> None:
    intake = tmp_path / "serve.yaml"
    intake.write_text("kind: inference\nmodel: {preset: llama3.1-8b}\ncompute: {accelerator: h100-sxm}\n"
                      "serving: {input_tokens: 1000, output_tokens: 500, request_rate: 20/s, weights: fp8}\n")
    result = CliRunner().invoke(app, ["fit", "--power", "2MW", "--rack-power", "40kW", "--intake", str(intake),
                                      "--json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)["systems"][0]
    assert row["output_tokens_per_s"] == 20 * 500 and row["serve_gpus"] < row["gpus"]
    assert f"on {row['serve_gpus']:,} of the {row['gpus']:,} GPUs it holds" in row["answer"]
