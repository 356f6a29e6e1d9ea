"""Intake pieces shared by every archetype: the model description and the compute pins.

Every field is optional at intake; what is missing is filled later by a named rule and recorded
as an assumption. `None` here means "not given".
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..arch.model import MlpKind
from ..units import Count

RecomputeMode = Literal["none", "selective", "full", "op_selective", "modules"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MoeIntake(Strict):
    experts: int = Field(gt=0)
    top_k: int = Field(gt=0)
    expert_ffn_hidden_size: int = Field(gt=0)
    shared_experts: int = Field(default=0, ge=0)
    shared_expert_ffn_hidden_size: int | None = Field(default=None, gt=0)
    dense_layers: int = Field(default=0, ge=0, description="leading layers with a dense MLP")
    layer_interval: int = Field(default=1, ge=1)


class MlaIntake(Strict):
    q_lora_rank: int = Field(default=0, ge=0)
    kv_lora_rank: int = Field(gt=0)
    qk_nope_head_dim: int = Field(gt=0)
    qk_rope_head_dim: int = Field(gt=0)
    v_head_dim: int = Field(gt=0)


class ModelIntake(Strict):
    """A preset id, a local HF config.json, or the fields; fields given override the preset."""

    preset: str | None = None
    hf_config: Path | None = None
    name: str | None = None
    layers: int | None = Field(default=None, gt=0)
    hidden_size: int | None = Field(default=None, gt=0)
    attention_heads: int | None = Field(default=None, gt=0)
    kv_heads: int | None = Field(default=None, gt=0)
    head_dim: int | None = Field(default=None, gt=0)
    ffn_hidden_size: int | None = Field(default=None, ge=0)
    vocab_size: int | None = Field(default=None, gt=0)
    mlp: MlpKind | None = None
    tied_embeddings: bool | None = None
    moe: MoeIntake | None = None
    mla: MlaIntake | None = None
    sliding_window: int | None = Field(default=None, ge=0)
    sliding_window_layers: int | None = Field(default=None, ge=0)
    mtp_layers: int | None = Field(default=None, ge=0, description="multi-token-prediction modules "
                                   "(DeepSeek-V3 has 1); 0 trains without them")
    params: Count | None = Field(default=None, description="parameter count, when only that is known")


class ParallelismIntake(Strict):
    tp: int | None = Field(default=None, ge=1)
    pp: int | None = Field(default=None, ge=1)
    dp: int | None = Field(default=None, ge=1)
    cp: int | None = Field(default=None, ge=1)
    ep: int | None = Field(default=None, ge=1)
    etp: int | None = Field(default=None, ge=1, description="tensor parallel inside each expert")
    vp: int | None = Field(default=None, ge=1, description="virtual pipeline stages per rank (interleaved 1F1B)")
    micro_batch_size: int | None = Field(default=None, ge=1)
    recompute: RecomputeMode | None = None
    sequence_parallel: bool | None = None
    tp_comm_overlap: bool | None = Field(
        default=None, description="overlap tensor-parallel collectives with the GEMMs (Megatron-Core "
        "--tp-comm-overlap, torchtitan AsyncTP); default: on for tp > 1 (Megatron-Core performance recipes)")
    zero_stage: Literal[0, 1, 2, 3] | None = None
    # Uneven pipeline stages, as Megatron-Core defines them (perf/stages.py). Unset: the planner
    # chooses between the even split and the balanced one (embedding and loss as a layer each).
    first_stage_layers: int | None = Field(
        default=None, ge=0, description="decoder layers on the first pipeline stage "
        "(Megatron --decoder-first-pipeline-num-layers); the middle stages share the rest evenly")
    last_stage_layers: int | None = Field(
        default=None, ge=0, description="decoder layers on the last pipeline stage "
        "(Megatron --decoder-last-pipeline-num-layers)")
    embedding_as_layer: bool | None = Field(
        default=None, description="count the embedding as a layer in the pipeline split "
        "(Megatron --account-for-embedding-in-pipeline-split)")
    loss_as_layer: bool | None = Field(
        default=None, description="count the loss (output head) as a layer in the pipeline split "
        "(Megatron --account-for-loss-in-pipeline-split)")
    pipeline_layout: str | None = Field(
        default=None, max_length=4096, description="Megatron-Core --pipeline-model-parallel-layout, e.g. "
        "'Et*3|(tt|)*29,m|L': stages separated by '|' of E embedding, t decoder layer, m MTP, L loss; "
        "needs pp, and sets vp = stages / pp")


class ComputeIntake(Strict):
    accelerator: str | None = None
    system: str | None = None
    gpus: int | None = Field(default=None, ge=1)
    max_gpus: int | None = Field(default=None, ge=1, description="a cap: the search stays at or below it")
    parallelism: ParallelismIntake = Field(default_factory=ParallelismIntake)


class ClusterCompute(Strict):
    """The compute pins of an archetype that sizes a GPU count without a parallel layout (HPC,
    generic): every field optional, a field given is pinned."""

    accelerator: str | None = None
    system: str | None = None
    gpus: int | None = Field(default=None, ge=1)
    max_gpus: int | None = Field(default=None, ge=1, description="a cap: the sizing stays at or below it")

