"""The served model as the inference arithmetic sees it: parameter groups, bytes per parameter,
KV bytes per token, and the shapes that set GEMM efficiency. Built once from a `ModelArch`.

Parameter groups (from arch/counts.py): attention, dense MLP, Mamba-2 mixers (a hybrid's), routed
experts, shared experts + router, embedding, output head. A hybrid caches KV in its attention
layers only and keeps a fixed SSM state per sequence in each Mamba layer (arch/kv_cache.py).
Quantized checkpoints (FP8, INT8, INT4, NVFP4, MXFP4) quantize the linear layers; the embedding
and the output head stay 16-bit (ModelOpt and llm-compressor exclude `lm_head`; an assumption
recorded by the caller). A checkpoint with a native format for its experts only (gpt-oss: MXFP4
experts) keeps the rest in BF16.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arch.counts import (
    attention_params,
    expert_params,
    head_dims,
    indexer_flops_per_key,
    mamba_params,
    mlp_params,
    param_counts,
)
from ..arch.kv_cache import full_attention_layers, indexer_key_bytes, kv_bytes_per_token, ssm_state_bytes_per_sequence
from ..arch.model import ModelArch
from ..arch.weight_formats import weight_format
from ..perf.layout import FloatArray

SIXTEEN_BIT_BYTES = 2.0
KV_DTYPE_BYTES: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}
SSM_STATE_DTYPE_BYTES: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0}


@dataclass(frozen=True, kw_only=True)
class ServedModel:
    """Scalars of one model in one weight format and KV dtype (no parallelism yet)."""

    arch: ModelArch
    weights: str                    # weight format name of the linear layers
    kv_dtype: str
    attention_params: float         # all layers
    dense_mlp_params: float         # all dense-MLP blocks
    mamba_params: float = 0.0       # all Mamba-2 mixers (a hybrid's)
    expert_params: float            # all routed experts of all MoE layers
    shared_params: float            # shared experts + routers, all MoE layers
    embedding_params: float
    head_params: float              # output projection (= the embedding's size when tied)
    linear_bytes_per_param: float
    expert_bytes_per_param: float
    embedding_bytes_per_param: float
    kv_bytes_per_token: float       # all attention layers, at kv_dtype (a full-attention token)
    ssm_state_dtype: str = "bf16"   # a hybrid's linear-mixer state

    @property
    def total_params(self) -> float:
        return param_counts(self.arch).total

    @property
    def active_params(self) -> float:
        return param_counts(self.arch).active

    @property
    def weight_bytes(self) -> float:
        """All weights of one replica: linear layers in their format, embeddings 16-bit."""
        c = param_counts(self.arch)
        emb = self.embedding_params + (0.0 if self.arch.tied_embeddings else self.head_params)
        linear = c.non_expert_params - emb   # attention, dense MLP, shared experts, routers, MTP, norms
        return (linear * self.linear_bytes_per_param + self.expert_params * self.expert_bytes_per_param
                + emb * self.embedding_bytes_per_param)

    def active_expert_params(self) -> float:
        """Routed-expert weights one token multiplies: top_k experts in every MoE layer."""
        a = self.arch
        return float(a.moe_blocks * a.moe_top_k * expert_params(a)) if a.is_moe else 0.0

    def attention_flops_per_token(self, context: Any) -> FloatArray:
        """QK^T + AV FLOPs of one token attending to `context` keys, all attention layers:
        2 * ctx_eff * heads * (d_qk + d_v) * layers (arch/counts.attention_flops_per_token,
        vectorized; sliding-window layers see min(window, context))."""
        a = self.arch
        keys = np.asarray(context, dtype=np.float64)
        ctx = np.minimum(keys, float(a.sparse_attention_topk)) if a.sparse_attention_topk else keys
        n = a.attention_layers
        if a.sliding_window and a.sliding_window_layers:
            w = np.minimum(float(a.sliding_window), ctx)
            ctx = (a.sliding_window_layers * w + (n - a.sliding_window_layers) * ctx) / n
        d_qk, d_v = head_dims(a)
        return np.asarray(2.0 * ctx * a.attention_heads * (d_qk + d_v) * n + keys * indexer_flops_per_key(a))

    @property
    def ssm_state_bytes(self) -> float:
        """One sequence's linear-mixer state, all layers, unsharded (0 for a transformer)."""
        return float(self.ssm_state_bytes_at(1))

    def ssm_state_bytes_at(self, tp: Any) -> FloatArray:
        """One sequence's linear-mixer state on one of `tp` GPUs, all layers: the state at
        ssm_state_dtype, its conv window 16-bit (arch/kv_cache.py ssm_state_bytes_per_sequence)."""
        return ssm_state_bytes_per_sequence(self.arch, SSM_STATE_DTYPE_BYTES[self.ssm_state_dtype],
                                            SIXTEEN_BIT_BYTES, tp=tp)

    def kv_tokens_read(self, context: Any) -> FloatArray:
        """Cached tokens' worth of KV one decode token reads over `context` cached tokens: all of
        them, or under sparse attention the indexer keys of every token and the attention cache of
        the top-k only."""
        a, ctx = self.arch, np.asarray(context, dtype=np.float64)
        if not a.sparse_attention_topk:
            return ctx
        idx = indexer_key_bytes(a) * a.attention_layers / max(self.kv_bytes_per_token, 1e-30)
        return np.asarray(ctx * idx + np.minimum(ctx, float(a.sparse_attention_topk)) * (1.0 - idx))

    def kv_bytes_per_sequence(self, tokens: Any) -> FloatArray:
        """KV bytes of one sequence of `tokens` (sliding-window layers cap at the window):
        per_layer * (full_layers * L + window_layers * min(window, L)); arch/kv_cache.py's
        kv_bytes_per_sequence, vectorized over `tokens`."""
        a = self.arch
        n = np.asarray(tokens, dtype=np.float64)
        per_layer = self.kv_bytes_per_token / max(a.attention_layers, 1)
        full = full_attention_layers(a)
        windowed = a.attention_layers - full
        capped = np.minimum(float(a.sliding_window), n) if windowed else 0.0
        return np.asarray(per_layer * (full * n + windowed * capped))


def _native_expert_format(arch: ModelArch) -> str | None:
    if arch.weight_format is not None and arch.weight_format_scope == "experts":
        return arch.weight_format
    return None


def served_model(arch: ModelArch, weights: str, kv_dtype: str, ssm_state_dtype: str = "bf16") -> ServedModel:
    """Parameter groups and bytes per parameter. `weights` is a weight_formats name; when it is
    the checkpoint's own experts-only format (gpt-oss MXFP4), the non-expert layers stay BF16."""
    c = param_counts(arch)
    attn = attention_params(arch) * arch.attention_layers
    dense = mlp_params(arch, arch.ffn_hidden_size) * arch.mlp_blocks
    linear_bytes = weight_format(weights, "serving.weights").bits_per_param / 8.0
    expert_bytes = linear_bytes
    if _native_expert_format(arch) == weights:
        linear_bytes = SIXTEEN_BIT_BYTES
    shared = (c.moe_shared_per_layer + c.router_per_layer) * arch.moe_blocks
    head = c.output_head if not arch.tied_embeddings else c.embedding
    return ServedModel(
        arch=arch, weights=weights, kv_dtype=kv_dtype,
        attention_params=attn, dense_mlp_params=dense, mamba_params=mamba_params(arch) * arch.mamba_layers,
        expert_params=c.expert_params,
        shared_params=shared, embedding_params=c.embedding, head_params=head,
        linear_bytes_per_param=linear_bytes, expert_bytes_per_param=expert_bytes,
        embedding_bytes_per_param=max(linear_bytes, SIXTEEN_BIT_BYTES),
        kv_bytes_per_token=kv_bytes_per_token(arch, KV_DTYPE_BYTES[kv_dtype]),
        ssm_state_dtype=ssm_state_dtype,
    )
