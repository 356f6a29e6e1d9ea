"""Layer 3, the fabric: scale-up domain, scale-out fat tree, parallelism placement, and the
storage / in-band / out-of-band networks.

`plan_fabric` composes the pure pieces into the layer the compiled document holds under
`fabric` (keys: scale_up_domain, scale_out, per_gpu_scale_out_bytes_per_s, violations, ...).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ..catalog.schema import Switch, System
from ..errors import InfeasibleError, InputError
from ..intake import limits
from ..quantity import info, quantity
from ..spine.doc import DictView
from ._base import Traced
from .fat_tree import Cables, ScaleOutFabric, Transceivers, size_scale_out
from .mapping import Placement, Violation, map_parallelism
from .networks import Network, NetworkRule, Networks, default_network_rules, size_network, size_networks

__all__ = [
    "Cables",
    "FabricLayer",
    "Network",
    "NetworkRule",
    "Networks",
    "Placement",
    "PlacementSummary",
    "ScaleOutFabric",
    "ScaleUpDomain",
    "Transceivers",
    "Violation",
    "default_network_rules",
    "map_parallelism",
    "plan_fabric",
    "plan_fabric_for_system",
    "size_network",
    "size_networks",
    "size_scale_out",
    "switch_technology",
]


class ScaleUpDomain(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    gpus: int = quantity("count", "GPUs per scale-up (NVLink) domain", headline=True)
    nodes: int = quantity("count", "nodes (trays) per domain")
    bytes_per_s_per_gpu: float | None = quantity("B/s", "scale-up bandwidth per GPU, per direction (catalog)",
                                                 default=None, headline=True)


class PlacementSummary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    order: list[str] = info("parallel dimensions, innermost first")
    tiers: dict[str, str] = info("where each split's groups communicate")
    description: str = info("the placement in words", headline=True)


class FabricLayer(DictView, Traced):
    """Layer 3: the scale-up domain, the scale-out fat tree, where each parallel split communicates,
    and the storage / in-band / out-of-band networks."""

    scale_up_domain: ScaleUpDomain
    scale_out: ScaleOutFabric
    per_gpu_scale_out_bytes_per_s: float = quantity("B/s", "scale-out bandwidth per GPU, per direction",
                                                    headline=True)
    placement: PlacementSummary
    violations: list[Violation] = info("placement rules the layout breaks")
    networks: Networks
    generation: str | None = info("network generation: InfiniBand HDR | NDR | XDR, Ethernet (Spectrum-X)",
                                  default=None, headline=True)
    nic: str | None = info("the nodes' scale-out NIC (catalog id)", default=None)
    fabric_manager: str | None = info("fabric-manager appliance (UFM) of the generation; none for Ethernet",
                                      default=None)


def plan_fabric(
    *,
    gpus: int,
    gpus_per_node: int,
    scale_up_domain_gpus: int,
    nics_per_node: int,
    nic_bits_per_s: float,
    switch_radix: int,
    switch_port_bits_per_s: float,
    tp: int,
    pp: int,
    dp: int,
    cp: int = 1,
    ep: int = 1,
    etp: int = 1,
    technology: str = "infiniband",
    su_nodes: int | None = None,
    oversubscription: float = 1.0,
    rail_optimized: bool = True,
    management_ports: int = 0,
    node_ports_per_transceiver: int = 1,
    scale_up_bytes_per_s_per_gpu: float | None = None,
    ep_rdma_bytes_per_step: float | None = None,
    network_rules: dict[str, NetworkRule] | None = None,
    switch_ports_per_transceiver: int = 2,
) -> FabricLayer:
    """The fabric layer for one layout on one system (every argument a plain catalog/intake value).
    A cluster beyond the intake's GPU bound (a load a layout would need 10^8 GPUs for) is an
    answer, infeasible, not a fabric: its rank map alone would not fit in memory."""
    if gpus > limits.MAX_GPUS:
        raise InfeasibleError("gpu count", f"the fabric would connect {gpus:,} GPUs, more than the "
                                           f"{limits.MAX_GPUS:,} any cluster can be sized for ({limits.GPUS})")
    if tp * pp * dp * cp != gpus:
        raise InputError("compute.parallelism", {"tp": tp, "pp": pp, "dp": dp, "cp": cp},
                         f"tp x pp x dp x cp must equal the GPU count ({gpus})")
    scale_out = size_scale_out(
        gpus=gpus, gpus_per_node=gpus_per_node, nics_per_node=nics_per_node, nic_bits_per_s=nic_bits_per_s,
        switch_radix=switch_radix, switch_port_bits_per_s=switch_port_bits_per_s, technology=technology,
        oversubscription=oversubscription, su_nodes=su_nodes, rail_optimized=rail_optimized,
        management_ports=management_ports, node_ports_per_transceiver=node_ports_per_transceiver,
        switch_ports_per_transceiver=switch_ports_per_transceiver)
    placement = map_parallelism(
        tp=tp, pp=pp, dp=dp, cp=cp, ep=ep, etp=etp, gpus_per_node=gpus_per_node,
        scale_up_domain_gpus=scale_up_domain_gpus, ep_rdma_bytes_per_step=ep_rdma_bytes_per_step,
        per_gpu_scale_out_bytes_per_s=scale_out.per_gpu_scale_out_bytes_per_s)
    networks = size_networks(scale_out.nodes, su_nodes, network_rules)
    domain = ScaleUpDomain(gpus=scale_up_domain_gpus, nodes=max(1, scale_up_domain_gpus // gpus_per_node),
                           bytes_per_s_per_gpu=scale_up_bytes_per_s_per_gpu)
    formulas = {**scale_out.formulas, **placement.formulas, **networks.formulas}
    return FabricLayer(
        scale_up_domain=domain, scale_out=scale_out,
        per_gpu_scale_out_bytes_per_s=scale_out.per_gpu_scale_out_bytes_per_s,
        placement=PlacementSummary(order=placement.order, tiers=dict(placement.tiers),
                                   description=placement.description),
        violations=placement.violations, networks=networks,
        assumptions=[*scale_out.assumptions, *placement.assumptions, *networks.assumptions],
        formulas=formulas)


def switch_technology(switch: Switch) -> str:
    """The fat-tree technology key of a catalog switch ('InfiniBand NDR' -> 'infiniband')."""
    text = switch.technology.lower()
    if "infiniband" in text:
        return "infiniband"
    if "spectrum-x" in text:
        return "spectrum-x"
    if "ethernet" in text:
        return "ethernet"
    raise InputError("fabric.switch", switch.id, "a switch whose technology is InfiniBand or Ethernet")


def plan_fabric_for_system(system: System, switch: Switch, *, gpus: int, tp: int, pp: int, dp: int,
                           **options: Any) -> FabricLayer:
    """`plan_fabric` with the node and switch values taken from catalog entries; `options` are the
    remaining keyword arguments of `plan_fabric` (cp, ep, etp, su_nodes, oversubscription, ...)."""
    return plan_fabric(
        gpus=gpus, gpus_per_node=system.gpus_per_node, scale_up_domain_gpus=system.scale_up_domain_gpus,
        nics_per_node=system.scale_out_nics_per_node,
        nic_bits_per_s=options.pop("nic_bits_per_s", system.scale_out_nic_bits_per_s),
        switch_radix=switch.ports, switch_port_bits_per_s=switch.port_bits_per_s,
        technology=options.pop("technology", switch_technology(switch)), tp=tp, pp=pp, dp=dp,
        scale_up_bytes_per_s_per_gpu=options.pop("scale_up_bytes_per_s_per_gpu",
                                                 system.scale_up_bandwidth_bytes_per_s),
        **options)
