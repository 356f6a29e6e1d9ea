"""The supply check (seed 000): "required system and available supply are separate stages".

Each offer is held against the sized requirement, layer by layer (engagement/supply_layers.py):
fits, gap (with numbers), substitution, or open. An offer of another accelerator, or of fewer
GPUs, is recompiled on what it offers (`recompile` with the offer's accelerator, system and GPU
count pinned) so its time and power are the model's, not a guess; register item 03's rules then
decide whether the substitution is acceptable. What the offer has not confirmed (availability,
lead time, deployment schedule, SLA terms, pricing) is listed as open. Offers are ranked by time
to result from order (lead time + run), then cost; offers with a gap come last.

Pure: the caller passes `recompile(pins) -> SystemSpec` (the CLI binds it to the intake file).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from ..catalog.loader import Catalog
from ..errors import Infeasible, InputError
from ..intake.boundary import SubstitutionRules
from ..intake.offers import CONFIRMATIONS, Offer
from ..quantity import quantity
from ..spine.doc import Doc
from ..spine.result import SCHEMA_VERSION
from ..units import counted
from .supply_layers import (
    LayerCheck,
    fabric_checks,
    facility_checks,
    offer_system,
    software_check,
    storage_checks,
)
from .view import get_path, number, time_to_result_s

HOURS_PER_MONTH = 730.0
NOTE = ("Specific GPU configuration, availability, operating model, term, and pricing are confirmed separately. "
        "No capacity is implied by this check.")
_CONFIRM_TEXT = {"availability": "hardware availability", "lead_time": "vendor lead time",
                 "schedule": "deployment schedule", "sla": "SLA terms", "price": "pricing"}


class Substitution(Doc):
    accelerator: str
    system: str
    gpus: int
    feasible: bool
    binding: str | None = None
    time_to_result_s: float | None = quantity("s", "on the offered hardware", default=None)
    time_change: float | None = quantity("fraction", "vs the requirement: +0.1 = 10% longer", default=None)
    it_power_w: float | None = quantity("W", "on the offered hardware", default=None)
    power_change: float | None = quantity("fraction", "vs the requirement", default=None)
    rule: str = Field(description="register item 03's verdict")
    accepted: bool | None = Field(default=None, description="None while rule 03 is open")


class OpenConfirmation(Doc):
    item: str
    detail: str


class OfferCheck(Doc):
    id: str
    supplier: str | None
    system: str
    accelerator: str
    count: int
    verdict: str = Field(description="fits | substitution | gap")
    layers: list[LayerCheck]
    substitution: Substitution | None = None
    open_confirmations: list[OpenConfirmation]
    time_to_result_s: float | None = quantity("s", "the run on the offer", default=None)
    lead_time_s: float | None = quantity("s", "order to hardware", default=None)
    time_from_order_s: float | None = quantity("s", "lead time + time to result", default=None)
    cost_usd: float | None = quantity("USD", "the run (or one month of a service)", default=None)
    cost_basis: str | None = None
    rank: int = 0


class Requirement(Doc):
    name: str | None
    kind: str
    accelerator: str
    system: str
    gpus: int
    time_to_result_s: float | None = quantity("s", "", default=None)
    it_power_w: float | None = quantity("W", "", default=None)
    facility_power_w: float | None = quantity("W", "", default=None)
    access_model: str | None = None


class SupplyCheck(Doc):
    schema_version: str = SCHEMA_VERSION
    requirement: Requirement
    offers: list[OfferCheck]
    ranking: str = "time to result from order (lead time + run), then cost; offers with a gap last"
    note: str = NOTE


Recompile = Callable[[dict[str, Any]], BaseModel]


def _change(new: float | None, old: float | None) -> float | None:
    return None if new is None or not old else new / old - 1.0


def _judge(rules: SubstitutionRules | None, acc: str, vendor: str, time_change: float | None,
           power_change: float | None, same_accelerator: bool) -> tuple[bool | None, str]:
    if same_accelerator:
        return True, "same accelerator: no substitution (fewer GPUs only)"
    if rules is None:
        return None, "register item 03 is open: the client decides whether this accelerator is acceptable"
    reasons = []
    if acc not in rules.accelerators and vendor.lower() not in [v.lower() for v in rules.vendors]:
        reasons.append(f"{acc} is not among the acceptable accelerators")
    if rules.max_time_increase is not None and time_change is not None and time_change > rules.max_time_increase:
        reasons.append(f"time +{100 * time_change:.0f}% > +{100 * rules.max_time_increase:.0f}%")
    if rules.max_power_increase is not None and power_change is not None and power_change > rules.max_power_increase:
        reasons.append(f"IT power +{100 * power_change:.0f}% > +{100 * rules.max_power_increase:.0f}%")
    if reasons:
        return False, "refused by rule 03: " + "; ".join(reasons)
    return True, "acceptable per register rule 03"


def _recompiled(offer: Offer, system: Any, req_doc: dict[str, Any], recompile: Recompile,
                intake: dict[str, Any]) -> tuple[dict[str, Any] | None, int, str | None]:
    """The requirement recompiled on the offer's hardware (None, count, why when it does not compile).

    A job runs on the count it was sized for (or all the offer has, when fewer), to compare its time.
    A serving fleet whose size the intake did not pin is sized again for its load and latency
    targets on the offer's accelerator, at most the offer's GPUs: another GPU serves the same load
    with another count."""
    need = int(number(req_doc, "compute.gpus") or 0)
    compute = intake.get("compute") or {}
    resized = req_doc.get("kind") == "inference" and compute.get("gpus") is None
    gpus = offer.count if resized or not need else min(offer.count, need)
    pins: dict[str, Any] = {"compute.accelerator": system.accelerator, "compute.system": system.id,
                            "compute.gpus": None if resized else gpus}
    if resized:
        pins["compute.max_gpus"] = offer.count
    elif "max_gpus" in compute:
        pins["compute.max_gpus"] = None
    if (compute.get("parallelism") or {}).get("dp") is not None:
        pins["compute.parallelism.dp"] = None
    try:
        spec = recompile(pins)
    except (InputError, Infeasible) as exc:
        return None, gpus, str(exc)
    doc = spec.model_dump(mode="json")
    if not doc.get("feasible", True):
        return doc, gpus, str(doc.get("binding_constraint"))
    return doc, int(number(doc, "compute.gpus") or gpus), None


def _cost(offer: Offer, gpus: int, time_s: float | None, service: bool) -> tuple[float | None, str | None]:
    p = offer.price
    if p is None:
        return None, None
    if p.total_usd is not None:
        return p.total_usd, "total price as offered"
    hours = HOURS_PER_MONTH if service else (time_s / 3600 if time_s else None)
    if p.gpu_hour_usd is not None:
        if hours is None:
            return None, "per GPU-hour; the run time is open"
        month = " (one month)" if service else ""
        how = f"{p.gpu_hour_usd:g} USD/GPU-h x {counted(gpus, 'GPU')} x {hours:,.0f} h{month}"
        return p.gpu_hour_usd * gpus * hours, how
    assert p.monthly_usd is not None
    months = 1.0 if service or hours is None else max(1.0, math.ceil(hours / HOURS_PER_MONTH))
    return p.monthly_usd * months, f"{p.monthly_usd:g} USD/month x {months:g}"


def _open_confirmations(offer: Offer) -> list[OpenConfirmation]:
    stated = {"availability": f"{counted(offer.count, 'GPU')} stated", "lead_time": None if offer.lead_time is None else
              f"{offer.lead_time / 86400:,.0f} days stated", "schedule": None,
              "sla": None if offer.sla is None else "terms stated", "price": None if offer.price is None else
              "indicative price stated"}
    out = []
    for item in CONFIRMATIONS:
        if item in offer.confirmed:
            continue
        said = stated[item]
        out.append(OpenConfirmation(item=_CONFIRM_TEXT[item], detail=f"{said}, not confirmed" if said else
                                    "not stated"))
    return out


def check_offer(offer: Offer, req_doc: dict[str, Any], intake: dict[str, Any], rules: SubstitutionRules | None,
                catalog: Catalog, recompile: Recompile, access_given: bool) -> OfferCheck:
    system = offer_system(offer, catalog)
    acc = catalog.accelerator(system.accelerator)
    need = int(number(req_doc, "compute.gpus") or 0)
    same = acc.id == get_path(req_doc, "compute.accelerator") and system.id == get_path(req_doc, "compute.system")
    doc, sub, layers = req_doc, None, []
    if not same or offer.count < need:
        recompiled, gpus, why = _recompiled(offer, system, req_doc, recompile, intake)
        t_new = time_to_result_s(recompiled) if recompiled else None
        p_new = number(recompiled, "facility.it_power_w") if recompiled else None
        tc = _change(t_new, time_to_result_s(req_doc))
        pc = _change(p_new, number(req_doc, "facility.it_power_w"))
        accepted, rule = _judge(rules, acc.id, acc.vendor, tc, pc, acc.id == get_path(req_doc, "compute.accelerator"))
        feasible = why is None
        sub = Substitution(accelerator=acc.id, system=system.id, gpus=gpus, feasible=feasible, binding=why,
                           time_to_result_s=t_new, time_change=tc, it_power_w=p_new, power_change=pc, rule=rule,
                           accepted=accepted if feasible else False)
        if recompiled is not None and feasible:
            doc = recompiled
    short = need - offer.count
    required = f"{need:,} x {get_path(req_doc, 'compute.accelerator')}"
    if short > 0:
        layers.append(LayerCheck(layer="compute", status="gap", required=required,
                                 offered=f"{offer.count:,} x {acc.id}", shortfall=float(short), unit="count",
                                 detail=f"{counted(short, 'GPU')} short" + (f"; on {offer.count:,} the run takes "
                                 f"{sub.time_to_result_s / 86400:,.1f} d" if sub and sub.time_to_result_s else "")))
    elif not same:
        status = "substitution" if sub and sub.accepted is not False else "gap"
        on = f"sized again on the offer: {sub.gpus:,} of its {counted(offer.count, 'GPU')}; " \
            if sub and sub.feasible and sub.gpus != offer.count else ""
        layers.append(LayerCheck(layer="compute", status=status, required=required,
                                 offered=f"{offer.count:,} x {acc.id} ({system.id})",
                                 detail=on + (sub.rule or "") if sub else ""))
    else:
        layers.append(LayerCheck(layer="compute", status="fits", required=f"{need:,} x {acc.id}",
                                 offered=f"{offer.count:,} x {acc.id}", detail="same accelerator and system"))
    layers += fabric_checks(doc, offer, system, rules) + storage_checks(doc, offer) + [
        software_check(doc, offer, access_given)] + facility_checks(doc, offer)
    statuses = {c.status for c in layers}
    verdict = "gap" if "gap" in statuses or (sub is not None and not sub.feasible) else (
        "substitution" if "substitution" in statuses else "fits")
    time = sub.time_to_result_s if sub is not None else time_to_result_s(req_doc)
    service = req_doc.get("kind") == "inference"
    used = sub.gpus if sub is not None else need or offer.count
    cost, basis = _cost(offer, used, time, service)
    lead = offer.lead_time
    from_order = None if time is None and not service else (lead or 0.0) + (time or 0.0)
    left = (get_path(doc, "measured.left_behind") or []) if doc is not req_doc else []
    remeasure = [OpenConfirmation(item="measurements on the offered hardware",
                                  detail="the requirement's were taken on its own machine and are not applied here: "
                                         + ", ".join(left) + "; measure them on the offer's")] if left else []
    return OfferCheck(id=offer.id, supplier=offer.supplier, system=system.id, accelerator=acc.id, count=offer.count,
                      verdict=verdict, layers=layers, substitution=sub,
                      open_confirmations=_open_confirmations(offer) + remeasure,
                      time_to_result_s=time, lead_time_s=lead, time_from_order_s=from_order, cost_usd=cost,
                      cost_basis=basis)


def supply_check(req: BaseModel, intake: dict[str, Any], offers: list[Offer], rules: SubstitutionRules | None,
                 catalog: Catalog, recompile: Recompile, access_given: bool) -> SupplyCheck:
    doc = req.model_dump(mode="json")
    if not doc.get("compute"):
        raise Infeasible("requirement", f"the requirement did not size a system ({doc.get('binding_constraint')}); "
                         "there is nothing to hold the offers against")
    checks = [check_offer(o, doc, intake, rules, catalog, recompile, access_given) for o in offers]
    order = {"fits": 0, "substitution": 1, "gap": 2}
    checks.sort(key=lambda c: (order[c.verdict] == 2, c.time_from_order_s if c.time_from_order_s is not None
                               else math.inf, c.cost_usd if c.cost_usd is not None else math.inf))
    for i, c in enumerate(checks, 1):
        c.rank = i
    requirement = Requirement(
        name=doc.get("name"), kind=str(doc.get("kind")), accelerator=str(get_path(doc, "compute.accelerator")),
        system=str(get_path(doc, "compute.system")), gpus=int(number(doc, "compute.gpus") or 0),
        time_to_result_s=time_to_result_s(doc), it_power_w=number(doc, "facility.it_power_w"),
        facility_power_w=number(doc, "facility.facility_power_w"), access_model=get_path(doc, "software.access_model"))
    return SupplyCheck(requirement=requirement, offers=checks)


__all__ = ["OfferCheck", "OpenConfirmation", "Requirement", "Substitution", "SupplyCheck", "check_offer",
           "supply_check"]
