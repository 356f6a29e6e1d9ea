"""Checkpoint size from the training state layout, per-GPU shards, and the write time.

Size (ZeRO, arXiv 1910.02054; mixed-precision Adam): 16-bit weights 2 B + fp32 master weights
4 B + Adam moments 8 B per parameter = 14 B; fp32/16-bit gradients are not saved.

Per-GPU resident shard: dense parameters are split over TP x PP, expert parameters over
EP x ETP x PP; the optimizer state (master + moments) is split further over the data-parallel
ranks with ZeRO >= 1 (DP x CP for dense, the expert-DP size tp·cp·dp/(ep·etp) for experts), the
weights too with ZeRO-3.

Write time (reference/infrastructure.md §4.2):
    write_s = bytes / min(aggregate write bandwidth, writer_nodes x per-node write limit)
with writes spread over every node (fully parallel save: Megatron-Core dist_checkpointing /
torch.distributed.checkpoint split even replicated tensors over the DP ranks). The per-node
limit is the lowest of the storage tier's per-node write, the node's storage-network line rate,
and, without GPUDirect Storage, the host-memory bounce path (GDS removes it, §4.4).
Synchronous: training stalls for write_s. Asynchronous (two-phase, MegaScale / ByteCheckpoint):
the stall is the device->host copy of each GPU's share, the write persists in the background.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from ..fabric._base import require_choice, require_int, require_layout, require_positive

Mode = Literal["sync", "async"]


class CheckpointState(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    checkpoint_bytes: float
    breakdown_bytes: dict[str, float]      # weights, master_weights, optimizer_moments
    shard_bytes_per_gpu: float             # the largest state one GPU holds (resident)
    write_bytes_per_gpu: float             # each GPU's share in a fully parallel save


class CheckpointWrite(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: str
    write_s: float                 # time to make the checkpoint durable
    stall_s: float                 # time training stops
    persist_s: float               # background write after the stall (async), else 0
    write_bytes_per_s: float       # the bandwidth the write got
    binding: str                   # what limits it
    gds: bool


def checkpoint_state(
    *,
    params: float,
    expert_params: float = 0.0,
    tp: int = 1,
    pp: int = 1,
    dp: int = 1,
    cp: int = 1,
    ep: int = 1,
    etp: int = 1,
    zero: int = 1,
    weight_bytes: float = 2.0,
    master_bytes: float = 4.0,
    moment_bytes: float = 8.0,
    save_optimizer: bool = True,
) -> CheckpointState:
    """Checkpoint bytes = params x (weight + master + moments) and the per-GPU shard sizes."""
    total = require_positive("model.params", params)
    experts = require_positive("model.expert_params", expert_params, allow_zero=True)
    if experts > total:
        raise InputError("model.expert_params", expert_params, f"at most the total parameters ({total:g})")
    tp, pp, dp, cp, ep, etp = require_layout(tp, pp, dp, cp, ep, etp)
    zero = require_int("compute.parallelism.zero_stage", zero, minimum=0)
    if zero > 3:
        raise InputError("compute.parallelism.zero_stage", zero, "0, 1, 2 or 3")
    w = require_positive("storage.checkpoint_weight_bytes", weight_bytes)
    opt = (require_positive("storage.checkpoint_master_bytes", master_bytes, allow_zero=True)
           + require_positive("storage.checkpoint_moment_bytes", moment_bytes, allow_zero=True))
    dense = total - experts
    breakdown = {"weights": total * w,
                 "master_weights": total * master_bytes if save_optimizer else 0.0,
                 "optimizer_moments": total * moment_bytes if save_optimizer else 0.0}
    size = sum(breakdown.values())
    dense_gpu, expert_gpu = dense / (tp * pp), experts / (ep * etp * pp)
    dense_dp, expert_dp = dp * cp, tp * cp * dp // (ep * etp)
    weights_gpu = w * (dense_gpu / (dense_dp if zero >= 3 else 1)
                       + expert_gpu / (expert_dp if zero >= 3 else 1))
    opt_gpu = opt * (dense_gpu / (dense_dp if zero >= 1 else 1)
                     + expert_gpu / (expert_dp if zero >= 1 else 1))
    gpus = tp * pp * dp * cp
    return CheckpointState(checkpoint_bytes=size, breakdown_bytes=breakdown,
                           shard_bytes_per_gpu=weights_gpu + (opt_gpu if save_optimizer else 0.0),
                           write_bytes_per_gpu=size / gpus)


def checkpoint_write(
    *,
    checkpoint_bytes: float,
    gpus: int,
    writer_nodes: int,
    aggregate_write_bytes_per_s: float,
    node_write_bytes_per_s: float,
    node_network_bytes_per_s: float | None = None,
    host_path_bytes_per_s_per_node: float,
    device_to_host_bytes_per_s_per_gpu: float,
    mode: str = "sync",
    gds: bool = False,
) -> CheckpointWrite:
    """write_s = bytes / min(aggregate, writers x per-node limit); stall by mode (see module doc).

    The host bounce-path and device->host rates have no default here: their sourced values live in
    catalog/data/storage_tiers.yaml `defaults` (plan.py passes them and records the assumptions)."""
    size = require_positive("storage.checkpoint_bytes", checkpoint_bytes)
    gpus = require_int("compute.gpus", gpus)
    writers = require_int("storage.writer_nodes", writer_nodes)
    mode = require_choice("storage.checkpoint_mode", mode, ("sync", "async"))
    limits = {"storage aggregate write": require_positive("storage.write_bytes_per_s",
                                                          aggregate_write_bytes_per_s),
              "per-node storage write": writers * require_positive("storage.node_write_bytes_per_s",
                                                                   node_write_bytes_per_s)}
    if node_network_bytes_per_s is not None:
        limits["per-node storage network"] = writers * require_positive(
            "fabric.networks.storage.per_node_bytes_per_s", node_network_bytes_per_s)
    if not gds:
        limits["host-memory bounce path (no GDS)"] = writers * require_positive(
            "storage.host_path_bytes_per_s_per_node", host_path_bytes_per_s_per_node)
    binding = min(limits, key=lambda k: limits[k])
    bandwidth = limits[binding]
    write_s = size / bandwidth
    if mode == "sync":
        stall, persist = write_s, 0.0
    else:
        d2h = require_positive("storage.device_to_host_bytes_per_s_per_gpu",
                               device_to_host_bytes_per_s_per_gpu)
        stall = size / gpus / d2h
        persist = write_s
    return CheckpointWrite(mode=mode, write_s=write_s, stall_s=stall, persist_s=persist,
                           write_bytes_per_s=bandwidth, binding=binding, gds=gds)
