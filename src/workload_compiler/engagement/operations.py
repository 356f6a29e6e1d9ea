"""The operations load of the sized fleet (seed 000: spares, RMA, incidents; seed 001: what
"healthy" looks like at thousands of GPUs).

    rate of part p        r_p = share_p x r            per GPU-day; share_p = interruptions_p / 419
                                                       (Llama 3 Table 5), r the fleet's failure rate
    failures per week     F_p = r_p x GPUs x 7
    spares for part p     the smallest S with P(Poisson(r_p x GPUs x restore days) <= S) >= service
                          level: failures of one restore window are covered
    RMA per year          sum over hardware parts of r_p x GPUs x 365 (one part per interruption)
    incidents per week    r x GPUs x 7; manual interventions at Llama 3's 3 of 419

Per layer and actor: each part belongs to a layer (Compute, Fabric, software); who holds its
spares, RMAs and incidents is read from the operating boundary (TO DEFINE until set).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field

from ..catalog.loader import package_yaml
from ..intake.boundary import OperationsIntake
from ..intake.infrastructure import ReliabilityIntake
from ..provenance import Trace
from ..quantity import quantity
from ..reliability import failure_rates
from ..spine.doc import Doc
from .boundary import OperatingBoundary
from .view import get_path, number

DAY_S = 86400.0


class PartLoad(Doc):
    part: str
    layer: str
    hardware: bool
    rate_per_gpu_day: float = quantity("1/day", "failures per GPU per day")
    failures_per_week: float = quantity("count", "expected failures of this part per week on the fleet")
    spares: int | None = quantity("count", "spares for one restore window at the service level", default=None)
    rma_per_year: float | None = quantity("count", "parts returned per year", default=None)
    source: str
    spares_actor: str | None = None
    rma_actor: str | None = None
    incidents_actor: str | None = None


class ActorLoad(Doc):
    layer: str
    function: str
    actor: str = Field(description="the boundary's actor, or TO DEFINE")
    per_week: float = quantity("count", "events per week this actor handles")


class OperationsLoad(Doc):
    fleet_gpus: int = quantity("count", "GPUs of the fleet")
    failure_rate_per_gpu_day: float = quantity("1/day", "unexpected interruptions per GPU per day")
    failure_rate_source: str
    mix_source: str = Field(description="where the split of failures by part comes from")
    restore_time_s: float = quantity("s", "a failed part back in service")
    service_level: float = quantity("fraction", "probability the spares cover one restore window")
    parts: list[PartLoad]
    failures_per_week: float = quantity("count", "all unexpected interruptions per week")
    incidents_per_week: float = quantity("count", "incidents the on-call rotation sees per week")
    manual_interventions_per_week: float = quantity("count", "incidents needing significant manual work")
    on_call_time_per_week_s: float | None = quantity("s", "incidents x triage time (None until triage time is stated)",
                                                    default=None)
    rma_per_year: float = quantity("count", "hardware parts returned per year")
    spares_total: int = quantity("count", "spares of every part")
    by_actor: list[ActorLoad]
    undefined_responsibilities: int = quantity("count", "spares/RMA/incident cells of loaded layers still TO DEFINE")
    notes: list[str] = Field(default_factory=list)


def poisson_spares(mean: float, service_level: float) -> int:
    """Smallest S with P(X <= S) >= service_level for X ~ Poisson(mean) (log-space pmf)."""
    if mean <= 0:
        return 0
    cdf, k = 0.0, 0
    log_mean = math.log(mean)
    while True:
        cdf += math.exp(k * log_mean - mean - math.lgamma(k + 1))
        if cdf >= service_level or k > mean + 50 * math.sqrt(mean) + 50:
            return k
        k += 1


def _base_rate(doc: dict[str, Any], rel: ReliabilityIntake, gpus_per_node: int) -> tuple[float, str]:
    """Per GPU-day: the reliability layer's (training), else the intake's, else the default rate."""
    per_day, gpus = number(doc, "reliability.failures_per_day"), number(doc, "compute.gpus")
    if per_day is not None and gpus:
        return per_day / gpus, f"reliability layer: {get_path(doc, 'reliability.failure_rate')}"
    if rel.failures_per_gpu_day is not None:
        return rel.failures_per_gpu_day, "given: reliability.failures_per_gpu_day"
    if rel.failures_per_node_day is not None:
        return rel.failures_per_node_day / gpus_per_node, "given: reliability.failures_per_node_day / GPUs per node"
    data = package_yaml("reliability.yaml")
    name = rel.failure_rate or str(data["default_failure_rate"])
    rate = failure_rates()[name]
    value = rate.per_gpu_day if rate.per_gpu_day is not None else (rate.per_node_day or 0.0) / rate.gpus_per_node
    return value, f"{name}: {rate.hardware} ({rate.source})"


def _actor(boundary: OperatingBoundary | None, layer: str, function: str) -> str:
    if boundary is None or layer not in boundary.layers:
        return "TO DEFINE"
    return boundary.cell(layer, function).actor or "TO DEFINE"


def operations_load(doc: dict[str, Any], boundary: OperatingBoundary | None, ops: OperationsIntake,
                    rel: ReliabilityIntake, trace: Trace) -> OperationsLoad | None:
    gpus = number(doc, "compute.gpus")
    if not gpus:
        return None
    data = package_yaml("engagement.yaml")["operations"]
    gpn = int(number(doc, "compute.gpus_per_node") or 8)
    rate, rate_source = _base_rate(doc, rel, gpn)
    mix_total, mix_src = float(data["mix_interruptions"]), str(data["mix_source"])
    if ops.restore_time is not None:
        restore = trace.given("operations.restore_time_s", ops.restore_time)
    else:
        restore = trace.assumed("operations.restore_time_s", float(data["restore_time"]["value_s"]),
                                str(data["restore_time"]["why"]))
    if ops.service_level is not None:
        level = trace.given("operations.service_level", ops.service_level)
    else:
        level = trace.assumed("operations.service_level", float(data["service_level"]["value"]),
                              str(data["service_level"]["why"]))
    parts: list[PartLoad] = []
    for p in data["parts"]:
        share = float(p["interruptions"]) / mix_total
        r = share * rate
        weekly = r * gpus * 7
        hw = bool(p["hardware"])
        layer = str(p["layer"])
        parts.append(PartLoad(
            part=str(p["part"]), layer=layer, hardware=hw, rate_per_gpu_day=r, failures_per_week=weekly,
            spares=poisson_spares(r * gpus * restore / DAY_S, level) if hw else None,
            rma_per_year=r * gpus * 365 if hw else None,
            source=f"{p['interruptions']} of {mix_total:.0f} interruptions ({p['causes']}), {mix_src}; "
                   f"x fleet rate {rate:.3g}/GPU-day ({rate_source})",
            spares_actor=_actor(boundary, layer, "Spares") if hw else None,
            rma_actor=_actor(boundary, layer, "RMA") if hw else None,
            incidents_actor=_actor(boundary, layer, "Incidents")))
    weekly_all = rate * gpus * 7
    manual = weekly_all * float(data["manual_interventions"]) / mix_total
    on_call = weekly_all * ops.triage_time if ops.triage_time is not None else None
    by_actor: dict[tuple[str, str, str], float] = {}
    for p_load in parts:
        key = (p_load.layer, "Incidents", p_load.incidents_actor or "TO DEFINE")
        by_actor[key] = by_actor.get(key, 0.0) + p_load.failures_per_week
        if p_load.hardware:
            key = (p_load.layer, "RMA", p_load.rma_actor or "TO DEFINE")
            by_actor[key] = by_actor.get(key, 0.0) + p_load.failures_per_week
    loaded = {p_load.layer for p_load in parts}
    undefined = sum(1 for layer in loaded for fn in ("Spares", "RMA", "Incidents")
                    if _actor(boundary, layer, fn) == "TO DEFINE")
    notes = [str(data["rma_note"])]
    if on_call is None:
        notes.append("on-call time open: state operations.triage_time (no published figure per incident)")
    trace.derived("operations.failures_per_week", weekly_all, "fleet rate per GPU-day x GPUs x 7")
    trace.derived("operations.parts", None, "share of Llama 3 Table 5 x fleet rate; spares: Poisson quantile")
    return OperationsLoad(
        fleet_gpus=int(gpus), failure_rate_per_gpu_day=rate, failure_rate_source=rate_source, mix_source=mix_src,
        restore_time_s=restore,
        service_level=level, parts=parts, failures_per_week=weekly_all, incidents_per_week=weekly_all,
        manual_interventions_per_week=manual, on_call_time_per_week_s=on_call,
        rma_per_year=sum(p_load.rma_per_year or 0.0 for p_load in parts),
        spares_total=sum(p_load.spares or 0 for p_load in parts),
        by_actor=[ActorLoad(layer=k[0], function=k[1], actor=k[2], per_week=v) for k, v in by_actor.items()],
        undefined_responsibilities=undefined, notes=notes)


__all__ = ["ActorLoad", "OperationsLoad", "PartLoad", "operations_load", "poisson_spares"]
