"""One offer against the requirement, layer by layer: fits, gap (with the numbers), or open (the
offer does not say). Pure functions over the requirement document and one offer; the compute
layer's substitution is judged in engagement/supply.py, where the offer is recompiled."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..catalog.loader import Catalog
from ..catalog.schema import System
from ..errors import InputError
from ..intake.boundary import SubstitutionRules
from ..intake.offers import Offer
from ..quantity import Unit
from ..report.format import format_quantity
from ..software.data import software_data
from ..spine.doc import Doc
from .view import get_path, number

LayerStatus = Literal["fits", "gap", "substitution", "open"]


class LayerCheck(Doc):
    layer: str
    status: LayerStatus
    required: str
    offered: str
    detail: str
    shortfall: float | None = Field(default=None, description="how much is missing, in `unit`")
    unit: Unit | None = None


def _gbs(v: float) -> str:
    """A byte rate as the reports print it ('17.0 MB/s', '180 GB/s')."""
    return format_quantity(v, "B/s")


def _bytes(v: float) -> str:
    return f"{v / 1e12:,.3g} TB" if v >= 1e12 else f"{v / 1e9:,.3g} GB"


def _kw(v: float) -> str:
    return f"{v / 1e3:,.1f} kW" if v < 1e6 else f"{v / 1e6:,.2f} MW"


def _compare(layer: str, what: str, need: float | None, have: float | None, unit: Unit, fmt: Any) -> LayerCheck | None:
    if need is None or need <= 0:
        return None
    if have is None:
        return LayerCheck(layer=layer, status="open", required=f"{what} {fmt(need)}", offered="not stated",
                          detail=f"{what}: the offer does not state it")
    if have + 1e-9 * need >= need:
        return LayerCheck(layer=layer, status="fits", required=f"{what} {fmt(need)}", offered=fmt(have),
                          detail=f"{what}: {fmt(have)} covers {fmt(need)}")
    return LayerCheck(layer=layer, status="gap", required=f"{what} {fmt(need)}", offered=fmt(have),
                      detail=f"{what}: short by {fmt(need - have)} ({fmt(have)} of {fmt(need)})",
                      shortfall=need - have, unit=unit)


def offer_system(offer: Offer, catalog: Catalog) -> System:
    if offer.system is not None:
        system = catalog.system(offer.system)
        if offer.accelerator is not None and catalog.accelerator(offer.accelerator).id != system.accelerator:
            raise InputError(f"offers[{offer.id}].accelerator", offer.accelerator,
                             f"the accelerator of system {system.id} ({system.accelerator})")
        return system
    assert offer.accelerator is not None
    return catalog.default_system(catalog.accelerator(offer.accelerator).id)


def _technology(text: str | None) -> str | None:
    if text is None:
        return None
    t = text.lower()
    for key in ("infiniband", "spectrum-x", "roce", "ethernet"):
        if key in t:
            return key
    return t


def fabric_checks(req: dict[str, Any], offer: Offer, system: System,
                  rules: SubstitutionRules | None) -> list[LayerCheck]:
    if not isinstance(req.get("fabric"), dict):
        return [LayerCheck(layer="fabric", status="fits", required="one node, no scale-out fabric",
                           offered=str(offer.fabric.technology or "—"), detail="the job fits one node")]
    out: list[LayerCheck] = []
    per_gpu = offer.fabric.per_gpu_bandwidth or (
        system.scale_out_nics_per_node * system.scale_out_nic_bits_per_s / 8 / system.gpus_per_node or None)
    check = _compare("fabric", "scale-out per GPU", number(req, "fabric.per_gpu_scale_out_bytes_per_s"), per_gpu,
                     "B/s", _gbs)
    if check:
        out.append(check)
    need_tech = _technology(get_path(req, "fabric.scale_out.technology"))
    have_tech = _technology(offer.fabric.technology)
    if have_tech is None:
        out.append(LayerCheck(layer="fabric", status="open", required=str(need_tech), offered="not stated",
                              detail="fabric technology: the offer does not state it"))
    elif have_tech != need_tech:
        allowed = rules is not None and have_tech in [t.lower() for t in rules.fabric_technologies]
        out.append(LayerCheck(layer="fabric", status="substitution" if allowed else "gap", required=str(need_tech),
                              offered=have_tech, detail=f"{have_tech} instead of {need_tech}: "
                              + ("acceptable per register rule 03" if allowed else
                                 "not in register rule 03" if rules else "register rule 03 open: a client decision")))
    need_over = number(req, "fabric.scale_out.oversubscription") or 1.0
    have_over = offer.fabric.oversubscription
    if have_over is not None and have_over > need_over:
        limit = rules.max_oversubscription if rules else None
        ok = limit is not None and have_over <= limit
        out.append(LayerCheck(layer="fabric", status="substitution" if ok else "gap", required=f"{need_over:g}:1",
                              offered=f"{have_over:g}:1",
                              detail=f"oversubscription {have_over:g}:1 where the sizing has {need_over:g}:1"
                              + (" (within rule 03)" if ok else "")))
    tp = int(get_path(req, "compute.parallelism.tp") or 1)
    domain = offer.fabric.scale_up_domain_gpus or system.scale_up_domain_gpus
    floor = max(tp, rules.min_scale_up_domain_gpus or 1) if rules else tp
    if domain < floor:
        out.append(LayerCheck(layer="fabric", status="gap", required=f"scale-up domain >= {floor} GPUs",
                              offered=f"{domain} GPUs", detail=f"TP {tp} needs a {floor}-GPU NVLink domain; the "
                              f"offer's holds {domain}", shortfall=float(floor - domain), unit="count"))
    return out


def storage_checks(req: dict[str, Any], offer: Offer) -> list[LayerCheck]:
    if not isinstance(req.get("storage"), dict):
        return []
    s = offer.storage
    checks = [_compare("storage", "read", number(req, "storage.read_bytes_per_s"), s.read_bandwidth, "B/s", _gbs),
              _compare("storage", "checkpoint write", number(req, "storage.checkpoint_write_bytes_per_s")
                       or number(req, "storage.scratch_write_bandwidth_bytes_per_s"), s.write_bandwidth, "B/s", _gbs),
              _compare("storage", "capacity", number(req, "storage.capacity_bytes")
                       or number(req, "storage.scratch_capacity_bytes"), s.capacity, "B", _bytes)]
    return [c for c in checks if c is not None]


def software_check(req: dict[str, Any], offer: Offer, access_given: bool) -> LayerCheck:
    need = get_path(req, "software.access_model")
    if offer.access_model is None:
        return LayerCheck(layer="software", status="open", required=str(need), offered="not stated",
                          detail="access model: the offer does not state it")
    have = software_data().access(offer.access_model).id
    if have == need:
        return LayerCheck(layer="software", status="fits", required=str(need), offered=have,
                          detail=f"access model {have}")
    return LayerCheck(layer="software", status="gap" if access_given else "open", required=str(need), offered=have,
                      detail=f"the offer provides {have}; the sizing " + (
                          f"requires {need}" if access_given else f"assumed {need}: confirm {have} suits the client"))


def facility_checks(req: dict[str, Any], offer: Offer) -> list[LayerCheck]:
    site = offer.site
    out = [c for c in (
        _compare("facility", "facility power", number(req, "facility.facility_power_w"), site.power, "W", _kw),
        _compare("facility", "rack power", number(req, "facility.rack_power_w"), site.rack_power, "W", _kw))
        if c is not None]
    cooling = get_path(req, "facility.cooling")
    if cooling:
        have = [c.lower() for c in site.cooling]
        if not have:
            out.append(LayerCheck(layer="facility", status="open", required=str(cooling), offered="not stated",
                                  detail="cooling: the offer does not state it"))
        elif str(cooling).lower() not in have:
            out.append(LayerCheck(layer="facility", status="gap", required=str(cooling), offered=", ".join(have),
                                  detail=f"the racks need {cooling} cooling; the site offers {', '.join(have)}"))
        else:
            out.append(LayerCheck(layer="facility", status="fits", required=str(cooling), offered=", ".join(have),
                                  detail=f"{cooling} cooling available"))
    return out


__all__ = [
    "LayerCheck",
    "LayerStatus",
    "fabric_checks",
    "facility_checks",
    "offer_system",
    "software_check",
    "storage_checks",
]
