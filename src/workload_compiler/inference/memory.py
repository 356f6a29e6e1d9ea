"""Memory of one serving GPU: weights, KV cache, activations, runtime reserve; KV capacity.

Weights per GPU (the most loaded pipeline stage):
    non-expert linear layers / (tp * pp)      attention, dense MLP, shared experts, routers
    routed experts           / (max(tp, ep) * pp)   EP shards experts; ep <= tp folds into TP
    embedding + output head  / tp             vocabulary-parallel; one of each per stage at pp > 1
KV per token per GPU: MHA/GQA shard KV heads over TP, ceil(kv_heads / tp) / kv_heads of the cache
(a GPU keeps at least one head: TP beyond kv_heads replicates); MLA's latent is not sharded by
TP; pp splits the layers. A hybrid's Mamba-2 or Gated DeltaNet state (fixed per sequence) is sharded by TP over its
heads (arch/kv_cache.py ssm_state_bytes_per_sequence) and shares the cache with the KV: a sequence
takes its KV blocks and one state (vLLM's hybrid KV-cache manager).

KV capacity (engine semantics, catalog/data/serving_engines.yaml):
    fraction of total (vLLM):  KV = f * M - weights - activation - reserve
    fraction of free (TRT-LLM): KV = f * (M - weights - activation - reserve)
    SGLang (activation outside the static fraction): KV = f * M - weights - reserve
with M the device memory the runtime sees (catalog `process_memory_bytes`: the measured CUDA / HIP
total where the catalog has it; torch's mem_get_info total is what vLLM and SGLang size from).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..perf.layout import FloatArray
from . import fitted
from .engines import Engine
from .layout import ServingLayout
from .model import SIXTEEN_BIT_BYTES, ServedModel


def stage_fraction(layers: int, pp: Any) -> FloatArray:
    """Share of the layers on the most loaded stage: ceil(L / pp) / L."""
    return np.asarray(np.ceil(layers / np.asarray(pp, dtype=np.float64)) / layers)


def weight_bytes_per_gpu(m: ServedModel, lay: ServingLayout) -> FloatArray:
    """Weights held by one GPU of the most loaded stage (formula in the module docstring)."""
    stage = stage_fraction(m.arch.layers, lay.pp)
    expert_total = m.expert_params * m.expert_bytes_per_param
    body = stage * (linear_weight_bytes(m) / lay.tp + expert_total / lay.moe_group)
    emb = m.embedding_params * m.embedding_bytes_per_param
    head = 0.0 if m.arch.tied_embeddings else m.head_params * m.embedding_bytes_per_param
    ends = np.where(lay.pp > 1, max(emb, head), emb + head) / lay.tp   # pp > 1: first and last stage apart
    return np.asarray(body + ends)


def linear_weight_bytes(m: ServedModel) -> float:
    """Bytes of the non-expert linear layers (attention, dense MLP, shared experts, routers)."""
    head = 0.0 if m.arch.tied_embeddings else m.head_params
    emb = (m.embedding_params + head) * m.embedding_bytes_per_param
    return m.weight_bytes - m.expert_params * m.expert_bytes_per_param - emb


def kv_shard_fraction(m: ServedModel, lay: ServingLayout) -> FloatArray:
    """Fraction of a sequence's KV one GPU holds: heads (MHA/GQA only) times layers."""
    stage = stage_fraction(m.arch.layers, lay.pp)
    if m.arch.is_mla:
        heads = np.ones_like(lay.tp, dtype=np.float64)
    else:
        kvh = float(m.arch.kv_heads)
        heads = np.ceil(kvh / lay.tp) / kvh
    return np.asarray(heads * stage)


def kv_bytes_per_token_per_gpu(m: ServedModel, lay: ServingLayout) -> FloatArray:
    return np.asarray(m.kv_bytes_per_token * kv_shard_fraction(m, lay))


def ssm_state_bytes_per_gpu(m: ServedModel, lay: ServingLayout) -> FloatArray:
    """One sequence's Mamba-2 (or Gated DeltaNet) state on one GPU of the most loaded stage (0 for a
    transformer)."""
    if not m.arch.mamba_layers:
        return np.zeros(lay.shape)
    return np.asarray(m.ssm_state_bytes_at(lay.tp) * stage_fraction(m.arch.layers, lay.pp))


def activation_peak_bytes(m: ServedModel, lay: ServingLayout, step_tokens: Any,
                          logit_rows: Any) -> FloatArray:
    """Peak of the transient buffers of one forward step, per GPU: the larger of
    the MLP intermediates (tokens x (2 ffn + hidden) / tp x 2 bytes; MoE: x top_k / max(tp, ep))
    and the logits (rows x vocab / tp x LOGIT_BYTES_PER_ENTRY: the 16-bit logits, their FP32
    copy and the FP32 probabilities). They are alive at different times, hence the max."""
    a = m.arch
    t = np.asarray(step_tokens, dtype=np.float64)
    if a.is_moe:
        per_token = a.moe_top_k * (2 * a.moe_ffn_hidden_size + a.moe_width) / lay.moe_group
    else:
        per_token = (2 * a.ffn_hidden_size + a.hidden_size) / lay.tp
    if a.mamba_layers:      # a Mamba-2 block's in_proj output (z, x, B, C, dt) and the scan's output
        per_token = np.maximum(per_token, (a.mamba_in_proj_width + a.mamba_inner) / lay.tp)
    mlp = t * per_token * SIXTEEN_BIT_BYTES
    logits = np.asarray(logit_rows, dtype=np.float64) * a.vocab_size / lay.tp * fitted.LOGIT_BYTES_PER_ENTRY
    return np.asarray(np.maximum(mlp, logits))


@dataclass(frozen=True, kw_only=True)
class MemoryPlan:
    """Per-GPU bytes (arrays of the layout's shape) and the KV capacity of one replica."""

    device_bytes: float
    weights_bytes: FloatArray
    activation_bytes: FloatArray
    reserve_bytes: float
    kv_cache_bytes: FloatArray          # per GPU; <= 0 means the model does not fit
    kv_bytes_per_token_gpu: FloatArray  # per GPU, per cached token
    kv_capacity_tokens: FloatArray      # per replica (all attention-DP groups), beside the SSM states
    ssm_state_bytes_gpu: FloatArray     # one sequence's Mamba-2 state per GPU (0 for a transformer)


def memory_plan(m: ServedModel, lay: ServingLayout, visible: float, eng: Engine, *,
                memory_fraction: float | None = None, step_tokens: Any = None,
                logit_rows: Any = None) -> MemoryPlan:
    """KV cache per GPU and KV tokens per replica under the engine's sizing rule; `visible`: the
    bytes the runtime sees on one GPU (the Hardware's hbm_bytes)."""
    f = eng.memory_fraction if memory_fraction is None else memory_fraction
    w = weight_bytes_per_gpu(m, lay)
    tokens = eng.max_num_tokens if step_tokens is None else step_tokens
    profiled_rows = tokens if eng.profile_logits_of == "tokens" else eng.max_batch_size
    rows = profiled_rows if logit_rows is None else logit_rows
    act = activation_peak_bytes(m, lay, tokens, rows)
    reserve = eng.runtime_reserve_bytes
    if eng.memory_fraction_of == "free":
        kv = f * (visible - w - act - reserve)
    elif eng.activation_in_fraction:
        kv = f * visible - w - act - reserve
    else:
        kv = f * visible - w - reserve
    per_token = kv_bytes_per_token_per_gpu(m, lay)
    capacity = np.maximum(kv, 0.0) / per_token * lay.dp_attn
    return MemoryPlan(device_bytes=visible, weights_bytes=w, activation_bytes=act, reserve_bytes=reserve,
                      kv_cache_bytes=np.asarray(kv), kv_bytes_per_token_gpu=per_token,
                      kv_capacity_tokens=np.asarray(capacity), ssm_state_bytes_gpu=ssm_state_bytes_per_gpu(m, lay))


def context_sequences(kv_tokens: float, kv_bytes_per_token_gpu: float, ssm_state_bytes_gpu: float,
                      context_tokens: float) -> int:
    """Sequences of `context_tokens` the cache holds, given the tokens it holds without states: a
    hybrid's sequence takes its SSM state too, as many bytes as state / (KV per token) tokens."""
    per_sequence = max(context_tokens, 1.0) + ssm_state_bytes_gpu / max(kv_bytes_per_token_gpu, 1e-30)
    return math.floor(kv_tokens / per_sequence)


def max_sequences(m: ServedModel, plan: MemoryPlan, lay: ServingLayout, seq_tokens: Any,
                  block_tokens: int) -> FloatArray:
    """Concurrent sequences of `seq_tokens` tokens the KV cache holds (whole blocks per sequence;
    sliding-window layers stop growing at the window; a hybrid's sequence adds its SSM state)."""
    blocks = np.ceil(np.asarray(seq_tokens, dtype=np.float64) / block_tokens) * block_tokens
    per_seq = m.kv_bytes_per_sequence(blocks) * kv_shard_fraction(m, lay) + plan.ssm_state_bytes_gpu
    kv = np.maximum(plan.kv_cache_bytes, 0.0)
    return np.asarray(np.floor(kv / per_seq) * lay.dp_attn)
