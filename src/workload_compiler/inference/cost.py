"""Serving cost from the user's rate card: $/hour of the fleet and $ per million tokens.

    cost/hour        = GPUs x (gpu_hour_usd)                                  rented
                     = GPUs x (capex / (years x 8760 h) + TDP x PUE x $/kWh / 1000)   owned
    $/M tokens       = cost/hour / (output tokens/s x 3600) x 1e6

Every price is the user's (`given`); nothing here has a price of its own. Owned: the GPU draws
its TDP around the clock (an upper bound; hosts and network are not counted); without a PUE the
facility overhead is left out (PUE 1), which the caller records as an assumption.
"""

from __future__ import annotations

from dataclasses import dataclass

HOURS_PER_YEAR = 8760.0


@dataclass(frozen=True, kw_only=True)
class GpuHourPrice:
    usd_per_gpu_hour: float
    capex_usd_per_gpu_hour: float | None
    power_usd_per_gpu_hour: float | None
    formula: str


def gpu_hour_price(*, gpu_hour_usd: float | None, capex_usd_per_gpu: float | None,
                   amortization_years: float | None, power_usd_per_kwh: float | None, pue: float | None,
                   tdp_w: float) -> GpuHourPrice:
    """$ per GPU-hour: the rented price when given, else amortized capex (+ power if priced)."""
    if gpu_hour_usd is not None:
        return GpuHourPrice(usd_per_gpu_hour=gpu_hour_usd, capex_usd_per_gpu_hour=None,
                            power_usd_per_gpu_hour=None, formula="given gpu_hour_usd")
    if capex_usd_per_gpu is None or amortization_years is None:
        raise ValueError("needs gpu_hour_usd or capex_usd_per_gpu with amortization_years")
    capex = capex_usd_per_gpu / (amortization_years * HOURS_PER_YEAR)
    power = None
    if power_usd_per_kwh is not None:
        power = tdp_w * (pue or 1.0) * power_usd_per_kwh / 1000.0
    return GpuHourPrice(usd_per_gpu_hour=capex + (power or 0.0), capex_usd_per_gpu_hour=capex,
                        power_usd_per_gpu_hour=power,
                        formula="capex / (years x 8760 h)"
                        + (" + TDP x PUE x $/kWh" if power is not None else ""))


def cost_per_million_tokens(usd_per_hour: float, tokens_per_s: float) -> float:
    """$ per 10^6 tokens at a sustained token rate; inf when nothing is served."""
    if tokens_per_s <= 0:
        return float("inf")
    return usd_per_hour / (tokens_per_s * 3600.0) * 1e6
