"""What a compiled spec expects of each of its nodes: the readiness checklist ids of its software
layer, and the node type's GPUs, NICs and NIC rate from the catalog system it sized."""

from __future__ import annotations

from typing import Any

from ..catalog.loader import Catalog
from ..software import software_data
from ..spine.result import SystemSpec
from .node_readiness import Expectations

VENDORS = {"nvidia": "nvidia", "amd": "amd"}


def default_expectations() -> Expectations:
    """No sized spec: the checklist of a multi-node GPU cluster, presence checked, counts and rates
    not; GPUDirect Storage only when a spec asks for it (it is opt-in in the intake)."""
    ids = [item.id for item in software_data().readiness if item.when != "gpudirect_storage"]
    return Expectations(source="no sized spec (pass --spec INTAKE to check counts and rates)", checklist=ids,
                        multi_node=True, gpudirect_storage=False)


def spec_expectations(spec: SystemSpec, catalog: Catalog, label: str) -> Expectations:
    compute = spec.compute if isinstance(spec.compute, dict) else (
        spec.compute.model_dump() if spec.compute is not None else {})
    software = spec.software or {}
    ids = [str(item["id"]) for item in software.get("readiness", [])] or default_expectations().checklist
    if not compute.get("system") or not compute.get("accelerator"):
        return default_expectations().model_copy(update={"source": f"{label}: no compute layer (infeasible?)",
                                                         "checklist": ids})
    system = catalog.system(str(compute["system"]))
    acc = catalog.accelerator(str(compute["accelerator"]))
    nodes = int(compute.get("nodes") or -(-int(compute.get("gpus") or 1) // system.gpus_per_node))
    tech = str(((spec.fabric or {}).get("scale_out") or {}).get("technology", "InfiniBand")).lower()
    transport = "infiniband" if "infiniband" in tech else ("roce" if "roce" in tech else "ethernet")
    collective = next((str(i.get("check")) for i in software.get("readiness", []) if i.get("id") == "collective_tests"),
                      None)
    return Expectations(
        source=f"{label}: {nodes} x {system.id} ({system.gpus_per_node} x {acc.id})", checklist=ids,
        vendor=VENDORS.get(acc.vendor.strip().lower()), accelerator=acc.id, gpus_per_node=system.gpus_per_node,
        nics_per_node=system.scale_out_nics_per_node or None,
        nic_bits_per_s=system.scale_out_nic_bits_per_s or None, transport=transport, multi_node=nodes > 1,
        gpudirect_storage="gpudirect_storage" in ids, collective_target=collective, acceptance=_targets(software))


def _targets(software: dict[str, Any]) -> dict[str, list[str]]:
    """The acceptance targets the compile gave each readiness check (engagement/acceptance.py)."""
    from ..report.engagement_tables import fmt
    out: dict[str, list[str]] = {}
    for item in software.get("readiness", []):
        lines = [" ".join(str(x) for x in (t["test"], t.get("tier"), t.get("precision"),
                                           f"at {fmt(t['message_bytes'], 'B')}" if t.get("message_bytes") else None)
                          if x) + f" >= {fmt(t['expected'], t['unit'])}" for t in item.get("acceptance") or []]
        if lines:
            out[str(item["id"])] = lines
    return out
