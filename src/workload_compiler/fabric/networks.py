"""The fabrics beside the compute fabric: storage, in-band management, out-of-band management.

Sized at the level of detail the DGX SuperPOD reference architectures give: a switch count and
a node cable count per network, from a per-node port rule built for full scalable units:

    switches = ceil(built_nodes x ports_per_node x switch_ports_per_node_port / switch_ports)

The rule constants (catalog/data/fabric_networks.yaml) are back-solved from the DGX H100 RA 4-SU
bill of materials (16 QM9700 storage, 8 SN4600C in-band, 8 SN2201 OOB for 127 nodes), the only
published BOM; for other systems they are assumptions (GB200 and B300 converge storage and
in-band onto one Ethernet fabric, whose counts the RAs do not tabulate).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..catalog.loader import package_yaml
from ..errors import InputError
from ..quantity import info, quantity
from ._base import Traced, assume, require_int, require_positive

NETWORKS = ("storage", "in_band", "out_of_band")


class NetworkRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    switch: str
    switch_ports: int
    switch_port_bits_per_s: float
    ports_per_node: int
    link_bits_per_s: float
    switch_ports_per_node_port: float
    source: str


class Network(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = info("the network")
    switch: str = info("catalog switch id")
    switches: int = quantity("count", "switches of this network")
    node_cables: int = quantity("count", "node-to-switch cables")
    ports_per_node: int = quantity("count", "ports per node on this network")
    per_node_bytes_per_s: float = quantity("B/s", "line rate of a node's ports on this network")


class Networks(Traced):
    storage: Network
    in_band: Network
    out_of_band: Network


def default_network_rules() -> dict[str, NetworkRule]:
    """The DGX H100 RA-derived rules from catalog/data/fabric_networks.yaml."""
    data: dict[str, Any] = package_yaml("fabric_networks.yaml")["networks"]
    return {name: NetworkRule(**data[name]) for name in NETWORKS}


def size_network(nodes: int, rule: NetworkRule, su_nodes: int | None = None) -> Network:
    """Switches and node cables of one network for `nodes` nodes, built for full SUs."""
    nodes = require_int("compute.nodes", nodes)
    su = nodes if su_nodes is None else require_int("fabric.su_nodes", su_nodes)
    require_int(f"fabric.{rule.name}.switch_ports", rule.switch_ports, minimum=2)
    require_positive(f"fabric.{rule.name}.switch_ports_per_node_port", rule.switch_ports_per_node_port)
    built = math.ceil(nodes / su) * su
    switches = math.ceil(built * rule.ports_per_node * rule.switch_ports_per_node_port / rule.switch_ports)
    return Network(name=rule.name, switch=rule.switch, switches=switches,
                   node_cables=nodes * rule.ports_per_node, ports_per_node=rule.ports_per_node,
                   per_node_bytes_per_s=rule.ports_per_node * rule.link_bits_per_s / 8)


def size_networks(nodes: int, su_nodes: int | None = None,
                  rules: dict[str, NetworkRule] | None = None) -> Networks:
    """Storage, in-band and out-of-band networks; `rules` default to the DGX H100 RA rules."""
    given = rules is not None
    rules = rules if rules is not None else default_network_rules()
    missing = [n for n in NETWORKS if n not in rules]
    if missing:
        raise InputError("fabric.network_rules", sorted(rules), f"rules for {', '.join(NETWORKS)}")
    out = {name: size_network(nodes, rules[name], su_nodes) for name in NETWORKS}
    assumptions = [] if given else [
        assume(f"fabric.networks.{name}.switch_ports_per_node_port", rules[name].switch_ports_per_node_port,
               f"{rules[name].switch}: switch ports per node port, back-solved from the DGX H100 RA 4-SU BOM "
               "(Tables 7-8); other systems' RAs do not tabulate these counts")
        for name in NETWORKS]
    formula = "ceil(built_nodes x ports_per_node x switch_ports_per_node_port / switch_ports)"
    return Networks(**out, assumptions=assumptions,
                    formulas={f"fabric.networks.{name}.switches": formula for name in NETWORKS})
