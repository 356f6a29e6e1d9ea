"""Fabric pins -> the `Hardware` the step-time model sees: the one place they reach the physics.

The model has one per-GPU scale-out bandwidth. Traffic that stays under one leaf switch runs at
the NIC's line rate; traffic that leaves it crosses the spine tier, where the leaf has
1/oversubscription of an uplink per downlink, and where flow hashing (ECMP) loses bandwidth to
collisions that adaptive routing avoids (catalog/data/fabric_transport.yaml). With every GPU of a
data-parallel group exchanging at once, a share f of a GPU's traffic leaves its leaf domain
(uniform traffic over a group spanning the cluster, f = 1 - leaf GPUs / cluster GPUs), so

    B_eff = B_line / ((1 - f) + f x oversubscription / cross_leaf_efficiency)

The leaf domain: rail-optimized, GPU i of each node reaches the same-rail GPU of every node on
its leaf in one hop (DGX SuperPOD RA: "one hop away from the other 31 nodes in a SU"), so it holds
min(SU nodes, leaf down ports) nodes; top of rack, a node's NICs share one leaf, which holds
leaf down ports / NICs per node nodes. Without pins (non-blocking InfiniBand, rail-optimized)
B_eff = B_line exactly: the catalog's figure, unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..catalog.loader import Catalog, package_yaml
from ..catalog.schema import Switch, System
from ..errors import InputError
from ..intake.infrastructure import FabricIntake
from ..perf.layout import Hardware

SU_NODES_8GPU = 32      # DGX SuperPOD scalable unit (spine/infrastructure.py)


@dataclass(frozen=True, kw_only=True)
class FabricEffect:
    line_bytes_per_s: float        # per GPU, per direction
    effective_bytes_per_s: float
    leaf_domain_gpus: int
    cross_leaf_share: float
    oversubscription: float
    cross_leaf_efficiency: float
    routing: str                   # adaptive | ecmp

    @property
    def formula(self) -> str:
        return (f"B_line {self.line_bytes_per_s / 1e9:.3g} GB/s / ((1 - f) + f x {self.oversubscription:g} / "
                f"{self.cross_leaf_efficiency:g}), f = {self.cross_leaf_share:.3f} of traffic leaving a "
                f"{self.leaf_domain_gpus}-GPU leaf domain ({self.routing} routing)")


def compute_switch(fabric: FabricIntake, system: System, catalog: Catalog) -> Switch:
    """The compute-fabric switch: pinned, else by transport and NIC speed (the SuperPOD RA rule)."""
    if fabric.switch is not None:
        switch = catalog.switch(fabric.switch)
        ethernet = "ethernet" in switch.technology.lower()
        if (fabric.transport == "roce" and not ethernet) or (fabric.transport == "infiniband" and ethernet):
            raise InputError("fabric.transport", fabric.transport,
                             f"a transport that matches fabric.switch {switch.id} ({switch.technology})")
        return switch
    if fabric.transport == "roce":
        return catalog.switch(str(package_yaml("fabric_transport.yaml")["default_roce_switch"]))
    nic = fabric.nic_bandwidth or system.scale_out_nic_bits_per_s
    return catalog.switch("quantum-x800-q3400" if nic > 400e9 else "quantum2-qm9700")


def routing(fabric: FabricIntake, switch: Switch) -> str:
    if fabric.adaptive_routing is not None:
        return "adaptive" if fabric.adaptive_routing else "ecmp"
    tech = switch.technology.lower()
    return "adaptive" if "infiniband" in tech or "spectrum-x" in tech else "ecmp"


def line_bytes_per_s(fabric: FabricIntake, system: System) -> float:
    """Per-GPU line rate, per direction: the pinned NIC speed x NICs, or the pinned node bandwidth,
    or the system's NICs; divided by the node's GPUs."""
    if fabric.nic_bandwidth is not None and fabric.node_scale_out_bandwidth is not None:
        raise InputError("fabric.nic_bandwidth", fabric.nic_bandwidth,
                         "fabric.nic_bandwidth or fabric.node_scale_out_bandwidth, not both (the same link)")
    if fabric.node_scale_out_bandwidth is not None:
        return fabric.node_scale_out_bandwidth / system.gpus_per_node
    nic = fabric.nic_bandwidth or system.scale_out_nic_bits_per_s
    return system.scale_out_nics_per_node * nic / 8.0 / system.gpus_per_node


def fabric_hardware(hw: Hardware, fabric: FabricIntake, system: System, switch: Switch,
                    gpus: int) -> tuple[Hardware, FabricEffect]:
    """The perf model's `Hardware` for `gpus` GPUs on this fabric (scale-out bandwidth per GPU)."""
    effect = scale_out_effect(fabric, system, switch, gpus)
    return dataclasses.replace(hw, scale_out_bandwidth_bytes_per_s=effect.effective_bytes_per_s), effect


def scale_out_effect(fabric: FabricIntake, system: System, switch: Switch, gpus: int) -> FabricEffect:
    """The effective per-GPU scale-out bandwidth of `gpus` GPUs of `system` on this fabric."""
    line = line_bytes_per_s(fabric, system)
    over = fabric.oversubscription or 1.0
    down = max(1, int(switch.ports * over / (over + 1.0)))
    if fabric.rail_optimized is False:
        leaf_nodes = max(1, down // max(system.scale_out_nics_per_node, 1))
    else:
        leaf_nodes = min(fabric.su_nodes or SU_NODES_8GPU, down)
    domain = leaf_nodes * system.gpus_per_node
    share = max(0.0, 1.0 - domain / gpus) if gpus > max(domain, system.gpus_per_node) else 0.0
    route = routing(fabric, switch)
    eff = float(package_yaml("fabric_transport.yaml")["cross_leaf_efficiency"][route]["value"])
    effective = line if share == 0.0 or over == eff == 1.0 else line / ((1.0 - share) + share * over / eff)
    return FabricEffect(line_bytes_per_s=line, effective_bytes_per_s=effective, leaf_domain_gpus=domain,
                        cross_leaf_share=share, oversubscription=over, cross_leaf_efficiency=eff, routing=route)
