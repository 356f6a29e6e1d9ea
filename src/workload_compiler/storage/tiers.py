"""Storage performance tiers of the DGX SuperPOD reference architecture (DGX H100 RA Table 6),
scaled per GPU, and the choice of the tier a workload needs.

Table 6 gives single-node (8-GPU DGX H100) and per-SU (32 nodes, 256 GPUs) read and write
bandwidth for Good / Better / Best. For a cluster of any node size the tool scales per GPU:
aggregate(g GPUs) = SU value x g / 256; per node = node value x gpus_per_node / 8. A workload
needs the lowest tier whose aggregate and single-node read both cover its read rate.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ..catalog.loader import package_yaml
from ..errors import InputError
from ..fabric._base import require_int, require_positive

TIER_ORDER = ("good", "better", "best")


class Tier(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    single_node_read_bytes_per_s: float
    single_node_write_bytes_per_s: float
    su_read_bytes_per_s: float
    su_write_bytes_per_s: float
    four_su_read_bytes_per_s: float
    four_su_write_bytes_per_s: float
    workloads: str
    source: str


class TierBandwidth(BaseModel):
    """A tier's bandwidth for one cluster."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tier: str
    read_bytes_per_s: float            # aggregate
    write_bytes_per_s: float
    node_read_bytes_per_s: float       # one node
    node_write_bytes_per_s: float
    covers_read: bool


def table() -> tuple[dict[str, Tier], int, int]:
    """(tiers, GPUs per table node, GPUs per table SU) from catalog/data/storage_tiers.yaml."""
    data: dict[str, Any] = package_yaml("storage_tiers.yaml")
    tiers = {name: Tier(name=name, **data["tiers"][name]) for name in TIER_ORDER}
    return tiers, int(data["table_node_gpus"]), int(data["table_su_gpus"])


def tier_bandwidth(tier: str, *, gpus: int, gpus_per_node: int,
                   read_bytes_per_s: float = 0.0) -> TierBandwidth:
    """Aggregate and per-node bandwidth of `tier` for `gpus` GPUs in nodes of `gpus_per_node`."""
    tiers, node_gpus, su_gpus = table()
    if tier not in tiers:
        raise InputError("storage.tier", tier, "one of " + ", ".join(TIER_ORDER))
    gpus = require_int("compute.gpus", gpus)
    gpn = require_int("compute.gpus_per_node", gpus_per_node)
    need = require_positive("storage.read_bytes_per_s", read_bytes_per_s, allow_zero=True)
    t = tiers[tier]
    nodes = -(-gpus // gpn)
    agg_read = t.su_read_bytes_per_s * gpus / su_gpus
    node_read = t.single_node_read_bytes_per_s * gpn / node_gpus
    return TierBandwidth(
        tier=tier, read_bytes_per_s=agg_read, write_bytes_per_s=t.su_write_bytes_per_s * gpus / su_gpus,
        node_read_bytes_per_s=node_read,
        node_write_bytes_per_s=t.single_node_write_bytes_per_s * gpn / node_gpus,
        covers_read=need <= agg_read and need / nodes <= node_read)


def required_tier(read_bytes_per_s: float, *, gpus: int, gpus_per_node: int) -> TierBandwidth | None:
    """The lowest tier that covers the read rate, or None when even 'best' does not."""
    for name in TIER_ORDER:
        bw = tier_bandwidth(name, gpus=gpus, gpus_per_node=gpus_per_node, read_bytes_per_s=read_bytes_per_s)
        if bw.covers_read:
            return bw
    return None
