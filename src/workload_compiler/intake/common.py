"""Intake pieces shared by every archetype: the model description and the compute pins.

Every field is optional at intake; what is missing is filled later by a named rule and recorded
as an assumption. `None` here means "not given".
"""

from __future__ import annotations

import functools
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..arch.model import HYBRID_SYMBOLS, MlpKind, mamba_default
from ..errors import canonical_id
from ..units import Count, ungrouped
from . import limits as L
from .limits import limited, text

RecomputeMode = Literal["none", "selective", "full", "op_selective", "modules", "mla_up_proj"]


def _choices(annotation: Any) -> tuple[str, ...]:
    """The text options of a Literal field (or of the Literal inside an Optional/Union)."""
    if typing.get_origin(annotation) is Literal:
        return tuple(a for a in typing.get_args(annotation) if isinstance(a, str))
    return tuple(c for a in typing.get_args(annotation) for c in _choices(a))


@functools.cache
def _choice_fields(model: type[BaseModel]) -> dict[str, tuple[str, ...]]:
    """Key as written in an intake -> the options of each Literal field of `model`."""
    return {info.alias or name: options for name, info in model.model_fields.items()
            if (options := _choices(info.annotation))}


@functools.cache
def _int_fields(model: type[BaseModel]) -> frozenset[str]:
    """Keys of the whole-number fields of `model` (int, or int | None)."""
    return frozenset(info.alias or name for name, info in model.model_fields.items()
                     if info.annotation is int or set(typing.get_args(info.annotation)) == {int, type(None)})




class Strict(BaseModel):
    """Unknown keys are errors; a float field refuses inf and NaN; a choice is read in any letter
    case ('BF16' is bf16, 'DLC' is dlc) and a whole number with its thousands separators ('1,024'),
    as datasheets, people and our own reports write them."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _as_people_write(cls, data: Any) -> Any:
        """A choice in any letter case; a whole number with thousands separators ('1,024')."""
        if not isinstance(data, dict):
            return data
        fixed: dict[str, Any] | None = None
        for key, options in _choice_fields(cls).items():
            value = data.get(key)
            if isinstance(value, str) and value not in options:
                same = [o for o in options if o.casefold() == value.strip().casefold()]
                if len(same) == 1:
                    fixed = fixed if fixed is not None else dict(data)
                    fixed[key] = same[0]
        for key in _int_fields(cls):
            value = data.get(key)
            if isinstance(value, str) and "," in value and ungrouped(value).isdigit():
                fixed = fixed if fixed is not None else dict(data)
                fixed[key] = int(ungrouped(value))
        return fixed if fixed is not None else data


class MoeIntake(Strict):
    experts: int = limited(gt=0, le=L.MAX_EXPERTS, why=L.EXPERTS)
    top_k: int = limited(gt=0, le=L.MAX_EXPERTS, why=L.EXPERTS)
    expert_ffn_hidden_size: int = limited(gt=0, le=L.MAX_FFN, why=L.FFN)
    shared_experts: int = limited(0, ge=0, le=L.MAX_EXPERTS, why=L.EXPERTS)
    shared_expert_ffn_hidden_size: int | None = limited(None, gt=0, le=L.MAX_FFN, why=L.FFN)
    dense_layers: int = limited(0, ge=0, le=L.MAX_LAYERS, why=L.LAYERS, description="leading layers with a dense MLP")
    layer_interval: int = limited(1, ge=1, le=L.MAX_LAYERS, why=L.LAYERS)
    latent_size: int = limited(0, ge=0, le=L.MAX_WIDTH, why=L.WIDTH,
                               description="a latent MoE's expert width (Nemotron 3 Super: 1024); 0 = hidden size")


class MlaIntake(Strict):
    q_lora_rank: int = limited(0, ge=0, le=L.MAX_WIDTH, why=L.WIDTH)
    kv_lora_rank: int = limited(gt=0, le=L.MAX_WIDTH, why=L.WIDTH)
    qk_nope_head_dim: int = limited(gt=0, le=L.MAX_HEAD_DIM, why=L.HEAD_DIM)
    qk_rope_head_dim: int = limited(gt=0, le=L.MAX_HEAD_DIM, why=L.HEAD_DIM)
    v_head_dim: int = limited(gt=0, le=L.MAX_HEAD_DIM, why=L.HEAD_DIM)


class SparseAttentionIntake(Strict):
    """DeepSeek Sparse Attention (DeepSeek-V3.2): each query attends to its top-k keys, chosen by a
    lightning indexer that scores every earlier key."""

    topk: int = limited(gt=0, le=L.MAX_SEQ, why=L.SEQ, description="keys each query attends to (index_topk)")
    indexer_heads: int = limited(gt=0, le=L.MAX_HEADS, why=L.HEADS, description="index_n_heads")
    indexer_head_dim: int = limited(gt=0, le=L.MAX_HEAD_DIM, why=L.HEAD_DIM, description="index_head_dim")


class HybridIntake(Strict):
    """A hybrid Mamba-2 / attention model (Nemotron-H), as Megatron-Core's hybrid model takes it; or a
    Gated DeltaNet / attention hybrid (Qwen3-Next), its mixer in the same fields: mamba_heads and
    mamba_head_dim its value heads and their size, groups its key heads, state_dim their size."""

    pattern: str = Field(pattern=f"^[{HYBRID_SYMBOLS}]+$", max_length=L.MAX_LAYERS,
                         description="one character per layer, each layer one block: M a Mamba-2 mixer, "
                         "G a Gated DeltaNet mixer, * self-attention, E a mixture of experts (give model.moe), "
                         "- an MLP (Megatron-Core --hybrid-override-pattern, and G)")
    mamba_heads: int = limited(gt=0, le=L.MAX_HEADS, why=L.HEADS)
    mamba_head_dim: int = limited(mamba_default("mamba_head_dim"), gt=0, le=L.MAX_HEAD_DIM, why=L.HEAD_DIM)
    state_dim: int = limited(mamba_default("mamba_state_dim"), gt=0, le=L.MAX_HEAD_DIM, why=L.HEAD_DIM,
                             description="SSM state size per channel (d_state, ssm_state_size)")
    groups: int = limited(mamba_default("mamba_groups"), gt=0, le=L.MAX_HEADS, why=L.HEADS,
                          description="B/C groups (n_groups)")
    conv_kernel: int = limited(mamba_default("mamba_conv_kernel"), gt=0, le=L.MAX_HEAD_DIM, why=L.HEAD_DIM)
    chunk_size: int = limited(mamba_default("mamba_chunk_size"), gt=0, le=L.MAX_SEQ, why=L.SEQ,
                              description="SSD chunk length")


class ModelIntake(Strict):
    """A preset id, a local HF config.json, or the fields; fields given override the preset."""

    preset: str | None = text(description="a preset id (`wkc catalog models`), in any letter case")

    @field_validator("preset")
    @classmethod
    def _preset_id(cls, value: str | None) -> str | None:
        """The id as the catalog keeps it: 'Llama3-8B' names llama3-8b wherever the intake is read."""
        return canonical_id(value)

    hf_config: Path | None = None
    name: str | None = text()
    layers: int | None = limited(None, gt=0, le=L.MAX_LAYERS, why=L.LAYERS)
    hidden_size: int | None = limited(None, gt=0, le=L.MAX_WIDTH, why=L.WIDTH)
    attention_heads: int | None = limited(None, gt=0, le=L.MAX_HEADS, why=L.HEADS)
    kv_heads: int | None = limited(None, gt=0, le=L.MAX_HEADS, why=L.HEADS)
    head_dim: int | None = limited(None, gt=0, le=L.MAX_HEAD_DIM, why=L.HEAD_DIM)
    ffn_hidden_size: int | None = limited(None, ge=0, le=L.MAX_FFN, why=L.FFN)
    vocab_size: int | None = limited(None, gt=0, le=L.MAX_VOCAB, why=L.VOCAB)
    mlp: MlpKind | None = Field(default=None, description="not given: gated (swiglu) when ffn_hidden_size is under "
                                "3.75 x hidden_size or the attention is grouped-query, else gelu (arch/resolve.py)")
    tied_embeddings: bool | None = None
    glu_clamp: float | None = limited(None, ge=0, le=L.MAX_GLU_CLAMP, why=L.GLU_CLAMP,
                                      description="clamp limit on the gated MLP's inputs (HF swiglu_limit: "
                                      "GPT-OSS 7.0); 0 = none")
    moe: MoeIntake | None = None
    mla: MlaIntake | None = None
    hybrid: HybridIntake | None = None
    sparse_attention: SparseAttentionIntake | None = None
    sliding_window: int | None = limited(None, ge=0, le=L.MAX_SEQ, why=L.SEQ)
    sliding_window_layers: int | None = limited(None, ge=0, le=L.MAX_LAYERS, why=L.LAYERS)
    mtp_layers: int | None = limited(None, ge=0, le=L.MAX_LAYERS, why=L.LAYERS,
                                     description="multi-token-prediction modules (DeepSeek-V3 has 1); 0 trains "
                                     "without them")
    attention_output_gate: bool | None = Field(
        default=None, description="a gate on each attention head's output, projected beside the queries "
        "(Qwen3-Next, Qwen3.5: attn_output_gate)")
    params: Count | None = limited(None, ge=1, le=L.MAX_PARAMS, why=L.PARAMS,
                                   description="parameter count, when only that is known")


class ParallelismIntake(Strict):
    tp: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS)
    pp: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS)
    dp: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS)
    cp: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS)
    ep: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS)
    etp: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS, description="tensor parallel inside each expert")
    vp: int | None = limited(None, ge=1, le=L.MAX_LAYERS, why=L.LAYERS,
                             description="virtual pipeline stages per rank (interleaved 1F1B)")
    micro_batch_size: int | None = limited(None, ge=1, le=L.MAX_MICRO_BATCH, why=L.MICRO_BATCH)
    recompute: RecomputeMode | None = None
    sequence_parallel: bool | None = None
    tp_comm_overlap: bool | None = Field(
        default=None, description="overlap tensor-parallel collectives with the GEMMs (Megatron-Core "
        "--tp-comm-overlap, torchtitan AsyncTP); default: on for tp > 1 (Megatron-Core performance recipes)")
    ep_comm_overlap: bool | None = Field(
        default=None, description="MoE: run each micro-batch's expert-parallel all-to-all (dispatch and "
        "combine) under another micro-batch's compute (Megatron-Core --overlap-moe-expert-parallel-comm, "
        "Megatron-Bridge moe_a2a_overlap); default: off, in series with the experts (Megatron-Core's default)")
    ep_dispatcher: Literal["alltoall", "deepep", "hybridep"] | None = Field(
        default=None, description="MoE token dispatch: 'alltoall' sends every token copy to its expert's GPU "
        "(Megatron-Core --moe-token-dispatcher-type alltoall, the default); 'deepep' / 'hybridep' "
        "(--moe-token-dispatcher-type flex with --moe-flex-dispatcher-backend) send a token once per remote "
        "node over the NICs and forward it over NVLink there")
    zero_stage: Literal[0, 1, 2, 3] | None = None
    activation_offload_layers: int | None = limited(
        None, ge=0, le=L.MAX_LAYERS, why=L.LAYERS,
        description="decoder layers whose stored activations go to host memory during the step "
        "(Megatron-Core cpu_offloading_num_layers: pp 1, no recompute, fewer than the model's layers); "
        "0: none; unset: the planner offloads the fewest layers that make a layout fit where the "
        "framework offloads (megatron, nemo) and the catalog knows the host link")
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
    accelerator: str | None = text()
    system: str | None = text()
    gpus: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS)
    max_gpus: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS,
                                   description="a cap: the search stays at or below it")
    parallelism: ParallelismIntake = Field(default_factory=ParallelismIntake)


class ClusterCompute(Strict):
    """The compute pins of an archetype that sizes a GPU count without a parallel layout (HPC,
    generic): every field optional, a field given is pinned."""

    accelerator: str | None = text()
    system: str | None = text()
    gpus: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS)
    max_gpus: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS,
                                   description="a cap: the sizing stays at or below it")

