"""Build the `cost` section of a compiled spec, for any archetype, from its intake's `cost`.

The fleet is what the spec sized: its GPUs, nodes and placement units (compute layer), and the
provisioned IT power and PUE of its facility layer. The run is the goodput-adjusted time to train
(training), the time to solution (HPC); inference is priced per hour of the fleet and per million
output tokens at the served load and at capacity.
"""

from __future__ import annotations

from typing import Any

from ..catalog.loader import Catalog
from ..intake.cost import CostIntake
from ..provenance import Trace
from ..spine.result import ComputeLayer, ObjectiveLayer, SystemSpec
from .prices import HOURS_PER_YEAR, Fleet, FleetPrice, Prices, fleet_price, per_million, rate_for
from .result import CostLine, CostSection

NO_PRICE = ("no price given: add cost.gpu_hour_usd (a rate card) or capex_usd_per_gpu / capex_usd_per_system "
            "with amortization_years (ownership); the tool holds no market prices")


def _compute(spec: SystemSpec) -> dict[str, Any] | None:
    if isinstance(spec.compute, ComputeLayer):
        return spec.compute.model_dump()
    return spec.compute if isinstance(spec.compute, dict) and spec.compute.get("gpus") else None


def fleet_of(spec: SystemSpec, catalog: Catalog, cost: CostIntake | None, trace: Trace) -> Fleet | None:
    """The priced fleet, or None when the spec sized no compute (an infeasible answer)."""
    compute = _compute(spec)
    if not spec.feasible or compute is None:
        return None
    acc = str(compute["accelerator"])
    system = str(compute.get("system") or catalog.default_system(acc).id)
    gpus = int(compute["gpus"])
    nodes = int(compute.get("nodes") or -(-gpus // catalog.system(system).gpus_per_node))
    facility = spec.facility or {}
    if "it_power_w" in facility:
        it_w, pue = float(facility["it_power_w"]), float(facility["pue"])
        units = int((facility.get("breakdown") or {}).get("units") or nodes)
    else:   # the facility layer was not sized: the GPUs' own power, no overhead
        tdp = catalog.accelerator(acc).tdp_w or 0.0
        it_w, pue, units = gpus * tdp, 1.0, nodes
        trace.assumed("cost.it_power_w", it_w, "facility layer not sized: GPUs x TDP, hosts and network left out")
    if cost is not None and cost.pue is not None:
        pue = float(trace.given("cost.pue", cost.pue))
    return Fleet(accelerator=acc, system=system, gpus=gpus, nodes=nodes, units=units, it_power_w=it_w, pue=pue)


def prices_for(cost: CostIntake | None, fleet: Fleet) -> tuple[Prices, str | None]:
    """The user's prices for this fleet's accelerator and system, and where they came from."""
    if cost is None:
        return Prices(), None
    unlisted: list[str] = []
    source: list[str] = []

    def look(name: str, card: float | dict[str, float] | None, key: str) -> float | None:
        value = rate_for(card, key)
        if card is not None and value is None:
            unlisted.append(f"cost.{name}")
        elif value is not None:
            source.append(f"cost.{name}[{key}]" if isinstance(card, dict) else f"cost.{name}")
        return value

    prices = Prices(
        gpu_hour=look("gpu_hour_usd", cost.gpu_hour_usd, fleet.accelerator),
        node_hour=look("node_hour_usd", cost.node_hour_usd, fleet.system),
        capex_per_gpu=cost.capex_usd_per_gpu,
        capex_per_system=look("capex_usd_per_system", cost.capex_usd_per_system, fleet.system),
        network_share=cost.network_share or 0.0, storage_share=cost.storage_share or 0.0,
        amortization_years=cost.amortization_years, support_fraction=cost.support_fraction_per_year or 0.0,
        usd_per_kwh=cost.power_usd_per_kwh, unlisted=tuple(unlisted))
    for key in ("capex_usd_per_gpu", "amortization_years", "network_share", "storage_share",
                "support_fraction_per_year", "power_usd_per_kwh"):
        if getattr(cost, key) is not None:
            source.append(f"cost.{key}")
    return prices, ", ".join(source) or None


def _trace_prices(cost: CostIntake | None, trace: Trace) -> None:
    if cost is None:
        return
    for key, value in cost.model_dump(exclude_none=True).items():
        trace.given(f"cost.{key}", value)


def cost_section(spec: SystemSpec, catalog: Catalog, cost: CostIntake | None, trace: Trace) -> CostSection | None:
    """The cost section of `spec` (None when nothing was sized)."""
    fleet = fleet_of(spec, catalog, cost, trace)
    if fleet is None:
        return None
    _trace_prices(cost, trace)
    prices, source = prices_for(cost, fleet)
    price = fleet_price(fleet, prices)
    trace.assumed("cost.power_draw", "provisioned IT power",
                  "energy at the facility layer's provisioned (maximum) IT power x PUE: an upper bound on the "
                  "draw; a measured average would lower it")
    missing: dict[str, str] = {}
    if price.usd_per_hour is None:
        missing["usd_per_hour"] = price.missing or NO_PRICE
    if price.energy_usd_per_hour is None:
        missing["energy_cost_usd"] = "no cost.power_usd_per_kwh given"
    out = CostSection(
        basis=price.basis, price_source=source, accelerator=fleet.accelerator, system=fleet.system, gpus=fleet.gpus,
        usd_per_gpu_hour=price.usd_per_gpu_hour, usd_per_hour=price.usd_per_hour,
        tco_usd_per_year=price.usd_per_year, capex_usd=price.capex_usd, it_power_w=fleet.it_power_w, pue=fleet.pue,
        lines=[CostLine(item=x.item, usd_per_hour=x.usd_per_hour, formula=x.formula, in_total=x.in_total)
               for x in price.lines], missing=missing)
    if spec.kind == "inference":
        _inference(out, spec, price)
    else:
        _run(out, spec, price)
    for key, formula in (("cost.cost_usd", "$ per fleet-hour x run hours"),
                         ("cost.usd_per_hour", "sum of the priced lines (cost/prices.py)"),
                         ("cost.energy_wh", "IT power x PUE x run time")):
        trace.derived(key, getattr(out, key.split(".")[1]), formula)
    return out


def _run_time(spec: SystemSpec) -> float | None:
    if isinstance(spec.objective, ObjectiveLayer):
        o = spec.objective
        return o.goodput_adjusted_time_to_train_s or o.time_to_train_s
    hpc = spec.hpc or {}
    t = hpc.get("time_to_solution_s")
    return None if t is None else float(t)


def _run(out: CostSection, spec: SystemSpec, price: FleetPrice) -> None:
    t = _run_time(spec)
    if t is None or not t < float("inf"):
        out.missing["cost_usd"] = "no finite run time"
        return
    hours = t / 3600.0
    out.run_time_s, out.gpu_hours = t, out.gpus * hours
    out.energy_wh = price.energy_wh_per_hour * hours
    if price.energy_usd_per_hour is not None:
        out.energy_cost_usd = price.energy_usd_per_hour * hours
    if price.usd_per_hour is None:
        out.missing["cost_usd"] = out.missing["usd_per_hour"]
        return
    out.cost_usd = price.usd_per_hour * hours
    if isinstance(spec.objective, ObjectiveLayer) and spec.objective.tokens > 0:
        out.usd_per_million_training_tokens = out.cost_usd / spec.objective.tokens * 1e6


def _inference(out: CostSection, spec: SystemSpec, price: FleetPrice) -> None:
    inf, obj = spec.inference or {}, spec.objective if isinstance(spec.objective, dict) else {}
    osl = float(obj.get("output_tokens") or 0.0)
    served = float(inf.get("request_rate_per_s") or 0.0) * osl
    out.energy_wh_per_year = price.energy_wh_per_hour * HOURS_PER_YEAR
    if price.energy_usd_per_hour is not None:
        out.energy_cost_usd_per_year = price.energy_usd_per_hour * HOURS_PER_YEAR
    out.usd_per_million_served_tokens = per_million(price.usd_per_hour, served)
    out.usd_per_million_served_tokens_at_capacity = per_million(price.usd_per_hour,
                                                                float(inf.get("output_tokens_per_s") or 0.0))
    if price.usd_per_hour is not None and out.usd_per_million_served_tokens is None:
        out.missing["usd_per_million_served_tokens"] = "no served tokens"


def mirror_inference_keys(spec: SystemSpec, section: CostSection) -> None:
    """The inference section's cost keys (kept for their readers) read the cost section's numbers."""
    inf = spec.inference
    if inf is None or section.usd_per_hour is None:
        return
    inf.update(cost_usd_per_gpu_hour=section.usd_per_gpu_hour, cost_usd_per_hour=section.usd_per_hour,
               cost_per_million_tokens=section.usd_per_million_served_tokens,
               cost_per_million_tokens_at_capacity=section.usd_per_million_served_tokens_at_capacity,
               cost_basis=f"output tokens; {section.basis} ({section.price_source})")
