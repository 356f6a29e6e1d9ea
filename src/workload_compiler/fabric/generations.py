"""Network generations (catalog/data/fabric_generations.yaml): which compute switch, storage
switch, fabric-manager appliance, NIC and reference-architecture conventions belong together.

An InfiniBand cluster takes the generation of its nodes' scale-out NIC speed (200G HDR, 400G
NDR, 800G XDR); a pinned compute switch sets the generation instead (a Spectrum-X switch makes it
an Ethernet fabric). The fabric and facility layers read the storage switch and the fabric
manager from here, so nothing of another generation is specified beside it.
"""

from __future__ import annotations

from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from ..catalog.loader import package_yaml
from ..catalog.schema import Switch
from ..errors import InputError


class Generation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    technology: str
    link_bits_per_s: float = Field(gt=0)
    compute_switch: str
    storage_switch: str
    storage_link_bits_per_s: float = Field(gt=0)
    nic: str
    fabric_manager: str | None = Field(description="appliance id in facility_power.yaml; None for Ethernet")
    su_nodes: int = Field(gt=0, description="8-GPU nodes per scalable unit in the generation's RA")
    node_ports_per_transceiver: int = Field(gt=0)
    switch_ports_per_transceiver: int = Field(gt=0)
    transceiver: str = Field(default="osfp-2x400g-mm", description="switch-side optic id in facility_power.yaml")
    source: str
    unverified: bool = False


@cache
def generations() -> tuple[Generation, ...]:
    return tuple(Generation(**g) for g in package_yaml("fabric_generations.yaml")["generations"])


def infiniband_for_nic(nic_bits_per_s: float) -> Generation:
    """The InfiniBand generation of a NIC speed: the slowest one whose links carry it (a 100G EDR
    NIC lands on HDR, a NIC above 800G on XDR)."""
    ib = sorted((g for g in generations() if g.technology.startswith("InfiniBand")), key=lambda g: g.link_bits_per_s)
    return next((g for g in ib if g.link_bits_per_s >= nic_bits_per_s), ib[-1])


def generation(name: str | None) -> Generation | None:
    """The generation of an id or a technology name (FabricLayer.generation), None if unknown."""
    return next((g for g in generations() if name in (g.id, g.technology)), None)


def generation_of_switch(switch: Switch) -> Generation:
    """The generation a compute switch belongs to: the one that names it, else the one of its
    technology (InfiniBand by link speed, any Ethernet switch the Spectrum-X generation)."""
    for g in generations():
        if g.compute_switch == switch.id:
            return g
    tech = switch.technology.lower()
    if "infiniband" in tech:
        return infiniband_for_nic(switch.port_bits_per_s)
    if "ethernet" in tech:
        return next(g for g in generations() if g.technology.lower().startswith("ethernet"))
    raise InputError("fabric.switch", switch.id, "a switch whose technology is InfiniBand or Ethernet")


__all__ = ["Generation", "generation", "generation_of_switch", "generations", "infiniband_for_nic"]
