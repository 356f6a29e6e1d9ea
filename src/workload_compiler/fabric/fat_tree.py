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
  at most k/2 leaves (whole SUs, or k/2, whichever needs fewer switches) with their own spines
  (spines 1:1 down/up), spine j of every pod reaching core group j (Al-Fares et al., SIGCOMM
  2008, k-ary fat tree, k^3/4 endpoints). Each group gets the smallest divisor of a spine's
  uplinks that gives the pods enough core ports. With 8 leaves per SU this is 4-SU pods of 32
  leaves and 2 cores per spine index at 16 SU: the 128/128/64 of DGX H100 RA Table 3.
- Transceivers (DGX H100 RA 4-SU BOM, Tables 7-8): switch side one twin-port OSFP per 2 switch
  ports provisioned (1,536 for 48 QM9700); node side one per `node_ports_per_transceiver` ports
  (DGX H100: two-port OSFP, 127 x 4 = 508).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from ..errors import Infeasible, InputError
from ..provenance import Assumption
from ..quantity import info, quantity
from ._base import Traced, assume, require_choice, require_int, require_positive

TECHNOLOGIES = ("infiniband", "ethernet", "spectrum-x")
_IB_GENERATION = {100e9: "EDR", 200e9: "HDR", 400e9: "NDR", 800e9: "XDR", 1600e9: "XDR-1.6T"}
P = "fabric.scale_out."


class Cables(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    node_leaf: int = quantity("count", "node-to-leaf cables: compute NIC ports + fabric-management (UFM) ports")
    leaf_spine: int = quantity("count", "leaf-to-spine cables")
    spine_core: int = quantity("count", "spine-to-core cables")
    total: int = quantity("count", "all compute-fabric cables")


class Transceivers(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    switch: int = quantity("count", "switch-side transceivers")
    node: int = quantity("count", "node-side transceivers")
    total: int = quantity("count", "all compute-fabric transceivers")


class ScaleOutFabric(Traced):
    topology: str = info("fat tree shape", headline=True)
    technology: str = info("link technology and generation (InfiniBand NDR, Ethernet ...)", headline=True)
    tiers: int = quantity("count", "switch tiers (1, 2 or 3; 0: one node, no compute fabric)", headline=True)
    nodes: int = quantity("count", "nodes on the fabric")
    endpoints: int = quantity("count", "compute NIC ports on the fabric")
    scalable_units: int = quantity("count", "scalable units (SUs) built")
    leaf_switches: int = quantity("count", "leaf switches")
    spine_switches: int = quantity("count", "spine switches")
    core_switches: int = quantity("count", "core switches (3 tiers)")
    switches: int = quantity("count", "all compute-fabric switches", headline=True)
    leaf_down_ports: int = quantity("count", "leaf ports facing nodes")
    leaf_up_ports: int = quantity("count", "leaf ports facing spines")
    cables: Cables
    transceivers: Transceivers
    link_bits_per_s: float = quantity("bit/s", "line rate of one link", headline=True)
    oversubscription: float = quantity("1", "achieved leaf down:up ratio")
    max_endpoints_at_tiers: int = quantity("count", "endpoints this tier count can hold with this switch")
    bisection_bytes_per_s: float = quantity("B/s", "bisection bandwidth, per direction")
    per_gpu_scale_out_bytes_per_s: float = quantity("B/s", "scale-out bandwidth per GPU, per direction")


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


_FORMULAS = {
    P + "tiers": "1 if every port fits one switch; 2 if leaves <= radix; else 3 (k-ary fat tree)",
    P + "leaf_switches": "su_count x leaves_per_su (rail-optimized, full-SU build)",
    P + "spine_switches": "2 tiers: smallest divisor of leaf uplinks >= ceil(leaf-spine cables / radix); "
                          "3 tiers: the same per pod of k/2 leaves against spine down ports k/2",
    P + "core_switches": "spines_per_pod x smallest divisor of spine uplinks >= "
                         "ceil(pods x spine uplinks / k)",
    P + "cables.node_leaf": "nodes x nics_per_node + management_ports",
    P + "cables.leaf_spine": "leaves x leaf uplinks (full-SU build)",
    P + "cables.spine_core": "= leaf-spine cables (spines 1:1) in 3 tiers, else 0",
    P + "transceivers.switch": "ceil(provisioned switch ports / switch_ports_per_transceiver)",
    P + "transceivers.node": "nodes x ceil(nics_per_node / node_ports_per_transceiver)",
    P + "bisection_bytes_per_s": "endpoints / 2 x link_bytes_per_s / oversubscription",
    "fabric.per_gpu_scale_out_bytes_per_s": "nics_per_node x link_bits_per_s / 8 / gpus_per_node",
}


@dataclass(frozen=True)
class _Upper:
    """The tiers above the leaves."""

    tiers: int
    spines: int = 0
    cores: int = 0
    leaf_spine: int = 0
    spine_core: int = 0
    max_endpoints: int = 0


def _two_tier(leaves: int, down: int, up: int, k: int) -> _Upper:
    leaf_spine = leaves * up
    spines = _smallest_divisor_at_least(up, math.ceil(leaf_spine / k))
    return _Upper(tiers=2, spines=spines, leaf_spine=leaf_spine, max_endpoints=k * down)


def _three_tier_pods(leaves: int, pod_leaves: int, down: int, up: int, k: int) -> _Upper:
    spine_down = k // 2
    pods = math.ceil(leaves / pod_leaves)
    last = leaves - (pods - 1) * pod_leaves
    per_pod = _smallest_divisor_at_least(up, math.ceil(pod_leaves * up / spine_down))
    spines = (pods - 1) * per_pod + _smallest_divisor_at_least(up, math.ceil(last * up / spine_down))
    spine_up = pod_leaves * up // per_pod
    per_group = _smallest_divisor_at_least(spine_up, math.ceil(pods * spine_up / k))
    max_endpoints = k * pod_leaves * down
    if pods * spine_up > per_group * k:
        raise Infeasible("fabric.scale_out.tiers", f"{leaves} leaves need {pods} pods; a 3-tier fat tree "
                         f"of {k}-port switches holds at most {k} pods ({max_endpoints} endpoints)")
    return _Upper(tiers=3, spines=spines, cores=per_pod * per_group, leaf_spine=leaves * up,
                  spine_core=leaves * up, max_endpoints=max_endpoints)


def _three_tier(leaves: int, leaves_su: int, down: int, up: int, k: int) -> _Upper:
    """Pods of leaves sharing spines (spines 1:1 down:up), core groups per spine index. A pod holds
    at most k/2 leaves; it is whole SUs or the full k/2, whichever needs the fewest switches
    (ties: the larger pod, as in the RA tables' 4-SU pods of 32 leaves)."""
    spine_down = k // 2
    sizes = {spine_down} | {n * leaves_su for n in range(1, spine_down // leaves_su + 1)}
    best: _Upper | None = None
    for size in sorted(sizes, reverse=True):
        try:
            option = _three_tier_pods(leaves, size, down, up, k)
        except Infeasible:
            continue
        if best is None or option.spines + option.cores < best.spines + best.cores:
            best = option
    return best if best is not None else _three_tier_pods(leaves, spine_down, down, up, k)


def _transceiver_assumptions(node_tx: int, switch_tx: int) -> list[Assumption]:
    return [assume(P + "node_ports_per_transceiver", node_tx,
                   "compute ports per node-side transceiver of the network generation (DGX H100/B200: "
                   "two-port OSFP = 2; single-port OSFP/QSFP56 NICs, as on DGX A100 = 1)"),
            assume(P + "switch_ports_per_transceiver", switch_tx,
                   "switch ports per switch-side transceiver of the generation: twin-port OSFP on "
                   "QM9700/Q3400/SN5600 cages = 2 (DGX H100 RA 4-SU BOM: 1,536 switch OSFPs for 48 x 64 "
                   "ports); QSFP56 on HDR QM8790 = 1")]


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
    nodes = math.ceil(gpus / gpus_per_node)
    # one node talks to no other: a node without NICs (a user catalog's) is sized too
    nics = require_int("fabric.nics_per_node", nics_per_node, minimum=0 if nodes == 1 else 1)
    nic_bits = require_positive("fabric.nic_bits_per_s", nic_bits_per_s, allow_zero=nodes == 1)
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

    su = nodes if su_nodes is None else require_int("fabric.su_nodes", su_nodes)
    sus = math.ceil(nodes / su)
    assumptions = _transceiver_assumptions(node_tx, switch_tx)
    if nodes * gpus_per_node != gpus:
        assumptions.append(assume(P + "nodes", nodes, f"{gpus} GPUs do not fill whole nodes of "
                                  f"{gpus_per_node}; rounded up"))
    link_bits = min(nic_bits, port_bits)
    if nodes == 1:
        # one node talks to no other: no compute fabric to build (its NICs stay for what they could carry)
        none = Cables(node_leaf=0, leaf_spine=0, spine_core=0, total=0)
        return ScaleOutFabric(
            topology="none (one node)", technology=_technology_label(technology, link_bits), tiers=0, nodes=1,
            endpoints=0, scalable_units=0, leaf_switches=0, spine_switches=0, core_switches=0, switches=0,
            leaf_down_ports=0, leaf_up_ports=0, cables=none, transceivers=Transceivers(switch=0, node=0, total=0),
            link_bits_per_s=link_bits, oversubscription=1.0, max_endpoints_at_tiers=0, bisection_bytes_per_s=0.0,
            per_gpu_scale_out_bytes_per_s=nics * link_bits / 8 / gpus_per_node, assumptions=assumptions,
            formulas=dict(_FORMULAS))
    # A switch port faster than the NIC is split into NIC-speed ports; a slower one caps the link.
    k = radix * (int(port_bits // nic_bits) if port_bits >= nic_bits else 1)
    endpoints = nodes * nics
    built_node_ports = sus * su * nics

    down = min(k - 1, math.floor(k * oversub / (1 + oversub)))
    up = k - down
    leaves_su = _leaves_per_su(su, nics, down, rail_optimized)
    leaves = sus * leaves_su
    if built_node_ports + management_ports <= k:
        upper, leaves, down, up = _Upper(tiers=1, max_endpoints=k), 1, k, 0
        built_node_ports = endpoints + management_ports
    elif leaves <= k:
        upper = _two_tier(leaves, down, up, k)
    else:
        upper = _three_tier(leaves, leaves_su, down, up, k)
    achieved = down / up if up else 1.0
    if oversub != 1:
        assumptions.append(assume(P + "oversubscription", achieved,
                                  f"leaf split {down} down : {up} up for a requested {oversub:g}:1"))

    node_leaf = endpoints + management_ports
    cables = Cables(node_leaf=node_leaf, leaf_spine=upper.leaf_spine, spine_core=upper.spine_core,
                    total=node_leaf + upper.leaf_spine + upper.spine_core)
    tx_switch = math.ceil((built_node_ports + 2 * upper.leaf_spine + 2 * upper.spine_core) / switch_tx)
    tx_node = nodes * math.ceil(nics / node_tx)
    link_bytes = link_bits / 8
    topology = "single switch" if upper.tiers == 1 else ("rail-optimized fat tree" if rail_optimized
                                                         else "fat tree")
    return ScaleOutFabric(
        topology=topology, technology=_technology_label(technology, link_bits), tiers=upper.tiers,
        nodes=nodes, endpoints=endpoints, scalable_units=sus, leaf_switches=leaves,
        spine_switches=upper.spines, core_switches=upper.cores, switches=leaves + upper.spines + upper.cores,
        leaf_down_ports=down, leaf_up_ports=up, cables=cables,
        transceivers=Transceivers(switch=tx_switch, node=tx_node, total=tx_switch + tx_node),
        link_bits_per_s=link_bits, oversubscription=achieved, max_endpoints_at_tiers=upper.max_endpoints,
        bisection_bytes_per_s=endpoints / 2 * link_bytes / achieved,
        per_gpu_scale_out_bytes_per_s=nics * link_bytes / gpus_per_node,
        assumptions=assumptions, formulas=dict(_FORMULAS),
    )
