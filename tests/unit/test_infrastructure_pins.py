"""Storage, reliability and facility pins reach the numbers they physically change: the
checkpoint stall and goodput (storage, reliability), power and racks (facility), and through the
goodput the time to train. One test per pin: direction and size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workload_compiler import recompile
from workload_compiler.spine.result import ComputeLayer, ObjectiveLayer, SystemSpec

GPT3 = Path(__file__).parents[2] / "examples" / "gpt3-175b-a100.yaml"


def _spec(**pins: Any) -> SystemSpec:
    spec = recompile(GPT3, {k.replace("__", "."): v for k, v in pins.items()}, alternatives=False)
    assert isinstance(spec.compute, ComputeLayer) and isinstance(spec.objective, ObjectiveLayer)
    return spec


def _time(spec: SystemSpec) -> float:
    assert isinstance(spec.objective, ObjectiveLayer) and spec.objective.goodput_adjusted_time_to_train_s
    return spec.objective.goodput_adjusted_time_to_train_s


@pytest.fixture(scope="module")
def base() -> SystemSpec:
    return _spec()


def _stall(spec: SystemSpec) -> float:
    return float((spec.storage or {})["checkpoint_stall_s"])


def _goodput(spec: SystemSpec) -> float:
    return float((spec.reliability or {})["goodput"])


def test_write_bandwidth_sets_the_stall_and_the_goodput(base: SystemSpec) -> None:
    slow = _spec(storage__write_bandwidth="10GB/s")
    fast = _spec(storage__write_bandwidth="200GB/s")
    assert _stall(fast) < _stall(base) < _stall(slow)
    assert _goodput(slow) < _goodput(base) < _goodput(fast)
    assert _time(slow) > _time(base) > _time(fast)
    # a synchronous write of the same checkpoint: stall = bytes / bandwidth (node limits aside)
    ckpt = float((slow.storage or {})["checkpoint_bytes"])
    assert _stall(slow) == pytest.approx(ckpt / 10e9, rel=0.01)


def test_asynchronous_checkpoints_cut_the_stall(base: SystemSpec) -> None:
    spec = _spec(storage__checkpoint_mode="async")
    assert _stall(spec) < _stall(base) / 10
    assert _goodput(spec) > _goodput(base)


def test_storage_tier_orders_the_goodput() -> None:
    good, best = _spec(storage__tier="good"), _spec(storage__tier="best")
    assert _stall(best) < _stall(good) and _goodput(best) > _goodput(good)


def test_gpudirect_storage_never_slows_the_write(base: SystemSpec) -> None:
    gds = _spec(storage__gpudirect_storage=True, storage__tier="best")
    host = _spec(storage__tier="best")
    assert float((gds.storage or {})["checkpoint_write_s"]) <= float((host.storage or {})["checkpoint_write_s"])


def test_failure_rate_and_restart_time_lower_the_goodput(base: SystemSpec) -> None:
    flaky = _spec(reliability__failures_per_gpu_day=5e-3)     # ~10x the Llama 3 rate
    assert _goodput(flaky) < _goodput(base) and _time(flaky) > _time(base)
    slow_restart = _spec(reliability__restart_time="1h")
    assert _goodput(slow_restart) < _goodput(base)
    # the step itself does not move: reliability acts on the wall clock only
    assert isinstance(flaky.compute, ComputeLayer) and isinstance(base.compute, ComputeLayer)
    assert flaky.compute.step_time_s == base.compute.step_time_s


def test_pue_scales_facility_power_only(base: SystemSpec) -> None:
    spec = _spec(facility__pue=1.2)
    f0, f1 = base.facility or {}, spec.facility or {}
    assert f1["it_power_w"] == f0["it_power_w"]
    assert f1["facility_power_w"] == pytest.approx(f1["it_power_w"] * 1.2)
    assert f1["facility_power_w"] < f0["facility_power_w"]
    assert _time(spec) == _time(base)


def test_liquid_cooling_lowers_pue_and_air_budget_spreads_air_cooled_nodes(base: SystemSpec) -> None:
    # DGX A100 is air-cooled: a DLC hall bills it at the DLC PUE, but its racks get only the DLC
    # hall's air budget (30 kW vs 50 kW, facility_cooling.yaml), so the nodes spread over more racks.
    spec = _spec(facility__cooling="dlc")
    f0, f1 = base.facility or {}, spec.facility or {}
    assert f1["facility_power_w"] < f0["facility_power_w"] and f1["pue"] < f0["pue"]
    assert f1["racks"] > f0["racks"] and f1["rack_power_w"] <= 30e3 < f0["rack_power_w"]


def test_a_smaller_hall_caps_the_gpus_and_lengthens_the_run() -> None:
    pins = {"compute.gpus": None, "compute.parallelism.dp": None, "target.time_to_train": None}
    big = recompile(GPT3, {**pins, "facility.power": "2MW"}, alternatives=False)
    small = recompile(GPT3, {**pins, "facility.power": "1MW"}, alternatives=False)
    assert isinstance(big.compute, ComputeLayer) and isinstance(small.compute, ComputeLayer)
    assert small.compute.gpus < big.compute.gpus
    assert _time(small) > _time(big)
    assert (small.facility or {})["facility_power_w"] <= 1e6
