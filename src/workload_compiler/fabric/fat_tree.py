"""Scale-out (compute) fabric: a (rail-optimized) fat tree of 1, 2 or 3 switch tiers.

Rules, each from a reference architecture or the fat-tree literature (reference/infrastructure.md):

- Build by scalable unit (SU): leaves and leaf-spine cables are provisioned for the full SU even
  when fewer nodes are populated (DGX SuperPOD RAs, "Network Fabrics": "the fabric should be
  designed to support the full SU").
- Rail-optimized: NIC i of every node in an SU goes to rail i; a rail of an SU gets
  ceil(su_nodes / leaf_down_ports) leaves; rails share a leaf when the SU is smaller than a leaf.
- Leaf ports split down:up by the oversubscription (1:1 = k/2 down, k/2 up).
- Even striping: every leaf sends the same number of cables to every spine it reaches, so the
  spine count must divide a leaf's uplink count. Spines = the smallest divisor of the leaf
  uplinks that is >= the port minimum ceil(uplink cables / k). This is the rule behind the RAs'
  "rounded up" spine counts: H100 3 SU -> 16 (not 12), B300-XDR 4 SU -> 18 (not 16); it gives
  every row of DGX H100 RA Tables 3 and 4 and the B200 RA table.
- Two tiers hold at most k leaves (k^2/2 endpoints at 1:1); beyond that a third tier: pods of
  k/2 leaves (whole SUs) with their own spines (spines 1:1 down/up), spine j of every pod
  reaching core group j (Al-Fares et al., SIGCOMM 2008, k-ary fat tree, k^3/4 endpoints). Each
  group gets the smallest divisor of a spine's uplinks that gives the pods enough core ports.
- Transceivers (DGX H100 RA 4-SU BOM, Tables 7-8): switch side one twin-port OSFP per 2 switch
  ports provisioned (1,536 for 48 QM9700); node side one per `node_ports_per_transceiver` ports
  (DGX H100: two-port OSFP, 127 x 4 = 508).
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from ..errors import Infeasible, InputError
from ._base import Traced, assume, require_choice, require_int, require_positive

TECHNOLOGIES = ("infiniband", "ethernet", "spectrum-x")
_IB_GENERATION = {100e9: "EDR", 200e9: "HDR", 400e9: "NDR", 800e9: "XDR", 1600e9: "XDR-1.6T"}
P = "fabric.scale_out."


class Cables(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    node_leaf: int      # compute NIC ports + fabric-management (UFM) ports
    leaf_spine: int
    spine_core: int
    total: int


class Transceivers(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    switch: int
    node: int
    total: int


class ScaleOutFabric(Traced):
    topology: str
    technology: str
    tiers: int
    nodes: int
    endpoints: int                       # compute NIC ports on the fabric
    scalable_units: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    switches: int
    leaf_down_ports: int
    leaf_up_ports: int
    cables: Cables
    transceivers: Transceivers
    link_bits_per_s: float
    oversubscription: float              # achieved leaf down:up ratio
    max_endpoints_at_tiers: int           # what this tier count can hold with this switch
    bisection_bytes_per_s: float
    per_gpu_scale_out_bytes_per_s: float


def _smallest_divisor_at_least(n: int, floor: int) -> int:
    """The smallest divisor of n that is >= floor (n itself at worst)."""
    for d in range(max(1, floor), n + 1):
        if n % d == 0:
            return d
    return n


def _leaves_per_su(su_nodes: int, rails: int, down: int, rail_optimized: bool) -> int:
    if not rail_optimized:
        return math.ceil(su_nodes * rails / down)
    if su_nodes >= down:
        return rails * math.ceil(su_nodes / down)
    rails_per_leaf = down // su_nodes
    return math.ceil(rails / rails_per_leaf)


def _technology_label(technology: str, link_bits_per_s: float) -> str:
    gbps = f"{link_bits_per_s / 1e9:g}G"
    if technology == "infiniband":
        return f"InfiniBand {_IB_GENERATION.get(link_bits_per_s, gbps)}"
    if technology == "spectrum-x":
        return f"Ethernet Spectrum-X {gbps}"
    return f"Ethernet RoCE {gbps}"


def size_scale_out(
    *,
    gpus: int,
    gpus_per_node: int,
    nics_per_node: int,
    nic_bits_per_s: float,
    switch_radix: int,
    switch_port_bits_per_s: float,
    technology: str = "infiniband",
    oversubscription: float = 1.0,
    su_nodes: int | None = None,
    rail_optimized: bool = True,
    management_ports: int = 0,
    node_ports_per_transceiver: int = 1,
    switch_ports_per_transceiver: int = 2,
) -> ScaleOutFabric:
    """Switches, cables and transceivers of the compute fabric for `gpus` GPUs.

    Radix and speeds are the switch's physical ports; a port that is an integer multiple of the
    NIC speed is split (e.g. SN5600 64x800G -> 128x400G). `management_ports` are fabric-manager
    (UFM) ports on leaves, counted with the node cables as in DGX H100 RA Table 4 (4 at every SU
    count). `su_nodes=None` means no SU quantization (the nodes form one unit).
    """
    gpus = require_int("compute.gpus", gpus)
    gpus_per_node = require_int("compute.gpus_per_node", gpus_per_node)
    nics = require_int("fabric.nics_per_node", nics_per_node)
    nic_bits = require_positive("fabric.nic_bits_per_s", nic_bits_per_s)
    radix = require_int("fabric.switch_radix", switch_radix, minimum=2)
    port_bits = require_positive("fabric.switch_port_bits_per_s", switch_port_bits_per_s)
    technology = require_choice("fabric.technology", technology, TECHNOLOGIES)
    oversub = require_positive("fabric.oversubscription", oversubscription)
    if oversub < 1:
        raise InputError("fabric.oversubscription", oversubscription,
                         "a leaf down:up ratio >= 1 (1 = full bisection)")
    management_ports = require_int("fabric.management_ports", management_ports, minimum=0)
    node_tx = require_int("fabric.node_ports_per_transceiver", node_ports_per_transceiver)
    switch_tx = require_int("fabric.switch_ports_per_transceiver", switch_ports_per_transceiver)

    nodes = math.ceil(gpus / gpus_per_node)
    su = nodes if su_nodes is None else require_int("fabric.su_nodes", su_nodes)
    sus = math.ceil(nodes / su)
    assumptions = []
    if nodes * gpus_per_node != gpus:
        assumptions.append(assume(P + "nodes", nodes, f"{gpus} GPUs do not fill whole nodes of "
                                  f"{gpus_per_node}; rounded up"))

    # A switch port faster than the NIC is split into NIC-speed ports; a slower one caps the link.
    split = int(port_bits // nic_bits) if port_bits >= nic_bits else 1
    k = radix * split
    link_bits = min(nic_bits, port_bits)
    if k < 2:
        raise Infeasible("fabric.switch_radix", f"a switch of {k} ports cannot build a fat tree")
    endpoints = nodes * nics
    built_node_ports = sus * su * nics

    down = min(k - 1, math.floor(k * oversub / (1 + oversub)))
    up = k - down
    leaves_su = _leaves_per_su(su, nics, down, rail_optimized)
    leaves = sus * leaves_su
    formulas = {
        P + "leaf_switches": "su_count x leaves_per_su (rail-optimized, full-SU build)",
        P + "cables.node_leaf": "nodes x nics_per_node + management_ports",
        P + "transceivers.switch": "ceil(provisioned switch ports / switch_ports_per_transceiver)",
        P + "transceivers.node": "nodes x ceil(nics_per_node / node_ports_per_transceiver)",
        P + "bisection_bytes_per_s": "endpoints / 2 x link_bytes_per_s / oversubscription",
        "fabric.per_gpu_scale_out_bytes_per_s": "nics_per_node x link_bits_per_s / 8 / gpus_per_node",
    }

    spines = cores = leaf_spine = spine_core = 0
    if built_node_ports + management_ports <= k:
        tiers, leaves, down, up, oversub_achieved = 1, 1, k, 0, 1.0
        max_endpoints = k
    elif leaves <= k:
        tiers = 2
        leaf_spine = leaves * up
        spines = _smallest_divisor_at_least(up, math.ceil(leaf_spine / k))
        max_endpoints = k * down
        oversub_achieved = down / up
        formulas[P + "spine_switches"] = ("smallest divisor of leaf uplinks >= ceil(leaf-spine cables / "
                                          "radix) (even striping)")
    else:
        tiers = 3
        spine_down = k // 2
        pod_leaves = (spine_down // leaves_su) * leaves_su if leaves_su <= spine_down else spine_down
        pods = math.ceil(leaves / pod_leaves)
        last = leaves - (pods - 1) * pod_leaves
        per_pod = _smallest_divisor_at_least(up, math.ceil(pod_leaves * up / spine_down))
        spines = (pods - 1) * per_pod + _smallest_divisor_at_least(up, math.ceil(last * up / spine_down))
        leaf_spine = leaves * up
        spine_core = leaf_spine                      # spines 1:1 down:up
        spine_up = pod_leaves * up // per_pod
        per_group = _smallest_divisor_at_least(spine_up, math.ceil(pods * spine_up / k))
        if pods * spine_up > per_group * k:
            raise Infeasible("fabric.scale_out.tiers", f"{endpoints} endpoints need {pods} pods; a "
                             f"3-tier fat tree of {k}-port switches holds at most {k} pods "
                             f"({k * pod_leaves * down} endpoints)")
        cores = per_pod * per_group
        max_endpoints = k * pod_leaves * down
        oversub_achieved = down / up
        formulas[P + "spine_switches"] = ("per pod of k/2 leaves: smallest divisor of leaf uplinks >= "
                                          "ceil(pod uplinks / (k/2))")
        formulas[P + "core_switches"] = ("spines_per_pod x smallest divisor of spine uplinks >= "
                                         "ceil(pods x spine uplinks / k)")

    node_leaf = endpoints + management_ports
    cables = Cables(node_leaf=node_leaf, leaf_spine=leaf_spine, spine_core=spine_core,
                    total=node_leaf + leaf_spine + spine_core)
    switch_ports = (built_node_ports if tiers > 1 else endpoints + management_ports) \
        + 2 * leaf_spine + 2 * spine_core
    tx_switch = math.ceil(switch_ports / switch_tx)
    tx_node = nodes * math.ceil(nics / node_tx)
    link_bytes = link_bits / 8
    assumptions.append(assume(P + "node_ports_per_transceiver", node_tx,
                              "compute ports per node-side transceiver (DGX H100/B200: two-port OSFP = 2; "
                              "single-port OSFP/QSFP NICs = 1)"))
    assumptions.append(assume(P + "switch_ports_per_transceiver", switch_tx,
                              "twin-port OSFP on QM9700/Q3400/SN5600 cages (DGX H100 RA 4-SU BOM: 1,536 "
                              "switch OSFPs for 48 x 64 ports)"))
    if oversub != 1:
        assumptions.append(assume(P + "oversubscription", oversub_achieved,
                                  f"leaf split {down} down : {up} up for a requested {oversub:g}:1"))
    return ScaleOutFabric(
        topology="rail-optimized fat tree" if rail_optimized and tiers > 1 else
        ("single switch" if tiers == 1 else "fat tree"),
        technology=_technology_label(technology, link_bits), tiers=tiers, nodes=nodes,
        endpoints=endpoints, scalable_units=sus, leaf_switches=leaves, spine_switches=spines,
        core_switches=cores, switches=leaves + spines + cores, leaf_down_ports=down, leaf_up_ports=up,
        cables=cables, transceivers=Transceivers(switch=tx_switch, node=tx_node, total=tx_switch + tx_node),
        link_bits_per_s=link_bits, oversubscription=oversub_achieved, max_endpoints_at_tiers=max_endpoints,
        bisection_bytes_per_s=endpoints / 2 * link_bytes / oversub_achieved,
        per_gpu_scale_out_bytes_per_s=nics * link_bytes / gpus_per_node,
        assumptions=assumptions, formulas=formulas,
    )
