"""The starter article's data path, stage by stage, and the stage that binds.

    storage read   R_read  = min(tier aggregate read, nodes x tier per-node read) / sample bytes
    CPU decode     R_cpu   = gpus x cores per GPU x samples per core per second
    host -> device R_h2d   = gpus x PCIe bytes/s x copy efficiency / device bytes per sample
    GPU compute    R_gpu   = gpus x batch / (t_compute + t_exposed_allreduce) per step, with
                   t_compute = batch x FLOPs per sample / (peak x efficiency) (or the measured
                   samples/s per GPU) and the gradient all-reduce overlapped with the backward
                   pass (PyTorch DDP): exposed = max(0, t_allreduce - backward share x t_compute)
    output write   R_out   = tier aggregate write / output bytes per sample

The pipeline runs at the slowest rate; checkpoint writes and failures then take their share of
the wall time (goodput, reliability.py). A stage whose number is not known stays open: its rate
is None, and the binding stage cannot be named until it is measured — the threshold it must reach
is reported instead ("the loader needs 5,800 samples/s to keep the GPUs busy").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import Field

from ..quantity import quantity
from ..spine.doc import Doc

INPUT_STAGES = ("storage_read", "cpu_decode", "host_to_device")
STAGE_LABELS = {"storage_read": "storage read", "cpu_decode": "CPU decode and preparation",
                "host_to_device": "host-to-device copy", "gpu_compute": "GPU compute",
                "output_write": "output write"}


class Stage(Doc):
    """One stage of the data path."""

    name: str
    label: str
    samples_per_s: float | None = quantity("items/s", "what the stage sustains for the whole job; None = open")
    samples_per_s_per_gpu: float | None = quantity("items/s", "the same per GPU")
    formula: str
    open_reason: str | None = Field(default=None, description="why the rate is open (a number to measure)")
    needed_to_keep_up: str | None = Field(default=None, description="what the stage needs not to bind")


class PipelineSection(Doc):
    """The generic archetype's data path: stages, the binding one, what would unbind it."""

    stages: list[Stage]
    binding_stage: str | None = Field(description="the slowest stage; None while an input stage is open")
    verdict: str = Field(description="e.g. 'the loader feeds 2,100 samples/s, the GPUs consume 5,800: input-bound'")
    input_bound: bool | None = None
    unbind: list[str] = Field(default_factory=list, description="what would lift the binding stage, with numbers")
    pipeline_samples_per_s: float | None = quantity("items/s", "the rate of the slowest known stage")
    effective_samples_per_s: float | None = quantity("items/s", "pipeline rate x goodput (checkpoints, failures)")
    total_samples: float = quantity("count", "samples x epochs")
    time_to_result_s: float | None = quantity("s", "total samples / effective rate")
    time_to_result_is_lower_bound: bool = Field(
        default=False, description="an input stage is open: the time holds only if it keeps up")
    step_time_s: float | None = quantity("s", "one optimizer step on the GPUs (training)")
    allreduce_s: float | None = quantity("s", "gradient all-reduce per step")
    exposed_allreduce_s: float | None = quantity("s", "the part of it the backward pass does not hide")


@dataclass(frozen=True, kw_only=True)
class PipelineInputs:
    """Plain numbers; None where the sheet leaves them open."""

    gpus: int
    gpus_per_node: int
    sample_bytes: float
    device_bytes_per_sample: float | None
    output_bytes_per_sample: float | None
    cores_per_gpu: float | None
    decode_rate_per_core: float | None
    pcie_bytes_per_s: float | None
    h2d_efficiency: float
    gpu_samples_per_s: float | None       # per GPU, compute only (measured, or from FLOPs)
    batch_size_per_gpu: int
    allreduce_s: float                    # per step
    backward_share: float
    training: bool
    storage_read_bytes_per_s: float | None
    storage_node_read_bytes_per_s: float | None
    storage_write_bytes_per_s: float | None


def _stage(name: str, rate: float | None, gpus: int, formula: str, open_reason: str | None = None) -> Stage:
    per_gpu = None if rate is None else rate / gpus
    return Stage(name=name, label=STAGE_LABELS[name], samples_per_s=rate, samples_per_s_per_gpu=per_gpu,
                 formula=formula, open_reason=open_reason if rate is None else None)


def gpu_step(p: PipelineInputs) -> tuple[float | None, float | None, float | None]:
    """(step time, exposed all-reduce, job samples/s) of the GPU stage; None when compute is open."""
    if p.gpu_samples_per_s is None:
        return None, None, None
    compute = p.batch_size_per_gpu / p.gpu_samples_per_s
    exposed = max(0.0, p.allreduce_s - p.backward_share * compute) if p.training and p.gpus > 1 else 0.0
    step = compute + exposed
    return step, exposed, p.gpus * p.batch_size_per_gpu / step


def stages(p: PipelineInputs) -> list[Stage]:
    nodes = math.ceil(p.gpus / p.gpus_per_node)
    out: list[Stage] = []
    read = None
    if p.storage_read_bytes_per_s is not None:
        limit = p.storage_read_bytes_per_s
        if p.storage_node_read_bytes_per_s is not None:
            limit = min(limit, nodes * p.storage_node_read_bytes_per_s)
        read = limit / p.sample_bytes
    out.append(_stage("storage_read", read, p.gpus, "min(tier read, nodes x per-node read) / sample bytes",
                      "the storage read bandwidth is not known"))
    decode = None if p.cores_per_gpu is None or p.decode_rate_per_core is None else (
        p.gpus * p.cores_per_gpu * p.decode_rate_per_core)
    missing = "pipeline.decode_rate_per_core" if p.decode_rate_per_core is None else "pipeline.cpu_cores_per_gpu"
    out.append(_stage("cpu_decode", decode, p.gpus, "gpus x cores per GPU x samples per core per s",
                      f"{missing} is open: measure it on the host CPU of the node being sized"))
    h2d = None
    reason = None
    if p.device_bytes_per_sample is None:
        reason = "pipeline.device_bytes_per_sample is open (bytes copied to the GPU per sample)"
    elif p.pcie_bytes_per_s is None:
        reason = "the accelerator's host link bandwidth is not in the catalog"
    else:
        h2d = p.gpus * p.pcie_bytes_per_s * p.h2d_efficiency / p.device_bytes_per_sample
    out.append(_stage("host_to_device", h2d, p.gpus, "gpus x PCIe bytes/s x copy efficiency / device bytes per sample",
                      reason))
    _, _, gpu = gpu_step(p)
    out.append(_stage("gpu_compute", gpu, p.gpus, "gpus x batch / (batch / samples per GPU per s + exposed all-reduce)",
                      "the GPU rate is open"))
    if p.output_bytes_per_sample:
        write = None if p.storage_write_bytes_per_s is None else p.storage_write_bytes_per_s / p.output_bytes_per_sample
        out.append(_stage("output_write", write, p.gpus, "tier write / output bytes per sample",
                          "the storage write bandwidth is not known"))
    return out


def _fmt(rate: float) -> str:
    return f"{rate:,.0f}" if rate >= 100 else f"{rate:,.3g}"


def verdict(all_stages: list[Stage]) -> tuple[str | None, str, bool | None]:
    """(binding stage, sentence, input-bound?) — open while any input stage is open."""
    gpu = next(s for s in all_stages if s.name == "gpu_compute")
    inputs = [s for s in all_stages if s.name in INPUT_STAGES]
    known = [s for s in all_stages if s.samples_per_s is not None]
    open_inputs = [s for s in inputs if s.samples_per_s is None]
    if gpu.samples_per_s is None:
        return None, "the GPU rate is open: give gpu_efficiency or a measured gpu_samples_per_s", None
    if open_inputs:
        names = ", ".join(s.label for s in open_inputs)
        return None, (f"the GPUs consume {_fmt(gpu.samples_per_s)} samples/s; whether the input keeps up is "
                      f"open until {names} is measured"), None
    slowest = min(known, key=lambda s: s.samples_per_s or math.inf)
    feed = min(s.samples_per_s or math.inf for s in inputs)
    if slowest.name == "gpu_compute":
        return slowest.name, (f"the loader feeds {_fmt(feed)} samples/s, the GPUs consume "
                              f"{_fmt(gpu.samples_per_s)}: compute-bound"), False
    bound = "input-bound" if slowest.name in INPUT_STAGES else "output-bound"
    return slowest.name, (f"the {slowest.label} feeds {_fmt(slowest.samples_per_s or 0.0)} samples/s, the GPUs "
                          f"consume {_fmt(gpu.samples_per_s)}: {bound}"), slowest.name in INPUT_STAGES


def unbind(binding: str | None, all_stages: list[Stage], p: PipelineInputs) -> list[str]:
    """What would lift the binding stage to the GPUs' rate, with the numbers it takes."""
    by = {s.name: s for s in all_stages}
    gpu = by["gpu_compute"].samples_per_s
    if binding is None or gpu is None:
        return []
    if binding == "gpu_compute":
        return ["compute-bound: more GPUs, a faster accelerator or a higher GPU efficiency shorten it; "
                "the input side has headroom"]
    need_per_gpu = gpu / p.gpus
    if binding == "cpu_decode" and p.decode_rate_per_core:
        cores = need_per_gpu / p.decode_rate_per_core
        return [f"{cores:.1f} decode cores per GPU instead of {p.cores_per_gpu:g} (a host with more cores per GPU)",
                "decode on the GPU (NVIDIA DALI / nvJPEG) so the CPU only reads",
                "store the samples pre-decoded or pre-resized, so each one costs the CPU less"]
    if binding == "host_to_device" and p.pcie_bytes_per_s:
        limit = p.pcie_bytes_per_s * p.h2d_efficiency / need_per_gpu
        return [f"at most {limit:,.0f} bytes per sample over the host link (now {p.device_bytes_per_sample:,.0f}): "
                "copy uint8 and normalize on the GPU", "pinned memory and non-blocking copies overlap the transfer"]
    if binding == "storage_read":
        need = gpu * p.sample_bytes
        return [f"{need / 1e9:,.3g} GB/s of aggregate storage read (a higher tier, or a node-local cache "
                "of the dataset)", "GPUDirect Storage removes the host bounce from the read path"]
    if binding == "output_write" and p.output_bytes_per_sample:
        return [f"{gpu * p.output_bytes_per_sample / 1e9:,.3g} GB/s of aggregate storage write, or fewer "
                "output bytes per sample"]
    return []


__all__ = ["INPUT_STAGES", "PipelineInputs", "PipelineSection", "Stage", "gpu_step", "stages", "unbind", "verdict"]
