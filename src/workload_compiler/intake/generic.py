"""The generic intake (`kind: generic`): work that is not a transformer — a data pipeline with a
model whose FLOPs per sample and bytes per sample are given (the starter article's small image
classifier, an offline scoring job).

    kind: generic
    name: Small image classifier
    model: {name: resnet-50-like, forward_flops_per_sample: 8.2G, params: 25.6M}
    data: {samples: 1.28M, sample_size: 110KB, epochs: 90}
    pipeline:
      cpu_cores_per_gpu: 8              # host cores that decode and prepare for each GPU
      decode_rate_per_core: 250/s       # samples one core decodes and prepares per second
      device_bytes_per_sample: 150528   # bytes copied host -> device per sample (224x224x3 uint8)
      gpu_efficiency: 0.35              # fraction of the dense peak the model sustains
      batch_size_per_gpu: 256
    target: {time_to_result: 12h}
    compute: {accelerator: h100-sxm, gpus: 8}

It follows the article's data path: storage read -> CPU decode and preparation -> host-to-device
copy -> GPU compute -> checkpoint (and output) writes; generic/pipeline.py names the stage that
binds. A number left out that no sourced rule can fill stays open: the sizing says so instead of
guessing.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ..units import Bytes, Count, PerSecond, Seconds
from . import limits as L
from .common import ClusterCompute, Strict
from .infrastructure import InfrastructureIntake
from .limits import limited

GenericPrecision = Literal["fp32", "tf32", "bf16", "fp16", "fp8"]


class GenericModel(Strict):
    name: str | None = None
    mode: Literal["training", "inference"] = Field(
        default="training", description="training: forward + backward and checkpoints; inference: forward only")
    flops_per_sample: Count | None = limited(
        None, gt=0, le=L.MAX_FLOPS_SAMPLE, why=L.FLOPS_SAMPLE,
        description="FLOPs the GPU spends on one sample (training: forward + backward)")
    forward_flops_per_sample: Count | None = limited(
        None, gt=0, le=L.MAX_FLOPS_SAMPLE, why=L.FLOPS_SAMPLE,
        description="forward FLOPs; training counts 3x (backward = 2x forward)")
    params: Count | None = limited(None, gt=0, le=L.MAX_PARAMS, why=L.PARAMS,
                                   description="parameters: gradient all-reduce and checkpoints")

    @model_validator(mode="after")
    def _one_flops(self) -> GenericModel:
        if self.flops_per_sample is None and self.forward_flops_per_sample is None:
            raise ValueError("give flops_per_sample or forward_flops_per_sample")
        if self.flops_per_sample is not None and self.forward_flops_per_sample is not None:
            raise ValueError("give flops_per_sample or forward_flops_per_sample, not both")
        return self


class GenericData(Strict):
    samples: Count = limited(gt=0, le=L.MAX_SAMPLES, why=L.SAMPLES,
                             description="samples in one pass over the input (an epoch)")
    sample_size: Bytes = limited(gt=0, le=L.MAX_BYTES, why=L.BYTES, description="mean bytes of one sample on storage")
    epochs: float = limited(1.0, gt=0, le=L.MAX_EPOCHS, why=L.EPOCHS)


class GenericPipeline(Strict):
    cpu_cores_per_gpu: float | None = limited(None, ge=L.MIN_COUNT_SMALL, le=L.MAX_COUNT_SMALL, why=L.COUNT_SMALL,
                                              description="host cores feeding each GPU's loader")
    decode_rate_per_core: PerSecond | None = limited(
        None, ge=L.MIN_SAMPLE_RATE, le=L.MAX_SAMPLE_RATE, why=L.SAMPLE_RATE,
        description="samples one core reads, decodes and prepares per second")
    device_bytes_per_sample: Bytes | None = limited(None, gt=0, le=L.MAX_BYTES, why=L.BYTES,
                                                    description="host -> device bytes per sample")
    gpu_efficiency: float | None = limited(None, ge=L.MIN_EFFICIENCY, le=1, why=L.EFFICIENCY,
                                           description="fraction of the dense peak")
    gpu_samples_per_s: PerSecond | None = limited(
        None, ge=L.MIN_SAMPLE_RATE, le=L.MAX_SAMPLE_RATE, why=L.SAMPLE_RATE,
        description="samples one GPU processes per second (replaces the FLOPs route)")
    batch_size_per_gpu: int | None = limited(None, ge=1, le=L.MAX_BATCH_PER_GPU, why=L.BATCH_PER_GPU)
    precision: GenericPrecision | None = None


class GenericOutputs(Strict):
    bytes_per_sample: Bytes | None = limited(None, ge=0, le=L.MAX_BYTES, why=L.BYTES,
                                             description="results written per sample")


class GenericTarget(Strict):
    time_to_result: Seconds | None = limited(None, gt=0, le=L.MAX_DURATION, why=L.DURATION)


class GenericCompute(ClusterCompute):
    """accelerator, system, gpus, max_gpus (intake/common.py), and the nodes' host CPU."""

    host_cpu: str | None = Field(
        default=None, min_length=1,
        description="the nodes' host CPU model as the OS reports it (lscpu 'Model name', what `wkc profile` "
                    "records): a CPU measurement binds to it; default: the system's CPU as the catalog names it")


class GenericWorkload(InfrastructureIntake):
    kind: Literal["generic"]
    name: str | None = None
    model: GenericModel
    data: GenericData
    pipeline: GenericPipeline = Field(default_factory=GenericPipeline)
    outputs: GenericOutputs = Field(default_factory=GenericOutputs)
    target: GenericTarget = Field(default_factory=GenericTarget)
    compute: GenericCompute = Field(default_factory=GenericCompute)


__all__ = ["GenericCompute", "GenericData", "GenericModel", "GenericOutputs", "GenericPipeline",
           "GenericTarget", "GenericWorkload"]
