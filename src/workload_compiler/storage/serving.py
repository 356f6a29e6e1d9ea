"""Layer 4 for serving: the served checkpoint on disk, and how fast one replica and the whole fleet load it.

A serving fleet neither streams a dataset nor writes checkpoints: what it asks of storage is the
model checkpoint, read whenever a replica starts (scale-out, a crash, a rolling update, a fleet
restart). Per replica:

    checkpoint_bytes  = the replica's weights in the served format (inference/model.py
                        ServedModel.weight_bytes: linear layers in their format with their scales,
                        embeddings and head 16-bit); each replica reads it once, its GPUs a shard each
    node_read         = min(tier single-node read x GPUs per node / 8,  host bounce path unless
                        GPUDirect Storage)                    (DGX H100 RA Table 6; GDS blog)
    replica_load_s    = checkpoint_bytes / (nodes of one replica x node_read)
    fleet_load_s      = replicas x checkpoint_bytes / min(tier aggregate read, nodes x node_read)
                        tier aggregate read = max(SU read x GPUs / 256, single-node read)
    capacity_bytes    = retained versions x checkpoint_bytes / fill_fraction

The tier is the intake's `storage.tier`, else the RA's Good tier (an assumption: the RA sizes its
tiers for datasets, and its Best tier names offline inference). Reads from a node's local NVMe
cache (a checkpoint already loaded once) are faster and are not counted: these are the cold loads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError
from ..fabric._base import require_int, require_positive
from .tiers import TIER_ORDER, tier_bandwidth


@dataclass(frozen=True, kw_only=True)
class ServingStorage:
    """The arithmetic of the serving storage layer (formulas in the module docstring)."""

    checkpoint_bytes: float
    retained_checkpoints: int
    capacity_bytes: float
    tier: str
    node_read_bytes_per_s: float
    node_read_binding: str          # "storage tier" | "host bounce path"
    replica_load_s: float
    fleet_read_bytes_per_s: float
    fleet_load_s: float
    fleet_read_binding: str         # "storage tier" | "nodes"
    replica_load_by_tier_s: dict[str, float]


def _node_read(tier: str, gpus: int, gpus_per_node: int, gds: bool, host_path_bytes_per_s: float) -> tuple[float, str]:
    tier_read = tier_bandwidth(tier, gpus=gpus, gpus_per_node=gpus_per_node).node_read_bytes_per_s
    if not gds and host_path_bytes_per_s < tier_read:
        return host_path_bytes_per_s, "host bounce path"
    return tier_read, "storage tier"


def serving_storage(*, checkpoint_bytes: float, replicas: int, gpus_per_replica: int, gpus: int,
                    gpus_per_node: int, tier: str, gds: bool, host_path_bytes_per_s: float,
                    retained_checkpoints: int, fill_fraction: float) -> ServingStorage:
    """The checkpoint's capacity and its cold-load times for one replica and for the whole fleet."""
    if tier not in TIER_ORDER:
        raise InputError("storage.tier", tier, "one of " + ", ".join(TIER_ORDER))
    size = require_positive("storage.checkpoint_bytes", checkpoint_bytes)
    n_replicas = require_int("inference.replicas", replicas)
    per_replica = require_int("inference.gpus_per_replica", gpus_per_replica)
    n_gpus = require_int("compute.gpus", gpus)
    gpn = require_int("compute.gpus_per_node", gpus_per_node)
    kept = require_int("storage.retained_checkpoints", retained_checkpoints)   # the served one at least
    fill = require_positive("storage.fill_fraction", fill_fraction)
    if fill > 1:
        raise InputError("storage.fill_fraction", fill_fraction, "a fraction in (0, 1]")
    nodes = math.ceil(n_gpus / gpn)
    replica_nodes = math.ceil(per_replica / gpn)

    def replica_load(name: str) -> float:
        return size / (replica_nodes * _node_read(name, n_gpus, gpn, gds, host_path_bytes_per_s)[0])

    node_read, node_binding = _node_read(tier, n_gpus, gpn, gds, host_path_bytes_per_s)
    bw = tier_bandwidth(tier, gpus=n_gpus, gpus_per_node=gpn)
    # The per-GPU share of an SU's aggregate understates a small fleet: the tier's system serves one
    # node at its single-node rate (the RA measures that figure alone), so no fleet gets less.
    aggregate = max(bw.read_bytes_per_s, bw.node_read_bytes_per_s)
    fleet_bw, fleet_binding = (aggregate, "storage tier") if aggregate <= nodes * node_read \
        else (nodes * node_read, "nodes")
    return ServingStorage(
        checkpoint_bytes=size, retained_checkpoints=kept, capacity_bytes=kept * size / fill, tier=tier,
        node_read_bytes_per_s=node_read, node_read_binding=node_binding, replica_load_s=replica_load(tier),
        fleet_read_bytes_per_s=fleet_bw, fleet_load_s=n_replicas * size / fleet_bw,
        fleet_read_binding=fleet_binding, replica_load_by_tier_s={name: replica_load(name) for name in TIER_ORDER})


__all__ = ["ServingStorage", "serving_storage"]
