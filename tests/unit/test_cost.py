"""The cost layer (cost/): rate card and ownership arithmetic, the `cost` section of every
archetype, and no price that the user did not give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from workload_compiler import compile_workload, recompile
from workload_compiler.cost.prices import HOURS_PER_YEAR, Fleet, Prices, fleet_price
from workload_compiler.intake.cost import CostIntake
from workload_compiler.spine.result import ObjectiveLayer

EXAMPLES = Path(__file__).parents[2] / "examples"
FLEET = Fleet(accelerator="h100-sxm", system="dgx-h100", gpus=64, nodes=8, units=8, it_power_w=100e3, pue=1.5)


def test_rate_card_prices_gpu_and_node_hours() -> None:
    p = fleet_price(FLEET, Prices(gpu_hour=2.0, node_hour=10.0, usd_per_kwh=0.1))
    assert p.basis == "rate card"
    assert p.usd_per_hour == pytest.approx(64 * 2.0 + 8 * 10.0)
    assert p.usd_per_gpu_hour == pytest.approx((64 * 2.0 + 8 * 10.0) / 64)
    assert p.usd_per_year == pytest.approx(p.usd_per_hour * HOURS_PER_YEAR)
    # a rented hour includes power: the energy line is shown, not added
    energy = next(x for x in p.lines if x.item == "energy")
    assert not energy.in_total and energy.usd_per_hour == pytest.approx(100e3 * 1.5 / 1000 * 0.1)


def test_ownership_amortizes_capex_shares_support_and_energy() -> None:
    p = fleet_price(FLEET, Prices(capex_per_system=400e3, network_share=0.1, storage_share=0.05,
                                  amortization_years=4, support_fraction=0.08, usd_per_kwh=0.1))
    capex = 8 * 400e3 * 1.15
    expected = (8 * 400e3 * 1.15 / 4 + capex * 0.08) / HOURS_PER_YEAR + 100e3 * 1.5 / 1000 * 0.1
    assert p.basis == "ownership" and p.capex_usd == pytest.approx(capex)
    assert p.usd_per_hour == pytest.approx(expected)
    assert p.energy_wh_per_hour == pytest.approx(150e3)


def test_no_price_is_none_with_the_reason() -> None:
    p = fleet_price(FLEET, Prices())
    assert p.usd_per_hour is None and "no price" in (p.missing or "")
    p = fleet_price(FLEET, Prices(unlisted=("cost.gpu_hour_usd",)))
    assert p.usd_per_hour is None and "h100-sxm" in (p.missing or "")


def test_ownership_needs_amortization() -> None:
    with pytest.raises(ValidationError, match="amortization_years"):
        CostIntake(capex_usd_per_gpu=30000)
    with pytest.raises(ValidationError, match="capex"):
        CostIntake(amortization_years=4)


def _gpt3(cost: dict[str, Any] | None) -> Any:
    return recompile(EXAMPLES / "gpt3-175b-a100.yaml", {"cost": cost} if cost else {}, alternatives=False)


def test_training_cost_is_gpu_hours_times_the_rate_and_energy_is_always_there() -> None:
    spec = _gpt3({"gpu_hour_usd": {"a100-sxm-80gb": 1.5}, "power_usd_per_kwh": 0.08})
    c, o = spec.cost, spec.objective
    assert c is not None and isinstance(o, ObjectiveLayer) and o.goodput_adjusted_time_to_train_s
    hours = o.goodput_adjusted_time_to_train_s / 3600
    assert c.gpu_hours == pytest.approx(1024 * hours)
    assert c.cost_usd == pytest.approx(1024 * hours * 1.5)
    assert c.usd_per_million_training_tokens == pytest.approx(c.cost_usd / 300e9 * 1e6)
    f = spec.facility or {}
    assert c.energy_wh == pytest.approx(f["it_power_w"] * f["pue"] * hours)
    assert c.energy_cost_usd == pytest.approx(c.energy_wh / 1000 * 0.08)
    assert spec.provenance["cost.gpu_hour_usd"].source.value == "given"


def test_no_rate_card_no_dollars_but_energy() -> None:
    spec = _gpt3(None)
    c = spec.cost
    assert c is not None and c.cost_usd is None and c.usd_per_hour is None
    assert "cost_usd" in c.missing and c.energy_wh and c.energy_wh > 0


def test_a_rate_card_without_this_accelerator_names_it() -> None:
    spec = _gpt3({"gpu_hour_usd": {"h100-sxm": 2.0}})
    assert spec.cost is not None and spec.cost.cost_usd is None
    assert "a100-sxm-80gb" in spec.cost.missing["cost_usd"]


def test_inference_cost_section_and_the_legacy_keys_agree() -> None:
    spec = compile_workload(EXAMPLES / "llama3.3-70b-chat.yaml")
    c, inf = spec.cost, spec.inference or {}
    assert c is not None and c.usd_per_hour == pytest.approx(3.5 * c.gpus)
    assert inf["cost_usd_per_hour"] == c.usd_per_hour
    assert inf["cost_per_million_tokens"] == pytest.approx(c.usd_per_million_served_tokens)
    served = inf["request_rate_per_s"] * 512
    assert c.usd_per_million_served_tokens == pytest.approx(c.usd_per_hour / (served * 3600) * 1e6)
    assert c.tco_usd_per_year == pytest.approx(c.usd_per_hour * HOURS_PER_YEAR)
    assert c.energy_wh_per_year and c.energy_wh_per_year > 0


def test_hpc_cost_per_run() -> None:
    data = {"kind": "hpc", "application": {"class": "cfd_lbm"}, "problem": {"size": "256^3"}, "steps": 10000,
            "compute": {"accelerator": "h100-sxm", "gpus": 8}, "cost": {"gpu_hour_usd": 3.0}}
    spec = compile_workload(data)
    c = spec.cost
    assert c is not None and c.run_time_s == pytest.approx((spec.hpc or {})["time_to_solution_s"])
    assert c.cost_usd == pytest.approx(8 * 3.0 * c.run_time_s / 3600)
