"""The typed sections of a generic-archetype result (generic/compile.py builds them as mappings):
objective and compute; its data path is `PipelineSection` (generic/pipeline.py), its storage and
reliability the training layers'. Optional fields, extra keys let through (as sections_inference)."""

from __future__ import annotations

from typing import Any

from ..quantity import info, quantity
from ..reliability import ReliabilityLayer
from ..storage.plan import StorageLayer
from .sections_inference import Open, PlacedCompute, ServingParallelism


class GenericObjective(Open):
    """Layer 1 (generic): the samples to process and by when."""

    model: str | None = info("the model", default=None, headline=True)
    mode: str | None = info("training | inference", default=None, headline=True)
    params: float | None = quantity("count", "model parameters", default=None)
    flops_per_sample: float | None = quantity("FLOP", "model FLOPs per sample", default=None)
    samples: float | None = quantity("count", "samples in the dataset", default=None, headline=True)
    epochs: float | None = quantity("count", "passes over the dataset", default=None)
    sample_bytes: float | None = quantity("B", "size of one sample", default=None)
    dataset_bytes: float | None = quantity("B", "dataset size", default=None)
    total_samples: float | None = quantity("count", "samples x epochs", default=None)
    total_flops: float | None = quantity("FLOP", "model FLOPs of the run", default=None)
    time_to_result_s: float | None = quantity("s", "time to process every sample", default=None, headline=True)
    time_to_result_target_s: float | None = quantity("s", "the target", default=None, headline=True)
    meets_target: bool | None = info("the run meets its target (null while the time is a lower bound under it)",
                                     default=None, headline=True)
    target_open: str | None = info("why meeting the target is not known yet", default=None)


class GenericCompute(PlacedCompute):
    """Layer 2 (generic): the accelerator, its count and its rate."""

    parallelism: ServingParallelism | None = info("the parallel layout", default=None)
    precision: str | None = info("arithmetic precision", default=None)
    peak_flops_per_s: float | None = quantity("FLOP/s", "peak rate of one GPU at that precision", default=None)
    gpu_efficiency: float | None = quantity("fraction", "share of peak the model sustains", default=None)
    gpu_samples_per_s_per_gpu: float | None = quantity("items/s", "samples one GPU processes per second",
                                                       default=None, headline=True)
    cpu_cores_per_gpu: float | None = quantity("count", "host CPU cores per GPU", default=None)
    batch_size_per_gpu: float | None = quantity("count", "samples per GPU per step", default=None)
    decode_rate_per_core: float | None = quantity("items/s", "samples one host CPU core decodes per second",
                                                  default=None)
    host_cpu: str | None = info("the host CPU the decode rate is for", default=None)
    bottleneck: str | None = info("the stage that binds the data path", default=None, headline=True)


SECTIONS: dict[str, Any] = {"objective": GenericObjective, "compute": GenericCompute, "storage": StorageLayer,
                            "reliability": ReliabilityLayer}

__all__ = ["SECTIONS", "GenericCompute", "GenericObjective"]
