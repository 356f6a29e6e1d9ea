"""$ per fleet-hour from the user's prices; energy from the facility's power. Pure arithmetic.

    rented     $/h = GPUs x gpu_hour_usd[accelerator] + nodes x node_hour_usd[system]
    owned      capex = units x capex_usd_per_system[system] (or GPUs x capex_usd_per_gpu)
                       x (1 + network_share + storage_share)
               $/year = capex / amortization_years + support_fraction_per_year x capex
                        + energy per year x power_usd_per_kwh
               $/h = $/year / 8760 h (the cluster's year; a run costs its share of it)
    energy     Wh per hour = IT power x PUE x 1 h (provisioned IT power: an upper bound on the draw)

A rented GPU-hour is taken to include power: with `power_usd_per_kwh` beside a rate card the
energy is priced as its own line but not added to the total. Every price is the caller's input;
a missing one gives None and the reason, never a default.
"""

from __future__ import annotations

from dataclasses import dataclass

HOURS_PER_YEAR = 8760.0


def rate_for(card: float | dict[str, float] | None, key: str) -> float | None:
    """One rate for every key, or the entry for `key` (None when the card has none)."""
    if card is None:
        return None
    if isinstance(card, dict):
        value = card.get(key)
        return None if value is None else float(value)
    return float(card)


@dataclass(frozen=True, kw_only=True)
class Fleet:
    """What is priced: the GPUs, their nodes and placement units, and the power they draw."""

    accelerator: str
    system: str
    gpus: int
    nodes: int
    units: int
    it_power_w: float
    pue: float


@dataclass(frozen=True, kw_only=True)
class Prices:
    """The user's prices, already looked up for this fleet's accelerator and system."""

    gpu_hour: float | None = None
    node_hour: float | None = None
    capex_per_gpu: float | None = None
    capex_per_system: float | None = None
    network_share: float = 0.0
    storage_share: float = 0.0
    amortization_years: float | None = None
    support_fraction: float = 0.0
    usd_per_kwh: float | None = None
    unlisted: tuple[str, ...] = ()   # per-id cards that have no entry for this fleet's accelerator/system


@dataclass(frozen=True, kw_only=True)
class Line:
    item: str
    usd_per_hour: float
    formula: str
    in_total: bool = True


@dataclass(frozen=True, kw_only=True)
class FleetPrice:
    basis: str | None                   # "rate card" | "ownership" | None (no price given)
    usd_per_hour: float | None          # the whole fleet
    usd_per_gpu_hour: float | None
    usd_per_year: float | None          # TCO per year of the fleet
    capex_usd: float | None
    energy_wh_per_hour: float
    energy_usd_per_hour: float | None
    lines: list[Line]
    missing: str | None                 # why there is no total


def energy_wh_per_hour(it_power_w: float, pue: float) -> float:
    """Facility energy in one hour: IT power x PUE x 1 h."""
    return it_power_w * pue


def fleet_price(fleet: Fleet, p: Prices) -> FleetPrice:
    """$/h of the fleet by rate card (when a GPU- or node-hour rate is given) or by ownership."""
    energy = energy_wh_per_hour(fleet.it_power_w, fleet.pue)
    energy_usd = None if p.usd_per_kwh is None else energy / 1000.0 * p.usd_per_kwh
    energy_line = [] if energy_usd is None else [Line(
        item="energy", usd_per_hour=energy_usd, formula="IT power x PUE x 1 h x power_usd_per_kwh")]
    if p.gpu_hour is not None or p.node_hour is not None:
        lines = []
        if p.gpu_hour is not None:
            lines.append(Line(item="GPU-hours", usd_per_hour=fleet.gpus * p.gpu_hour, formula="GPUs x gpu_hour_usd"))
        if p.node_hour is not None:
            lines.append(Line(item="node-hours", usd_per_hour=fleet.nodes * p.node_hour,
                              formula="nodes x node_hour_usd"))
        total = sum(line.usd_per_hour for line in lines)
        lines += [Line(item=x.item, usd_per_hour=x.usd_per_hour, formula=x.formula + " (a rented hour includes "
                       "power: shown, not added)", in_total=False) for x in energy_line]
        return FleetPrice(basis="rate card", usd_per_hour=total, usd_per_gpu_hour=total / fleet.gpus,
                          usd_per_year=total * HOURS_PER_YEAR, capex_usd=None, energy_wh_per_hour=energy,
                          energy_usd_per_hour=energy_usd, lines=lines, missing=None)
    compute_capex = (fleet.units * p.capex_per_system if p.capex_per_system is not None
                     else fleet.gpus * p.capex_per_gpu if p.capex_per_gpu is not None else None)
    if compute_capex is None or p.amortization_years is None:
        return FleetPrice(basis=None, usd_per_hour=None, usd_per_gpu_hour=None, usd_per_year=None, capex_usd=None,
                          energy_wh_per_hour=energy, energy_usd_per_hour=energy_usd, lines=energy_line,
                          missing=_missing(fleet, p))
    capex = compute_capex * (1.0 + p.network_share + p.storage_share)
    lines = [Line(item="compute capex", usd_per_hour=compute_capex / p.amortization_years / HOURS_PER_YEAR,
                  formula="capex / amortization_years / 8760 h")]
    for item, share in (("network capex", p.network_share), ("storage capex", p.storage_share)):
        if share:
            lines.append(Line(item=item, usd_per_hour=compute_capex * share / p.amortization_years / HOURS_PER_YEAR,
                              formula=f"compute capex x {item.split()[0]}_share / amortization_years / 8760 h"))
    if p.support_fraction:
        lines.append(Line(item="support", usd_per_hour=capex * p.support_fraction / HOURS_PER_YEAR,
                          formula="capex x support_fraction_per_year / 8760 h"))
    lines += energy_line
    total = sum(line.usd_per_hour for line in lines)
    return FleetPrice(basis="ownership", usd_per_hour=total, usd_per_gpu_hour=total / fleet.gpus,
                      usd_per_year=total * HOURS_PER_YEAR, capex_usd=capex, energy_wh_per_hour=energy,
                      energy_usd_per_hour=energy_usd, lines=lines, missing=None)


def _missing(fleet: Fleet, p: Prices) -> str:
    if p.unlisted:
        return (f"no price for {fleet.accelerator} ({fleet.system}) in {', '.join(p.unlisted)}: add an entry; "
                "the tool holds no market prices")
    return ("no price given: add cost.gpu_hour_usd (a rate card) or capex_usd_per_gpu / capex_usd_per_system "
            "with amortization_years (ownership); the tool holds no market prices")


def per_million(usd_per_hour: float | None, tokens_per_s: float) -> float | None:
    """$ per 10^6 tokens at a sustained rate; None when nothing is priced or nothing is served."""
    if usd_per_hour is None or tokens_per_s <= 0:
        return None
    return usd_per_hour / (tokens_per_s * 3600.0) * 1e6
