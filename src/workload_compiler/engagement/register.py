"""The boundary register (seed 000): five items, each with its status, owner, answer and the sizing
inputs it depends on. Item 01 (resource scope) is filled from the sizing — which compute, fabric
and storage must be exclusive (the NVLink domains the layout spans, the job's leaf switches);
item 02 gets the sizing's view of what may be shared (the storage tier's headroom, the management
networks); item 03 holds the substitution rules the supply check evaluates. "No capacity is
implied by this register."
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field

from ..intake.boundary import BoundaryIntake, SubstitutionRules
from ..quantity import Unit, quantity_in
from ..report.format import format_quantity
from ..software.data import SoftwareData, software_data
from ..spine.doc import Doc
from ..units import counted, format_bytes_decimal, format_duration, format_power
from .operations import OperationsLoad
from .view import get_path, number, section_dict, time_to_result_s


class ScopeEntry(Doc):
    resource: str
    layer: str
    quantity: float | None = quantity_in("unit", "how much of the resource", default=None)
    unit: Unit | None = None
    exclusive: bool
    why: str


class RegisterItem(Doc):
    id: str
    title: str
    question: str
    decided_by: str
    status: str = Field(description="OPEN | proposed | confirmed")
    owner: str | None = None
    answer: str | None = None
    sizing_view: str | None = Field(default=None, description="what the sizing says about this item")
    depends_on: list[str] = Field(default_factory=list, description="the sizing inputs (result paths) it reads")
    scope: list[ScopeEntry] = Field(default_factory=list)
    rules: SubstitutionRules | None = None


class BoundaryRegister(Doc):
    items: list[RegisterItem]
    note: str


def _fmt_bytes_s(v: float) -> str:
    """'17.0 MB/s', '180 GB/s': the report's own rate format, whatever the magnitude."""
    return format_quantity(v, "B/s")


def _quantity(e: ScopeEntry) -> str:
    """'4,096 GPUs (dgx-h100)', 'storage capacity 38.4 TB', 'IT power 5.99 MW'."""
    if e.quantity is None:
        return e.resource
    if e.unit == "count":
        return f"{e.quantity:,.0f} {_singular(e.resource) if e.quantity == 1 else e.resource}"
    text = {"B": format_bytes_decimal(e.quantity), "B/s": _fmt_bytes_s(e.quantity),
            "W": format_power(e.quantity)}.get(e.unit or "", f"{e.quantity:,.4g}")
    return f"{e.resource} {text}"


# The plural head nouns of the counted resources below, and their singular ("1 compute-fabric leaf switch")
_SINGULAR = {"GPUs": "GPU", "domains": "domain", "switches": "switch"}


def _singular(resource: str) -> str:
    """'compute-fabric leaf switches' -> 'compute-fabric leaf switch': the first plural head noun only
    ('NVLink domains of 8 GPUs' -> 'NVLink domain of 8 GPUs')."""
    words = resource.split(" ")
    i = next((k for k, w in enumerate(words) if w in _SINGULAR), None)
    return resource if i is None else " ".join([*words[:i], _SINGULAR[words[i]], *words[i + 1:]])


def resource_scope(doc: dict[str, Any]) -> list[ScopeEntry]:
    """What the sized job holds exclusively, from the compute, fabric and storage layers."""
    out: list[ScopeEntry] = []
    gpus, nodes = number(doc, "compute.gpus"), number(doc, "compute.nodes")
    system = get_path(doc, "compute.system")
    serving = doc.get("kind") == "inference"
    if gpus:
        holds = "a replica holds its GPUs while it serves" if serving else "a synchronous job cannot share its GPUs"
        out.append(ScopeEntry(resource=f"GPUs ({system})", layer="Compute", quantity=gpus, unit="count", exclusive=True,
                              why=f"in {counted(nodes, 'node')}; {holds}" if nodes else
                              "the sized GPUs"))
    domain = number(doc, "fabric.scale_up_domain.gpus") or number(doc, "compute.gpus_per_node")
    tiers = get_path(doc, "fabric.placement.tiers") or {}
    if gpus and domain:
        on_nvlink = [k for k, v in tiers.items() if v == "scale-up"]
        why = ("each replica's tensor-parallel group runs inside one" if serving
               else f"{', '.join(on_nvlink).upper()} groups run inside them" if on_nvlink
               else "the scale-up (NVLink) domain of each node is held with its GPUs")
        out.append(ScopeEntry(resource=f"NVLink domains of {domain:.0f} GPUs", layer="Fabric",
                              quantity=math.ceil(gpus / domain), unit="count", exclusive=True, why=why))
    so = section_dict(doc, "fabric")
    leaves = number(doc, "fabric.scale_out.leaf_switches") or 0
    if so and leaves:     # one node has no compute-fabric switch to hold
        spines = number(doc, "fabric.scale_out.spine_switches") or 0
        cores = number(doc, "fabric.scale_out.core_switches") or 0
        out.append(ScopeEntry(resource="compute-fabric leaf switches", layer="Fabric", quantity=leaves, unit="count",
                              exclusive=True, why="rail-optimized: every GPU's NIC lands on the job's leaves; "
                              "another tenant's traffic there would contend with its collectives"))
        if spines or cores:
            dp_out = tiers.get("dp") == "scale-out" or tiers.get("pp") == "scale-out"
            out.append(ScopeEntry(resource="compute-fabric spine and core switches", layer="Fabric",
                                  quantity=spines + cores, unit="count", exclusive=dp_out,
                                  why="the layout's cross-node groups cross them" if dp_out
                                  else "no group of the layout crosses them"))
    read = number(doc, "storage.read_bytes_per_s")
    write = number(doc, "storage.checkpoint_write_bytes_per_s")
    cap = number(doc, "storage.capacity_bytes")
    if cap:
        out.append(ScopeEntry(resource="storage capacity", layer="Storage", quantity=cap, unit="B", exclusive=True,
                              why="the served checkpoint and the versions kept beside it belong to the fleet"
                              if serving else "the dataset and retained checkpoints belong to the job"))
    load = number(doc, "storage.fleet_read_bytes_per_s")
    if load:
        out.append(ScopeEntry(resource="checkpoint load bandwidth", layer="Storage", quantity=load, unit="B/s",
                              exclusive=False, why="bursty: while replicas start (all at once: a fleet restart)"))
    if read is not None:
        out.append(ScopeEntry(resource="storage read bandwidth", layer="Storage", quantity=read, unit="B/s",
                              exclusive=False, why="the job's steady read demand; the tier's remainder may be shared"))
    if write:
        out.append(ScopeEntry(resource="checkpoint write bandwidth", layer="Storage", quantity=write, unit="B/s",
                              exclusive=False, why="bursty: needed during each checkpoint write"))
    power = number(doc, "facility.it_power_w")
    if power:
        out.append(ScopeEntry(resource="IT power", layer="Facility", quantity=power, unit="W", exclusive=True,
                              why=f"{number(doc, 'facility.racks') or 0:,.0f} racks at the sized density"))
    return out


def shared_layers(doc: dict[str, Any]) -> list[ScopeEntry]:
    out: list[ScopeEntry] = []
    tier_read, read = number(doc, "storage.tier_read_bytes_per_s"), number(doc, "storage.read_bytes_per_s")
    if tier_read is not None and read is not None:
        head = tier_read - read
        out.append(ScopeEntry(resource=f"storage read headroom ({get_path(doc, 'storage.tier')} tier)", layer="Storage",
                              quantity=max(head, 0.0), unit="B/s", exclusive=False,
                              why=f"{_fmt_bytes_s(tier_read)} tier read less the job's {_fmt_bytes_s(read)}"
                              + ("" if head > 0 else ": none left to share")))
    tier_write = number(doc, "storage.tier_write_bytes_per_s")
    if tier_write is not None:
        out.append(ScopeEntry(resource="storage write between checkpoints", layer="Storage", quantity=tier_write,
                              unit="B/s", exclusive=False,
                              why="the checkpoint burst needs it only while it writes; sharing it lengthens the stall"))
    for net in ("in_band", "out_of_band", "storage"):
        name = get_path(doc, f"fabric.networks.{net}.name")
        if name:
            out.append(ScopeEntry(resource=str(name), layer="Fabric" if net == "storage" else "Monitoring",
                                  quantity=number(doc, f"fabric.networks.{net}.switches"), unit="count",
                                  exclusive=False, why="management and storage traffic do not carry the job's "
                                  "collectives; shared if security and data constraints allow"))
    return out


def _item(base: Any, answers: BoundaryIntake, **fields: Any) -> RegisterItem:
    given = answers.answers.get(base.id)
    status = fields.pop("status", "OPEN")
    owner = fields.pop("owner", None)
    answer = fields.pop("answer", None)
    if given is not None:
        status, owner, answer = given.status, given.owner or owner, given.answer
    return RegisterItem(id=base.id, title=base.title, question=base.question, decided_by=base.decided_by,
                        status=status, owner=owner, answer=answer, **fields)


def boundary_register(doc: dict[str, Any], answers: BoundaryIntake, operations: OperationsLoad | None,
                      data: SoftwareData | None = None) -> BoundaryRegister:
    data = data or software_data()
    base = {i.id: i for i in data.boundary.register_items}
    scope = resource_scope(doc)
    exclusive = "; ".join(_quantity(e) for e in scope if e.exclusive)
    shared = shared_layers(doc)
    rules = answers.substitution
    acc = get_path(doc, "compute.accelerator")
    # an infeasible compile sizes nothing: say so rather than print an empty scope or "None"
    nothing = "nothing sized: the compile found no feasible configuration"
    ttr = time_to_result_s(doc)
    gpus = number(doc, "compute.gpus") or 0
    held = counted(gpus, "GPU")
    if not ttr:
        commercial = f"{held} held for the service's term"
    elif math.isfinite(ttr):
        commercial = f"{gpus * ttr / 3600:,.0f} GPU-hours for one run ({held} x {format_duration(ttr)})"
    else:
        commercial = f"{held}; the run's time is not reached"
    items = [
        _item(base["01"], answers, status="proposed", owner="Sizing input",
              answer=f"Exclusive: {exclusive}." if exclusive else nothing,
              sizing_view="filled from the sizing", scope=scope,
              depends_on=["compute.gpus", "compute.nodes", "fabric.scale_up_domain", "fabric.placement.tiers",
                          "fabric.scale_out", "storage.capacity_bytes", "facility.it_power_w"]),
        _item(base["02"], answers, scope=shared,
              sizing_view="; ".join(f"{e.resource}: {e.why}" for e in shared) or "nothing sized to share",
              depends_on=["storage.tier_read_bytes_per_s", "storage.read_bytes_per_s", "fabric.networks"]),
        _item(base["03"], answers, status="proposed" if rules else "OPEN", owner=rules.owner if rules else None,
              answer=_rules_text(rules) if rules else None, rules=rules,
              sizing_view=(f"sized on {acc}; the supply check (wkc supply) evaluates each offer against these rules"
                           if acc else nothing),
              depends_on=["compute.accelerator", "compute.system", "fabric.scale_out", "objective"]),
        _item(base["04"], answers,
              sizing_view=(f"{commercial}; IT power {format_power(number(doc, 'facility.it_power_w') or 0.0)}"
                           if gpus else nothing),
              depends_on=["compute.gpus", "objective", "facility.it_power_w"]),
        _item(base["05"], answers, sizing_view=_lifecycle_view(operations),
              depends_on=["operations", "operating_boundary"]),
    ]
    return BoundaryRegister(items=items, note=data.boundary.note)


def _rules_text(r: SubstitutionRules) -> str:
    parts = []
    if r.accelerators:
        parts.append("accelerators " + ", ".join(r.accelerators))
    if r.vendors:
        parts.append("any accelerator of " + ", ".join(r.vendors))
    if r.max_time_increase is not None:
        parts.append(f"time to result at most {100 * r.max_time_increase:.0f}% longer")
    if r.max_power_increase is not None:
        parts.append(f"IT power at most {100 * r.max_power_increase:.0f}% higher")
    if r.fabric_technologies:
        parts.append("fabric " + " or ".join(r.fabric_technologies))
    if r.max_oversubscription is not None:
        parts.append(f"oversubscription at most {r.max_oversubscription:g}:1")
    if r.min_scale_up_domain_gpus is not None:
        parts.append(f"scale-up domain of at least {r.min_scale_up_domain_gpus} GPUs")
    return "acceptable: " + "; ".join(parts) if parts else "no substitution acceptable"


def _lifecycle_view(ops: OperationsLoad | None) -> str:
    if ops is None:
        return "operations load not sized"
    return (f"{ops.rma_per_year:,.0f} RMAs a year, {ops.incidents_per_week:,.1f} incidents a week, a spares pool "
            f"of {ops.spares_total:,.0f} parts for a {ops.restore_time_s / 86400:,.1f}-day restore; "
            f"{ops.undefined_responsibilities} of the spares, RMA and incident responsibilities TO DEFINE")


__all__ = ["BoundaryRegister", "RegisterItem", "ScopeEntry", "boundary_register", "resource_scope", "shared_layers"]
