"""KV-cache bytes: per cached token, per sequence (sliding windows included); a hybrid's SSM state.

MHA/GQA cache a key and a value vector per KV head per layer:
    2 * kv_heads * head_dim * bytes                      per token per layer
MLA (DeepSeek V2/V3, arXiv:2405.04434 Sec 2.1.2) caches the compressed latent and the shared
RoPE key, which is what vLLM, SGLang and TensorRT-LLM store:
    (kv_lora_rank + qk_rope_head_dim) * bytes            per token per layer
A sliding-window layer keeps at most `sliding_window` tokens; a full-attention layer keeps all.
Sharding (for callers): tensor parallelism splits GQA caches by KV head (min(tp, kv_heads) ways),
while the MLA latent is shared by all heads and is replicated on every TP rank.
A hybrid (arch.model hybrid_pattern) caches KV in its attention layers only; each Mamba-2 or Gated
DeltaNet layer keeps a fixed state per sequence instead, whatever its length
(`ssm_state_bytes_per_sequence`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .model import ModelArch


def indexer_key_bytes(arch: ModelArch) -> float:
    """A DSA layer's lightning-indexer key per token: head_dim FP8 values and an FP32 scale per 128
    (vLLM's indexer cache: index_head_dim + index_head_dim // 128 * 4), whatever the KV dtype; 0
    without sparse attention."""
    if not arch.sparse_attention_topk:
        return 0.0
    return float(arch.indexer_head_dim + 4 * -(-arch.indexer_head_dim // 128))


def kv_bytes_per_token_per_layer(arch: ModelArch, kv_dtype_bytes: float) -> float:
    """Bytes one layer caches for one token (a sparse attention's indexer key included)."""
    width = arch.mla_kv_lora_rank + arch.mla_qk_rope_head_dim if arch.is_mla else 2 * arch.kv_heads * arch.head_dim
    return float(width * kv_dtype_bytes) + indexer_key_bytes(arch)


def full_attention_layers(arch: ModelArch) -> int:
    """Layers whose cache grows with the context: the attention layers but the sliding-window ones."""
    if arch.sliding_window <= 0:
        return arch.attention_layers
    return arch.attention_layers - arch.sliding_window_layers


def kv_bytes_per_token(arch: ModelArch, kv_dtype_bytes: float) -> float:
    """Bytes per token cached by all attention layers (a hybrid's '*' layers):
    2 * layers * kv_heads * head_dim * bytes (MHA/GQA), layers * (kv_lora_rank + qk_rope_head_dim) * bytes (MLA).

    Exact while the context fits in every window; beyond it, sliding-window layers stop growing:
    use `kv_bytes_per_sequence`, or `kv_bytes_per_token_full_layers` for the growth per token.
    """
    return arch.attention_layers * kv_bytes_per_token_per_layer(arch, kv_dtype_bytes)


def kv_bytes_per_token_full_layers(arch: ModelArch, kv_dtype_bytes: float) -> float:
    """Growth of the cache per extra token once the context exceeds every window: full-attention
    layers only (gpt-oss-120b: 18 of 36 layers)."""
    return full_attention_layers(arch) * kv_bytes_per_token_per_layer(arch, kv_dtype_bytes)


def kv_bytes_per_sequence(arch: ModelArch, seq_len: int, kv_dtype_bytes: float) -> float:
    """Cache of one sequence of `seq_len` tokens:
    per_layer * (full_layers * seq_len + window_layers * min(window, seq_len))."""
    per_layer = kv_bytes_per_token_per_layer(arch, kv_dtype_bytes)
    full = full_attention_layers(arch)
    windowed = arch.attention_layers - full
    window_tokens = min(arch.sliding_window, seq_len) if windowed else 0
    return per_layer * (full * seq_len + windowed * window_tokens)


def ssm_state_bytes_per_sequence(arch: ModelArch, state_bytes: float, conv_bytes: float = 2.0,
                                 tp: Any = 1) -> npt.NDArray[np.float64]:
    """Mamba-2 state of one sequence on one of `tp` GPUs (a number or an array), all Mamba layers
    (vLLM's MambaStateShapeCalculator.mamba2_state_shape, model_executor/layers/mamba/mamba_utils.py):
        conv state      (d_inner + 2 G' N) / tp x (conv_kernel - 1)   at the model dtype (`conv_bytes`)
        temporal state  heads / tp x head_dim x N                     at `state_bytes`
    with G' the groups where tp divides them, else tp (vLLM's extra_groups_for_head_shards: groups
    are replicated so that each rank holds those its heads read). A Gated DeltaNet layer (vLLM's
    gated_delta_net_state_shape) keeps conv (2 key channels + value channels) / tp x (k - 1) and
    value heads / tp x value dim x key dim: the same with groups = key heads, never replicated.
    Fixed per sequence; decoding reads and writes it once per token and layer."""
    t = np.asarray(tp, dtype=np.float64)
    if not arch.mamba_layers:
        return np.zeros_like(t)
    groups = arch.mamba_groups if arch.gated_delta else np.where(arch.mamba_groups % t == 0, arch.mamba_groups, t)
    conv = (arch.mamba_inner + 2 * groups * arch.mamba_state_dim) / t * (arch.mamba_conv_kernel - 1) * conv_bytes
    temporal = arch.mamba_heads / t * arch.mamba_head_dim * arch.mamba_state_dim * state_bytes
    return np.asarray(arch.mamba_layers * (conv + temporal))
