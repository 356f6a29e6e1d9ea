"""Layer 4, storage, composed with the reliability numbers it feeds and takes.

Order: checkpoint size and write time (storage) -> job MTBF, checkpoint interval and goodput
(reliability, from the checkpoint stall) -> the storage layer with that interval.
Capacity = (dataset + retained checkpoints x checkpoint size) / fill fraction.
"""

from __future__ import annotations

from typing import Any

from ..catalog.loader import package_yaml
from ..errors import InputError
from ..fabric._base import Traced, assume, require_int, require_positive
from ..provenance import Assumption
from ..quantity import info, quantity
from ..reliability import ReliabilityLayer, plan_reliability
from ..spine.doc import DictView
from .checkpoint import CheckpointState, CheckpointWrite, checkpoint_state, checkpoint_write
from .dataset import DatasetDemand, bytes_per_token, sample_demand, text_demand
from .tiers import TierBandwidth, required_tier, tier_bandwidth

S = "storage."


class StorageLayer(DictView, Traced):
    """Layer 4 (training): dataset reads, checkpoint size, write time and interval, capacity."""

    dataset_bytes: float = quantity("B", "dataset size on disk", headline=True)
    read_bytes_per_s: float = quantity("B/s", "dataset read bandwidth the run demands", headline=True)
    read_bytes_per_s_per_gpu: float = quantity("B/s", "read demand per GPU")
    bytes_per_item: float = quantity("B", "bytes per token (text) or per sample")
    tier: str = info("storage tier of the reference architecture: good | better | best", headline=True)
    tier_read_bytes_per_s: float = quantity("B/s", "read bandwidth the tier delivers to this cluster")
    tier_write_bytes_per_s: float = quantity("B/s", "write bandwidth the tier delivers to this cluster")
    checkpoint_bytes: float = quantity("B", "one full checkpoint", headline=True)
    checkpoint_breakdown_bytes: dict[str, float] = quantity("B", "checkpoint by state term")
    checkpoint_shard_bytes_per_gpu: float = quantity("B", "checkpoint bytes each GPU writes")
    checkpoint_mode: str = info("sync | async")
    checkpoint_write_s: float = quantity("s", "time to write one checkpoint", headline=True)
    checkpoint_stall_s: float = quantity("s", "training time lost per checkpoint")
    checkpoint_write_bytes_per_s: float = quantity("B/s", "aggregate checkpoint write bandwidth")
    checkpoint_write_binding: str = info("what limits the checkpoint write")
    checkpoint_interval_s: float = quantity("s", "time between checkpoints", headline=True)
    gds: bool = info("GPUDirect Storage")
    retained_checkpoints: int = quantity("count", "checkpoints kept on disk")
    capacity_bytes: float = quantity("B", "storage capacity: dataset + retained checkpoints", headline=True)
    warnings: list[str] = info("what the storage plan cannot cover")


def _defaults() -> dict[str, Any]:
    defaults: dict[str, Any] = package_yaml("storage_tiers.yaml")["defaults"]
    return defaults


def _dataset(a: list[Assumption], *, gpus: int, dataset_tokens: float | None, tokens_per_s: float | None,
             vocab_size: int | None, token_bytes: float | None, dataset_samples: float | None,
             sample_bytes: float | None, samples_per_s: float | None) -> DatasetDemand:
    if dataset_tokens is not None:
        if token_bytes is None:
            size, why = bytes_per_token(vocab_size)
            a.append(why)
            token_bytes = size
        return text_demand(dataset_tokens=dataset_tokens, tokens_per_s=tokens_per_s or 0.0, gpus=gpus,
                           token_bytes=token_bytes)
    if dataset_samples is not None and sample_bytes is not None:
        return sample_demand(samples=dataset_samples, sample_bytes=sample_bytes,
                             samples_per_s=samples_per_s or 0.0, gpus=gpus)
    raise InputError("storage.dataset", None, "dataset_tokens (text) or dataset_samples with sample_bytes")


def _tier(a: list[Assumption], warnings: list[str], tier: str | None, read: float, gpus: int,
          gpn: int) -> TierBandwidth:
    if tier is not None:
        bw = tier_bandwidth(tier, gpus=gpus, gpus_per_node=gpn, read_bytes_per_s=read)
        if not bw.covers_read:
            warnings.append(f"the '{tier}' storage tier does not cover the read demand of "
                            f"{read / 1e9:.3g} GB/s")
        return bw
    found = required_tier(read, gpus=gpus, gpus_per_node=gpn)
    if found is None:
        bw = tier_bandwidth("best", gpus=gpus, gpus_per_node=gpn, read_bytes_per_s=read)
        warnings.append(f"read demand {read / 1e9:.3g} GB/s exceeds the RA's Best tier "
                        f"({bw.read_bytes_per_s / 1e9:.3g} GB/s for {gpus} GPUs): "
                        "size a custom storage system")
        a.append(assume(S + "tier", "custom (> best)", "no DGX SuperPOD RA tier covers the read demand; "
                        "checkpoint writes use the Best tier's write bandwidth"))
        return bw.model_copy(update={"tier": "custom (> best)"})
    return found


def _state(a: list[Assumption], d: dict[str, Any], **layout: Any) -> CheckpointState:
    per_param = d["checkpoint_bytes_per_param"]
    a.append(assume(S + "checkpoint_bytes_per_param",
                    per_param["weights"] + per_param["master_weights"] + per_param["optimizer_moments"],
                    "16-bit weights 2 B + fp32 master weights 4 B + Adam moments 8 B; gradients not saved "
                    f"({per_param['source']})", unit="B"))
    return checkpoint_state(weight_bytes=per_param["weights"], master_bytes=per_param["master_weights"],
                            moment_bytes=per_param["optimizer_moments"], **layout)


def _write(a: list[Assumption], d: dict[str, Any], bw: TierBandwidth, *, checkpoint_bytes: float, gpus: int,
           nodes: int, write_bytes_per_s: float | None, node_write_bytes_per_s: float | None,
           node_network_bytes_per_s: float | None, mode: str | None, gds: bool) -> CheckpointWrite:
    if mode is None:
        mode = str(d["checkpoint_mode"]["value"])
        a.append(assume(S + "checkpoint_mode", mode, str(d["checkpoint_mode"]["why"])))
    if write_bytes_per_s is None:
        write_bytes_per_s = bw.write_bytes_per_s
        a.append(assume(S + "write_bytes_per_s", write_bytes_per_s,
                        f"the '{bw.tier}' tier of DGX H100 RA Table 6, scaled per GPU", unit="B/s"))
    if node_write_bytes_per_s is None:
        node_write_bytes_per_s = bw.node_write_bytes_per_s
        a.append(assume(S + "node_write_bytes_per_s", node_write_bytes_per_s,
                        f"single-node write of the '{bw.tier}' tier (DGX H100 RA Table 6), "
                        "scaled per GPU x GPUs per node", unit="B/s"))
    host, d2h = d["host_path_bytes_per_s_per_node"], d["device_to_host_bytes_per_s_per_gpu"]
    if not gds:
        a.append(assume(S + "host_path_bytes_per_s_per_node", host["value"], str(host["why"]), unit="B/s"))
    if mode == "async":
        a.append(assume(S + "device_to_host_bytes_per_s_per_gpu", d2h["value"], str(d2h["why"]), unit="B/s"))
    return checkpoint_write(
        checkpoint_bytes=checkpoint_bytes, gpus=gpus, writer_nodes=nodes,
        aggregate_write_bytes_per_s=write_bytes_per_s, node_write_bytes_per_s=node_write_bytes_per_s,
        node_network_bytes_per_s=node_network_bytes_per_s, mode=mode, gds=gds,
        host_path_bytes_per_s_per_node=float(host["value"]),
        device_to_host_bytes_per_s_per_gpu=float(d2h["value"]))


def _retention(a: list[Assumption], d: dict[str, Any], retained: int | None,
               fill_fraction: float | None) -> tuple[int, float]:
    if retained is None:
        retained = int(d["retained_checkpoints"]["value"])
        a.append(assume(S + "retained_checkpoints", retained, str(d["retained_checkpoints"]["why"])))
    count = require_int(S + "retained_checkpoints", retained, minimum=0)
    if fill_fraction is None:
        fill_fraction = float(d["fill_fraction"]["value"])
        a.append(assume(S + "fill_fraction", fill_fraction, str(d["fill_fraction"]["why"]), unit="fraction"))
    fill = require_positive(S + "fill_fraction", fill_fraction)
    if fill > 1:
        raise InputError(S + "fill_fraction", fill_fraction, "a fraction in (0, 1]")
    return count, fill


def plan_storage_and_reliability(
    *,
    gpus: int,
    gpus_per_node: int,
    params: float,
    tp: int,
    pp: int,
    dp: int,
    cp: int = 1,
    ep: int = 1,
    etp: int = 1,
    zero: int = 1,
    expert_params: float = 0.0,
    dataset_tokens: float | None = None,
    tokens_per_s: float | None = None,
    vocab_size: int | None = None,
    token_bytes: float | None = None,
    dataset_samples: float | None = None,
    sample_bytes: float | None = None,
    samples_per_s: float | None = None,
    tier: str | None = None,
    write_bytes_per_s: float | None = None,
    node_write_bytes_per_s: float | None = None,
    node_network_bytes_per_s: float | None = None,
    checkpoint_mode: str | None = None,
    gds: bool = False,
    retained_checkpoints: int | None = None,
    fill_fraction: float | None = None,
    restart_s: float | None = None,
    failure_rate: str | None = None,
    per_gpu_day: float | None = None,
    per_node_day: float | None = None,
    checkpoint_interval_s: float | None = None,
    time_to_train_s: float | None = None,
) -> tuple[StorageLayer, ReliabilityLayer]:
    """Storage and reliability layers for one layout. `dataset_tokens` is the unique tokens on disk
    (one epoch of the training tokens unless the intake says otherwise); `write_bytes_per_s` an
    aggregate write bandwidth that replaces the tier's (e.g. a named storage system)."""
    gpus = require_int("compute.gpus", gpus)
    gpn = require_int("compute.gpus_per_node", gpus_per_node)
    nodes = -(-gpus // gpn)
    d = _defaults()
    a: list[Assumption] = []
    warnings: list[str] = []
    data = _dataset(a, gpus=gpus, dataset_tokens=dataset_tokens, tokens_per_s=tokens_per_s,
                    vocab_size=vocab_size, token_bytes=token_bytes, dataset_samples=dataset_samples,
                    sample_bytes=sample_bytes, samples_per_s=samples_per_s)
    bw = _tier(a, warnings, tier, data.read_bytes_per_s, gpus, gpn)

    state = _state(a, d, params=params, expert_params=expert_params, tp=tp, pp=pp, dp=dp, cp=cp, ep=ep,
                   etp=etp, zero=zero)
    write = _write(a, d, bw, checkpoint_bytes=state.checkpoint_bytes, gpus=gpus, nodes=nodes,
                   write_bytes_per_s=write_bytes_per_s, node_write_bytes_per_s=node_write_bytes_per_s,
                   node_network_bytes_per_s=node_network_bytes_per_s, mode=checkpoint_mode, gds=gds)
    rel = plan_reliability(gpus=gpus, nodes=nodes, checkpoint_stall_s=write.stall_s,
                           checkpoint_persist_s=write.persist_s, restart_s=restart_s,
                           failure_rate=failure_rate,
                           per_gpu_day=per_gpu_day, per_node_day=per_node_day,
                           checkpoint_interval_s=checkpoint_interval_s, time_to_train_s=time_to_train_s)

    retained, fill = _retention(a, d, retained_checkpoints, fill_fraction)
    capacity = (data.dataset_bytes + retained * state.checkpoint_bytes) / fill

    formulas = {
        S + "dataset_bytes": "dataset_tokens x bytes_per_token (text) | samples x sample_bytes",
        S + "read_bytes_per_s": "tokens_per_s x bytes_per_token | samples_per_s x sample_bytes",
        S + "checkpoint_bytes": "params x (weights 2 + master 4 + moments 8) bytes (ZeRO, arXiv 1910.02054)",
        S + "checkpoint_write_s": "checkpoint_bytes / min(aggregate write, nodes x per-node write limit)",
        S + "checkpoint_stall_s": "sync: checkpoint_write_s; async: checkpoint_bytes / gpus / device-to-host",
        S + "capacity_bytes": "(dataset_bytes + retained_checkpoints x checkpoint_bytes) / fill_fraction",
        S + "tier": "lowest DGX H100 RA Table 6 tier whose aggregate and single-node read cover the demand",
    }
    if S + "checkpoint_interval_s" in rel.formulas:
        formulas[S + "checkpoint_interval_s"] = rel.formulas[S + "checkpoint_interval_s"]
    layer = StorageLayer(
        dataset_bytes=data.dataset_bytes, read_bytes_per_s=data.read_bytes_per_s,
        read_bytes_per_s_per_gpu=data.read_bytes_per_s_per_gpu, bytes_per_item=data.bytes_per_item,
        tier=bw.tier, tier_read_bytes_per_s=bw.read_bytes_per_s, tier_write_bytes_per_s=bw.write_bytes_per_s,
        checkpoint_bytes=state.checkpoint_bytes, checkpoint_breakdown_bytes=state.breakdown_bytes,
        checkpoint_shard_bytes_per_gpu=state.shard_bytes_per_gpu, checkpoint_mode=write.mode,
        checkpoint_write_s=write.write_s, checkpoint_stall_s=write.stall_s,
        checkpoint_write_bytes_per_s=write.write_bytes_per_s, checkpoint_write_binding=write.binding,
        checkpoint_interval_s=rel.checkpoint_interval_s, gds=gds, retained_checkpoints=retained,
        capacity_bytes=capacity, warnings=warnings, assumptions=a, formulas=formulas)
    return layer, rel
