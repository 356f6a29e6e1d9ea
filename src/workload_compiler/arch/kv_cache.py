"""KV-cache bytes: per cached token, per sequence (sliding windows included).

MHA/GQA cache a key and a value vector per KV head per layer:
    2 * kv_heads * head_dim * bytes                      per token per layer
MLA (DeepSeek V2/V3, arXiv:2405.04434 Sec 2.1.2) caches the compressed latent and the shared
RoPE key, which is what vLLM, SGLang and TensorRT-LLM store:
    (kv_lora_rank + qk_rope_head_dim) * bytes            per token per layer
A sliding-window layer keeps at most `sliding_window` tokens; a full-attention layer keeps all.
Sharding (for callers): tensor parallelism splits GQA caches by KV head (min(tp, kv_heads) ways),
while the MLA latent is shared by all heads and is replicated on every TP rank.
"""

from __future__ import annotations

from .model import ModelArch


def kv_bytes_per_token_per_layer(arch: ModelArch, kv_dtype_bytes: float) -> float:
    """Bytes one layer caches for one token."""
    if arch.is_mla:
        return float((arch.mla_kv_lora_rank + arch.mla_qk_rope_head_dim) * kv_dtype_bytes)
    return float(2 * arch.kv_heads * arch.head_dim * kv_dtype_bytes)


def full_attention_layers(arch: ModelArch) -> int:
    """Layers whose cache grows with the context (all but the sliding-window ones)."""
    if arch.sliding_window <= 0:
        return arch.layers
    return arch.layers - arch.sliding_window_layers


def kv_bytes_per_token(arch: ModelArch, kv_dtype_bytes: float) -> float:
    """Bytes per token cached by all layers: 2 * layers * kv_heads * head_dim * bytes (MHA/GQA),
    layers * (kv_lora_rank + qk_rope_head_dim) * bytes (MLA).

    Exact while the context fits in every window; beyond it, sliding-window layers stop growing:
    use `kv_bytes_per_sequence`, or `kv_bytes_per_token_full_layers` for the growth per token.
    """
    return arch.layers * kv_bytes_per_token_per_layer(arch, kv_dtype_bytes)


def kv_bytes_per_token_full_layers(arch: ModelArch, kv_dtype_bytes: float) -> float:
    """Growth of the cache per extra token once the context exceeds every window: full-attention
    layers only (gpt-oss-120b: 18 of 36 layers)."""
    return full_attention_layers(arch) * kv_bytes_per_token_per_layer(arch, kv_dtype_bytes)


def kv_bytes_per_sequence(arch: ModelArch, seq_len: int, kv_dtype_bytes: float) -> float:
    """Cache of one sequence of `seq_len` tokens:
    per_layer * (full_layers * seq_len + window_layers * min(window, seq_len))."""
    per_layer = kv_bytes_per_token_per_layer(arch, kv_dtype_bytes)
    full = full_attention_layers(arch)
    windowed = arch.layers - full
    window_tokens = min(arch.sliding_window, seq_len) if windowed else 0
    return per_layer * (full * seq_len + windowed * window_tokens)
