"""Named rules that fill what a generic intake leaves out, each fill an assumption with its why.
A number that no sourced rule can fill (a decode rate, the bytes copied to the GPU) is left None:
the pipeline stage it sets stays open (generic/pipeline.py), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..catalog.loader import Catalog, package_yaml
from ..catalog.schema import Accelerator, System
from ..errors import CatalogGap
from ..intake.generic import GenericWorkload
from ..intake.measured import cpu_key
from ..perf.fitted import FITTED
from ..provenance import Trace
from ..spine.node_choice import choose_accelerator, choose_system
from ..spine.training_defaults import DEFAULT_ACCELERATOR

DEFAULT_PRECISION = "bf16"
TRAINING_FLOPS_PER_FORWARD = 3.0   # forward + backward = 3 x forward (Kaplan et al. 2020, C = 6N vs 2N)
GRADIENT_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 2}   # fp8 training keeps bf16 gradients


@dataclass(frozen=True, kw_only=True)
class GenericResolved:
    accelerator: Accelerator
    system: System
    precision: str
    peak_flops: float
    flops_per_sample: float
    gpu_efficiency: float | None
    gpu_samples_per_s: float | None     # per GPU, compute only
    cores_per_gpu: float | None
    decode_rate_per_core: float | None
    device_bytes_per_sample: float | None
    batch_size_per_gpu: int
    h2d_efficiency: float
    backward_share: float
    training: bool
    host_cpu: str | None = None         # the nodes' host CPU model: given, else the catalog's


def pipeline_data() -> dict[str, Any]:
    data: dict[str, Any] = package_yaml("engagement.yaml")["pipeline"]
    return data


def _hardware(w: GenericWorkload, catalog: Catalog, trace: Trace) -> tuple[Accelerator, System]:
    acc = choose_accelerator(w.compute, catalog, trace, DEFAULT_ACCELERATOR,
                             "no accelerator given: H100 SXM, the most used in published runs")
    return acc, choose_system(w.compute, acc, catalog, trace)


def _to_measure(w: GenericWorkload) -> set[str]:
    """Keys the sheet marks to_measure: their stage stays open, no rule fills them."""
    return {k for k, f in w.sheet.fields.items() if f.status == "to_measure"}


def _gpu_rate(w: GenericWorkload, acc: Accelerator, peak: float, flops: float,
              trace: Trace) -> tuple[float | None, float | None]:
    p = w.pipeline
    if {"pipeline.gpu_samples_per_s", "pipeline.gpu_efficiency"} & _to_measure(w) and p.gpu_samples_per_s is None \
            and p.gpu_efficiency is None:
        return None, None
    if p.gpu_samples_per_s is not None:
        trace.given("compute.gpu_samples_per_s_per_gpu", p.gpu_samples_per_s)
        return p.gpu_efficiency, p.gpu_samples_per_s
    if p.gpu_efficiency is not None:
        eff = trace.given("compute.gpu_efficiency", p.gpu_efficiency)
    else:
        why = str(pipeline_data()["gpu_efficiency_ceiling"]["why"])
        eff = trace.assumed("compute.gpu_efficiency", FITTED.gemm_e_max, why)
    rate = eff * peak / flops
    trace.derived("compute.gpu_samples_per_s_per_gpu", rate, "gpu_efficiency x peak FLOP/s / FLOPs per sample")
    return eff, rate


def resolve_generic(w: GenericWorkload, catalog: Catalog, trace: Trace) -> GenericResolved:
    acc, system = _hardware(w, catalog, trace)
    d = pipeline_data()
    training = w.model.mode == "training"
    p = w.pipeline
    if p.precision is not None:
        precision = trace.given("compute.precision", p.precision)
    else:
        precision = trace.assumed("compute.precision", DEFAULT_PRECISION, "mixed-precision bf16, the default of "
                                  "PyTorch autocast on current accelerators")
    peak = getattr(acc.peak_flops, precision)
    if peak is None:
        raise CatalogGap([f"accelerators.{acc.id}.peak_flops.{precision}"], "the GPU compute stage (the compute layer)",
                         field="pipeline.precision", value=precision,
                         hint="not published for this accelerator; nothing is extrapolated from another precision: "
                              "choose another precision or accelerator, or add it in a user catalog directory")
    if w.model.flops_per_sample is not None:
        flops = trace.given("objective.flops_per_sample", w.model.flops_per_sample)
    else:
        assert w.model.forward_flops_per_sample is not None   # the intake requires one of the two
        mult = TRAINING_FLOPS_PER_FORWARD if training else 1.0
        flops = trace.derived("objective.flops_per_sample", w.model.forward_flops_per_sample * mult,
                              "3 x forward FLOPs (backward = 2 x forward)" if training else "forward FLOPs")
    eff, gpu_rate = _gpu_rate(w, acc, peak, flops, trace)
    host = _host_cpu(w, system, trace)
    # Another host CPU than the catalog's: the catalog's core count is not this host's.
    other_host = w.compute.host_cpu is not None and cpu_key(w.compute.host_cpu) != cpu_key(system.cpu)
    cores = p.cpu_cores_per_gpu
    if cores is not None:
        trace.given("compute.cpu_cores_per_gpu", cores)
    elif system.cpu_cores_per_node and "pipeline.cpu_cores_per_gpu" not in _to_measure(w) and not other_host:
        cores = trace.assumed("compute.cpu_cores_per_gpu", system.cpu_cores_per_node / system.gpus_per_node,
                              f"{system.cpu_cores_per_node} cores / {system.gpus_per_node} GPUs of {system.id}: "
                              + str(d["all_host_cores"]["why"]))
    if p.decode_rate_per_core is not None:
        trace.given("compute.decode_rate_per_core", p.decode_rate_per_core)
    if p.batch_size_per_gpu is not None:
        batch = trace.given("compute.batch_size_per_gpu", p.batch_size_per_gpu)
    else:
        batch = trace.assumed("compute.batch_size_per_gpu", int(d["batch_size_per_gpu"]["value"]),
                              str(d["batch_size_per_gpu"]["why"]))
    h2d = d["host_to_device_efficiency"]
    trace.assumed("pipeline.host_to_device_efficiency", h2d["value"], f"{h2d['why']} ({h2d['source']})",
                  unit="fraction")
    return GenericResolved(
        accelerator=acc, system=system, precision=precision, peak_flops=peak, flops_per_sample=flops,
        gpu_efficiency=eff, gpu_samples_per_s=gpu_rate, cores_per_gpu=cores,
        decode_rate_per_core=p.decode_rate_per_core, device_bytes_per_sample=p.device_bytes_per_sample,
        batch_size_per_gpu=int(batch), h2d_efficiency=float(h2d["value"]),
        backward_share=float(d["backward_share"]["value"]), training=training, host_cpu=host)


def _host_cpu(w: GenericWorkload, system: System, trace: Trace) -> str | None:
    if w.compute.host_cpu is not None:
        return str(trace.given("compute.host_cpu", w.compute.host_cpu))
    if not system.cpu:
        return None
    return str(trace.derived("compute.host_cpu", system.cpu, f"the CPU of {system.id} in the catalog (systems.yaml)"))


__all__ = ["GRADIENT_BYTES", "GenericResolved", "pipeline_data", "resolve_generic"]
