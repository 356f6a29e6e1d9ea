"""The training intake (`kind: training`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..arch.lora import DEFAULT_RANK, LORA_TARGETS, LoraTarget
from ..units import Count, Seconds
from . import limits as L
from .common import ComputeIntake, ModelIntake, Strict
from .cost import CostIntake
from .infrastructure import InfrastructureIntake
from .limits import limited, text

TrainingPrecision = Literal["bf16", "fp16", "fp8", "fp8_blockwise", "mxfp8", "nvfp4"]


class LoraIntake(Strict):
    """LoRA fine-tuning: the model's weights frozen, a rank-r adapter trained beside each target."""

    rank: int = limited(DEFAULT_RANK, gt=0, le=L.MAX_WIDTH, why=L.WIDTH,
                        description=f"adapter rank (Megatron-Bridge / NeMo LoRA dim; {DEFAULT_RANK} by default)")
    targets: list[LoraTarget] = Field(
        default_factory=lambda: list(LORA_TARGETS), min_length=1,
        description="linear layers that carry an adapter (linear_qkv, linear_proj, linear_fc1, linear_fc2: "
        "Megatron-Bridge's default, all four)")


class TrainingRun(Strict):
    tokens: Count | None = limited(None, ge=1, le=L.MAX_TOKENS, why=L.TOKENS, description="training tokens, e.g. 300B")
    seq_len: int | None = limited(None, gt=0, le=L.MAX_SEQ, why=L.SEQ)
    global_batch_size: int | None = limited(None, gt=0, le=L.MAX_BATCH, why=L.BATCH, description="sequences per step")
    document_tokens: int | None = limited(
        None, gt=0, le=L.MAX_SEQ, why=L.SEQ,
        description="mean tokens per document where several documents are packed into each sequence and "
        "attention stays within each (NeMo / Megatron-Bridge packed SFT and PEFT, FlashAttention varlen with "
        "cu_seqlens): the attention core then spans a document, not the sequence; unset: one document per "
        "sequence (pretraining)")
    precision: TrainingPrecision | None = None
    optimizer: Literal["adam"] | None = None
    framework: str | None = Field(
        default=None, description="training framework whose memory profile applies (catalog/data/frameworks.yaml): "
        "megatron, nemo (Megatron-Bridge), torchtitan, fsdp, llm-foundry, deepspeed, maxtext, or an alias; "
        "unset = the generic profile, listed as an assumption")
    grad_reduce_dtype: Literal["fp32", "bf16"] | None = Field(
        default=None, description="dtype of the data-parallel gradient reduction (Megatron "
        "--accumulate-allreduce-grads-in-fp32, NeMo grad_reduce_in_fp32, FSDP reduce_dtype); default fp32")
    moe_capacity_factor: float | None = Field(
        default=None, gt=0, le=64, description="MoE expert capacity factor (token dropping); unset: dropless")
    moe_load_imbalance: float | None = Field(
        default=None, ge=1, le=64, description="tokens on the busiest expert rank over the mean (1.0: balanced, "
        "as benchmark tables force it); your router's measured value for real routing")
    lora: LoraIntake | None = Field(
        default=None, description="fine-tune with LoRA adapters instead of training every weight: no weight "
        "gradients, gradients or optimizer states for the frozen weights")
    attention_kernel: Literal["flash", "flash_v1", "unfused"] | None = Field(
        default=None, description="flash: a fused attention kernel of the FlashAttention-2 class (FA2/FA3, "
        "cuDNN, SDPA) that never stores the s x s scores; flash_v1: a FlashAttention-1-era kernel (about "
        "half as fast); unfused: softmax and dropout over the scores through HBM (Megatron-LM before 2023)")


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
    cost: CostIntake | None = None
