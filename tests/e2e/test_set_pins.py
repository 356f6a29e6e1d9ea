"""`wkc compile FILE --set KEY=VALUE`: select a layer, pin a value, recompile. Every layer's keys
are accepted (compute, fabric, storage, reliability, software, facility), the result lists its
pins, a typo names the nearest keys, and a pin that contradicts another pin is a collision."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from workload_compiler import compile_workload, recompile
from workload_compiler.spine.result import ComputeLayer

GPT3 = Path(__file__).parents[2] / "examples" / "gpt3-175b-a100.yaml"
runner = CliRunner()


def _doc(*sets: str) -> dict[str, Any]:
    args = ["compile", str(GPT3), "--json"]
    for s in sets:
        args += ["--set", s]
    result = runner.invoke(app_(), args)
    assert result.exit_code in (0, 3), result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def app_() -> Any:
    from workload_compiler.cli.main import app
    return app


@pytest.fixture(scope="module")
def base() -> dict[str, Any]:
    return _doc()


def test_compute_pin(base: dict[str, Any]) -> None:
    doc = _doc("compute.accelerator=h100-sxm")
    assert doc["pins"] == {"compute.accelerator": "h100-sxm"}
    assert doc["compute"]["accelerator"] == "h100-sxm"
    assert doc["compute"]["step_time_s"] < base["compute"]["step_time_s"]


def test_fabric_pin(base: dict[str, Any]) -> None:
    doc = _doc("fabric.oversubscription=4")
    assert doc["compute"]["scale_out_bytes_per_s_per_gpu"] < base["compute"]["scale_out_bytes_per_s_per_gpu"]
    assert doc["compute"]["step_time_s"] > base["compute"]["step_time_s"]
    assert doc["fabric"]["scale_out"]["oversubscription"] > 1


def test_storage_pin(base: dict[str, Any]) -> None:
    doc = _doc("storage.checkpoint_mode=async")
    assert doc["storage"]["checkpoint_stall_s"] < base["storage"]["checkpoint_stall_s"]
    assert doc["provenance"]["storage.checkpoint_mode"]["source"] == "given"


def test_reliability_pin(base: dict[str, Any]) -> None:
    doc = _doc("reliability.failures_per_gpu_day=0.005")
    assert doc["reliability"]["goodput"] < base["reliability"]["goodput"]


def test_software_pin(base: dict[str, Any]) -> None:
    doc = _doc("software.access_model=kubernetes")
    assert doc["software"]["access_model"] == "kubernetes" != base["software"]["access_model"]


def test_facility_pin(base: dict[str, Any]) -> None:
    doc = _doc("facility.pue=1.2", "facility.cooling=dlc")
    assert doc["facility"]["pue"] == 1.2 and doc["facility"]["cooling"] == "dlc"
    assert doc["facility"]["facility_power_w"] < base["facility"]["facility_power_w"]


def test_a_hall_pin_that_the_pinned_gpus_break_is_a_collision() -> None:
    result = runner.invoke(app_(), ["compile", str(GPT3), "--json", "--set", "facility.power=1.5MW",
                                    "--set", "compute.accelerator=h100-sxm"])
    doc = json.loads(result.stdout)
    assert result.exit_code == 3 and not doc["feasible"]     # the sized system does not fit the hall
    hall = next(c for c in doc["collisions"] if c["key"] == "facility.power" and c["unit"] == "count")
    assert hall["requirement"] == 1024 and hall["limit"] < 1024
    assert any(a["meets_pins"] and a["meets_targets"] for a in doc["alternatives"])


def test_unknown_key_names_the_nearest() -> None:
    result = runner.invoke(app_(), ["compile", str(GPT3), "--set", "fabric.oversubscriptoin=2"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "fabric.oversubscription" in result.output
    result = runner.invoke(app_(), ["compile", str(GPT3), "--set", "storage.tier=platinum"])
    assert result.exit_code == 2 and "tier" in result.output
    result = runner.invoke(app_(), ["compile", str(GPT3), "--set", "facility.power"])
    assert result.exit_code == 2 and "KEY=VALUE" in result.output


def test_a_gpu_count_against_a_pinned_layout_gives_way_and_says_so() -> None:
    spec = recompile(GPT3, {"compute.gpus": 512}, alternatives=False)
    assert isinstance(spec.compute, ComputeLayer) and spec.compute.gpus == 512
    assert spec.compute.parallelism.dp == 8
    layout = next(c for c in spec.collisions if c.constraint == "pinned layout")
    assert "dp 16 -> 8" in layout.detail


def test_recompile_from_a_spec() -> None:
    spec = compile_workload(GPT3)
    again = recompile(spec, {"storage.tier": "best"}, alternatives=False)
    assert again.pins == {"storage.tier": "best"} and (again.storage or {})["tier"] == "best"
    assert again.intake is not None and again.intake["storage"]["tier"] == "best"


def test_an_accelerator_against_a_pinned_system_gives_way_and_says_so() -> None:
    data = {"kind": "training", "model": {"preset": "llama3-8b"}, "training": {"tokens": "100B"},
            "compute": {"accelerator": "h100-sxm", "system": "dgx-h100", "gpus": 64}}
    spec = recompile(data, {"compute.accelerator": "b200"}, alternatives=False)
    assert isinstance(spec.compute, ComputeLayer) and spec.compute.system == "dgx-b200"
    system = next(c for c in spec.collisions if c.constraint == "pinned system")
    assert "dgx-h100" in system.detail and "b200" in system.detail
