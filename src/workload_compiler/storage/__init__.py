"""Layer 4, storage: dataset size and read bandwidth, the RA storage tier, checkpoint size,
write time and interval, capacity. `plan_storage_and_reliability` composes the layer with the
reliability numbers (job MTBF, goodput) it feeds and takes."""

from __future__ import annotations

from .checkpoint import CheckpointState, CheckpointWrite, checkpoint_state, checkpoint_write
from .dataset import DatasetDemand, bytes_per_token, sample_demand, text_demand
from .plan import StorageLayer, plan_storage_and_reliability
from .tiers import TIER_ORDER, Tier, TierBandwidth, required_tier, tier_bandwidth

__all__ = [
    "TIER_ORDER",
    "CheckpointState",
    "CheckpointWrite",
    "DatasetDemand",
    "StorageLayer",
    "Tier",
    "TierBandwidth",
    "bytes_per_token",
    "checkpoint_state",
    "checkpoint_write",
    "plan_storage_and_reliability",
    "required_tier",
    "sample_demand",
    "text_demand",
    "tier_bandwidth",
]
