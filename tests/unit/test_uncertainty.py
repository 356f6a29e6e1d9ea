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
    """published = predicted / (1 + e): an error range of -5% .. +10% turns 100 s into 90.9 .. 105.3 s."""
    entry = package_yaml(u.TABLE)["training_step_time"]["kinds"]["Ampere dense bf16"]
    b = u.time_band(100.0, "training_step_time", "Ampere dense bf16")
    assert b.low == pytest.approx(100.0 / (1 + entry["high"])) and b.high == pytest.approx(100.0 / (1 + entry["low"]))
    r = u.rate_band(100.0, "training_step_time", "Ampere dense bf16")       # a rate moves the other way
    assert r.low == pytest.approx(100.0 * (1 + entry["low"])) and r.high == pytest.approx(100.0 * (1 + entry["high"]))
    assert "35 published Ampere dense bf16 runs" in b.basis or f"{entry['n']} published" in b.basis


def test_an_inference_rate_band_uses_errors_defined_on_the_rate() -> None:
    entry = package_yaml(u.TABLE)["inference_throughput"]["kinds"]["Hopper dense fp8"]
    b = u.rate_band(1000.0, "inference_throughput", "Hopper dense fp8")
    assert b.low == pytest.approx(1000.0 / (1 + entry["high"])) and b.high == pytest.approx(1000.0 / (1 + entry["low"]))


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
