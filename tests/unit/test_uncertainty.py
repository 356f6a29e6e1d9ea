"""Uncertainty bands (issue 7 item 6): each headline number gets the range the published value lay
in for held-out runs of its kind (catalog/data/uncertainty.yaml, written by tools/fit_training.py
and copied from tools/fit_inference.py / tools/fit_memory.py); a kind never validated gets a
sentence, not a band."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from shared_data import REPO_ROOT
from workload_compiler import compile_workload
from workload_compiler.catalog.loader import package_yaml
from workload_compiler.spine import uncertainty as u

EXAMPLES = REPO_ROOT / "examples"


def test_kind_of_a_case() -> None:
    assert u.case_kind("Blackwell Ultra", True, "mxfp8") == "Blackwell moe fp8"
    assert u.case_kind("Hopper (+ Grace CPU, NVLink-C2C)", False, "bf16") == "Hopper dense bf16"
    assert u.case_kind("'Ampere'", False, "nvfp4") == "Ampere dense fp4"


def test_a_time_band_follows_the_held_out_errors() -> None:
    """published = predicted / (1 + e): the throughput sections are symmetric, the published value
    within a factor f of the prediction either way (factor_p80; f = 1.07 turns 100 s into 93.5 ..
    107 s)."""
    entry = package_yaml(u.TABLE)["training_step_time"]["kinds"]["Ampere dense bf16"]
    f = entry["factor_p80"]
    b = u.time_band(100.0, "training_step_time", "Ampere dense bf16")
    assert b.low == pytest.approx(100.0 / f) and b.high == pytest.approx(100.0 * f)
    r = u.rate_band(100.0, "training_step_time", "Ampere dense bf16")       # a rate moves the other way
    assert r.low == pytest.approx(100.0 / f) and r.high == pytest.approx(100.0 * f)
    assert f"{entry['n']} published Ampere dense bf16 runs" in b.basis and "either way" in b.basis


def test_an_inference_rate_band_uses_errors_defined_on_the_rate() -> None:
    f = package_yaml(u.TABLE)["inference_throughput"]["kinds"]["Hopper dense fp8"]["factor_p80"]
    b = u.rate_band(1000.0, "inference_throughput", "Hopper dense fp8")
    assert b.low == pytest.approx(1000.0 / f) and b.high == pytest.approx(1000.0 * f)


def test_the_symmetric_factor_is_the_80th_percentile_of_the_log_error() -> None:
    """From 10 runs up exp of NumPy's (linear) 80th percentile of |ln(1 + e)|; below, of the largest.
    An error of 100% or more still gives a finite band (a time within a factor 2.2 either way)."""
    import numpy as np
    errors = [-0.30, -0.02, 0.01, 0.03, -0.05, 0.06, 0.08, -0.09, 0.10, 0.12, 0.2]
    expected = float(np.exp(np.percentile(np.abs(np.log1p(errors)), 80)))
    assert u.error_factor(errors) == pytest.approx(expected)
    assert u.error_factor([0.05, -0.21, 0.1]) == pytest.approx(1 / 0.79)
    assert u.error_factor([0.1, 1.2, -0.1]) == pytest.approx(2.2)


def test_only_the_throughput_sections_are_symmetric() -> None:
    """Training step time and serving throughput print a factor either way; the memory section keeps
    its signed 10th / 90th percentiles, which the planner's tight-memory rule reads
    (planner/tight_memory.py). Below 10 runs the factor covers every error seen."""
    table = package_yaml(u.TABLE)
    for section in ("training_step_time", "inference_throughput", "hpc_time_per_step"):
        for kind, entry in table[section]["kinds"].items():
            if entry["n"] >= u.MIN_RUNS:
                f = entry["factor_p80"]
                assert u.error_range(section, kind)[:2] == pytest.approx((1 / f - 1, f - 1))
                if entry["n"] < u.MANY_RUNS:
                    assert 1 / f - 1 <= entry["low"] + 1e-4 and entry["high"] <= f - 1 + 1e-4
    memory = table["training_memory"]["kinds"]["Hopper dense bf16"]
    assert u.error_range("training_memory", "Hopper dense bf16")[:2] == (memory["low"], memory["high"])


def test_coverage_counts_the_rows_inside_their_kinds_band() -> None:
    """validation/band_coverage.py: inside when e_low <= e <= e_high; a kind never validated has no band."""
    from workload_compiler.validation.band_coverage import coverage
    f = package_yaml(u.TABLE)["training_step_time"]["kinds"]["Hopper dense bf16"]["factor_p80"]
    rows = [{"kind": "Hopper dense bf16", "error_pct": 100 * (f - 1) * 0.99},
            {"kind": "Hopper dense bf16", "error_pct": 100 * (1 / f - 1) * 1.01},
            {"kind": "CDNA3 dense fp8", "error_pct": 0.0}]
    c = coverage(rows, "training_step_time")
    assert (c.inside, c.banded, c.unbanded) == (1, 2, 1) and "1 of 2 (50%)" in c.line()


def test_no_band_where_no_case_of_the_kind_was_validated() -> None:
    b = u.time_band(10.0, "training_step_time", "CDNA3 dense fp8")
    assert b.low is None and b.high is None and "no published CDNA3 dense fp8 run" in b.basis
    one = u.time_band(10.0, "training_step_time", "Hopper moe bf16")   # one held-out run is not a spread
    assert one.low is None and "too few for a band" in one.basis


def test_a_gpu_count_band_is_whole_nodes() -> None:
    b = u.count_band(1024, "training_step_time", "Hopper dense bf16", 8)
    assert b.low is not None and b.high is not None
    assert b.low % 8 == 0 and b.high % 8 == 0 and b.low <= 1024 <= b.high


def test_every_training_headline_number_has_a_band_or_a_sentence() -> None:
    spec = compile_workload(EXAMPLES / "gpt3-175b-a100.yaml")
    for key in ("compute.step_time_s", "compute.tokens_per_s", "objective.time_to_train_s",
                "objective.goodput_adjusted_time_to_train_s", "compute.memory_per_gpu_bytes"):
        assert key in spec.uncertainty and spec.uncertainty[key].basis
    step = spec.uncertainty["compute.step_time_s"]
    assert step.low is not None and step.high is not None
    # where held-out Ampere runs' published step times lay around the prediction x: [x/(1+e_hi),
    # x/(1+e_lo)]; the model over-predicted nearly all of them, so the band may sit just below x
    r = u.error_range("training_step_time", "Ampere dense bf16")
    assert r is not None
    x = spec.compute.step_time_s  # type: ignore[union-attr]
    assert step.low == pytest.approx(x / (1.0 + r[1])) and step.high == pytest.approx(x / (1.0 + r[0]))
    assert step.low < step.high and step.low < x


def test_bands_in_json_terminal_and_markdown() -> None:
    from workload_compiler.cli.main import app
    runner = CliRunner()
    path = str(EXAMPLES / "gpt3-175b-a100.yaml")
    doc = json.loads(runner.invoke(app, ["compile", path, "--json"]).stdout)
    band = doc["uncertainty"]["compute.tokens_per_s"]
    assert set(band) >= {"low", "high", "basis"} and band["low"] < band["high"]
    assert "How sure" in runner.invoke(app, ["compile", path]).stdout
    assert "## How sure" in runner.invoke(app, ["compile", path, "--md"]).stdout


def test_a_band_says_when_no_run_on_the_gpu_itself_was_validated() -> None:
    """A GB300 case takes its generation's band (runs on B200 and GB200); its basis says that no run on
    GB300 itself was among them. An H100 case's basis says nothing of the kind."""
    table = package_yaml(u.TABLE)
    assert set(table["training_step_time"]["accelerators"]) == {"a100-sxm-80gb", "h100-sxm", "b200", "gb200"}
    assert set(table["inference_throughput"]["accelerators"]) == {"h100-sxm", "h200-sxm", "b200"}
    new = u.error_range("training_step_time", "Blackwell dense fp8", "gb300")
    seen = u.error_range("training_step_time", "Blackwell dense fp8", "b200")
    assert new is not None and seen is not None and new[:2] == seen[:2]
    assert "no run on gb300 itself was validated" in new[2] and "no run on" not in seen[2]
    band = u.rate_band(1000.0, "inference_throughput", "Blackwell dense fp4", "gb200")
    assert band.low is not None and "no run on gb200 itself" in band.basis


def test_hpc_headline_numbers_have_the_band_of_their_solver_class() -> None:
    """The molecular-dynamics example: its time per step and time to solution lie where the published
    GROMACS and AMBER runs lay around their predictions (each predicted without its own GPU's runs,
    tools/hpc_uncertainty.py); a rate's error widens a time as x / (1 + e). A class no published run
    checks (weather_climate) says so instead of a band."""
    spec = compile_workload(EXAMPLES / "hpc-molecular-dynamics.yaml")
    r = u.error_range("hpc_time_per_step", "molecular_dynamics")
    assert r is not None and "9 published molecular_dynamics runs" in r[2]
    for key in ("hpc.time_per_step_s", "hpc.time_to_solution_s"):
        band = spec.uncertainty[key]
        x = getattr(spec.hpc, key.split(".")[1])
        assert band.low == pytest.approx(x * (1.0 + r[0])) and band.high == pytest.approx(x * (1.0 + r[1]))
        assert band.low < x < band.high
    weather = compile_workload(EXAMPLES / "hpc-weather-climate.yaml")
    basis = weather.uncertainty["hpc.time_per_step_s"]
    assert basis.low is None and "no published weather_climate run was validated" in basis.basis


def test_an_hpc_band_on_another_gpu_says_none_of_its_runs_was_validated() -> None:
    families = set(package_yaml(u.TABLE)["hpc_time_per_step"]["gpu_families"])
    assert "mi300x" not in families and "h100" in families
    other = u.error_range("hpc_time_per_step", "cfd_lbm", "mi300x")
    seen = u.error_range("hpc_time_per_step", "cfd_lbm", "h100-sxm")
    assert other is not None and seen is not None and other[:2] == seen[:2]
    assert "no mi300x run was validated" in other[2] and "was validated (runs on" not in seen[2]


def test_a_count_below_a_node_is_banded_in_gpus() -> None:
    """An HPC run on 2 GPUs of an 8-GPU node: rounding its band to whole nodes gave '8 to 8', a band
    that does not hold the count; whole GPUs hold it."""
    b = u.count_band(2, "hpc_time_per_step", "cfd_lbm", 8)
    assert b.low is not None and b.high is not None and b.low <= 2 <= b.high < 8
