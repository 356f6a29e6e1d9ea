"""Training step time (interface; the implementation is being written)."""

from __future__ import annotations

from dataclasses import dataclass

from ..arch.model import ModelArch
from .layout import FloatArray, Hardware, Layout, TrainingSetup


@dataclass(frozen=True, kw_only=True)
class StepResult:
    step_time_s: FloatArray
    breakdown_s: dict[str, FloatArray]     # terms that add up to step_time_s
    tokens_per_s: FloatArray               # whole job
    model_flops_per_gpu_per_s: FloatArray  # model FLOPs (no recompute), causal attention
    mfu: FloatArray                        # against the dense peak of the training precision


def training_step(arch: ModelArch, setup: TrainingSetup, layout: Layout, hw: Hardware) -> StepResult:
    raise NotImplementedError
