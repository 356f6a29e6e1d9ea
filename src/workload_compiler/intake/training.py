"""The training intake (`kind: training`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..units import Count, Seconds
from .common import ComputeIntake, ModelIntake, Strict
from .cost import CostIntake
from .infrastructure import InfrastructureIntake

TrainingPrecision = Literal["bf16", "fp16", "fp8", "fp8_blockwise", "mxfp8", "nvfp4"]


class TrainingRun(Strict):
    tokens: Count | None = Field(default=None, gt=0, description="training tokens, e.g. 300B")
    seq_len: int | None = Field(default=None, gt=0)
    global_batch_size: int | None = Field(default=None, gt=0, description="sequences per step")
    precision: TrainingPrecision | None = None
    optimizer: Literal["adam"] | None = None


class TargetIntake(Strict):
    time_to_train: Seconds | None = Field(default=None, gt=0)


class TrainingWorkload(InfrastructureIntake):
    kind: Literal["training"]
    name: str | None = None
    model: ModelIntake
    training: TrainingRun = Field(default_factory=TrainingRun)
    target: TargetIntake = Field(default_factory=TargetIntake)
    compute: ComputeIntake = Field(default_factory=ComputeIntake)
    cost: CostIntake | None = None
