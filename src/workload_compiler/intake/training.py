"""The training intake (`kind: training`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..units import Count, Seconds
from . import limits as L
from .common import ComputeIntake, ModelIntake, Strict
from .infrastructure import InfrastructureIntake
from .limits import limited, text

TrainingPrecision = Literal["bf16", "fp16", "fp8", "mxfp8", "nvfp4"]


class TrainingRun(Strict):
    tokens: Count | None = limited(None, ge=1, le=L.MAX_TOKENS, why=L.TOKENS, description="training tokens, e.g. 300B")
    seq_len: int | None = limited(None, gt=0, le=L.MAX_SEQ, why=L.SEQ)
    global_batch_size: int | None = limited(None, gt=0, le=L.MAX_BATCH, why=L.BATCH, description="sequences per step")
    precision: TrainingPrecision | None = None
    optimizer: Literal["adam"] | None = None


class TargetIntake(Strict):
    time_to_train: Seconds | None = limited(None, ge=L.MIN_DEADLINE, le=L.MAX_DURATION,
                                            why={"ge": L.DEADLINE, "le": L.DURATION})


class TrainingWorkload(InfrastructureIntake):
    kind: Literal["training"]
    name: str | None = text()
    model: ModelIntake
    training: TrainingRun = Field(default_factory=TrainingRun)
    target: TargetIntake = Field(default_factory=TargetIntake)
    compute: ComputeIntake = Field(default_factory=ComputeIntake)
