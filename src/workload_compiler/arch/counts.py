"""Parameter and FLOP counts of a decoder transformer (dense or MoE; MHA, GQA or MLA).

Parameters count the weight matrices, the norms and the embeddings (biases are ignored: the
modern models have none, and for GPT-3 they are < 0.01%). FLOPs count a multiply-add as 2 FLOPs.

Forward FLOPs per token (Kaplan et al. 2020, arXiv:2001.08361, Table 1; Narayanan et al. 2021,
arXiv:2104.04473, Eq. 3):  2 * N_matmul + attention, where N_matmul is the active weight
matrices including the output head (the input embedding is a lookup, not a matmul) and the
attention term per layer is 2 * 2 * ctx * heads * (d_qk + d_v) / 2 ... written out below. A
training step is 3x forward (forward + backward 2x), so training FLOPs per token ≈ 6 N + attention.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import ModelArch


@dataclass(frozen=True, kw_only=True)
class ParamCounts:
    """Parameter counts by part; `total` and `active` are what users quote."""

    embedding: float
    output_head: float
    attention_per_layer: float
    dense_mlp_per_layer: float
    moe_routed_per_layer: float       # all routed experts of one MoE layer
    moe_shared_per_layer: float
    router_per_layer: float           # the router and a latent MoE's two projections
    norms: float
    mtp: float
    total: float
    active: float
    expert_params: float              # all routed-expert weights in the model (sharded by EP)
    non_expert_params: float          # everything else (sharded by TP/PP)


def mla_up_projections(a: ModelArch) -> tuple[float, float]:
    """Weights of multi-latent attention's (q, kv) up-projections: Q from the q low rank (from the
    hidden state when q is not factorized), K-nope and V from the kv low rank (DeepSeek-V2
    arXiv:2405.04434 §2.1.2). The tensors Megatron-Core's mla_up_proj recompute rebuilds."""
    q_up = (a.mla_q_lora_rank or a.hidden_size) * a.attention_heads * head_dims(a)[0]
    kv_up = a.mla_kv_lora_rank * a.attention_heads * (a.mla_qk_nope_head_dim + a.mla_v_head_dim)
    return float(q_up), float(kv_up)


def indexer_params(a: ModelArch) -> float:
    """Weights of one DSA lightning indexer (DeepSeek-V3.2 inference/model.py Indexer): wq_b from the
    q low rank (or the hidden state) to heads x head_dim, wk from the hidden state to one key of
    head_dim, the key's LayerNorm (weight and bias), weights_proj from the hidden state to a weight
    per head; 0 without sparse attention."""
    if not a.sparse_attention_topk:
        return 0.0
    h, d, n = a.hidden_size, a.indexer_head_dim, a.indexer_heads
    return float((a.mla_q_lora_rank or h) * n * d + h * d + 2 * d + h * n)


def attention_params(a: ModelArch) -> float:
    """Weights of one attention block: q, k, v, o projections (MHA/GQA) or the MLA factorization,
    and a sparse attention's indexer."""
    return _dense_attention_params(a) + indexer_params(a)


def _dense_attention_params(a: ModelArch) -> float:
    h = a.hidden_size
    if a.is_mla:
        q_up, kv_up = mla_up_projections(a)
        q_down = h * a.mla_q_lora_rank + a.mla_q_lora_rank if a.mla_q_lora_rank else 0
        kv_down = h * (a.mla_kv_lora_rank + a.mla_qk_rope_head_dim) + a.mla_kv_lora_rank
        o = a.attention_heads * a.mla_v_head_dim * h
        return float(q_down + q_up + kv_down + kv_up + o)
    q = h * a.attention_heads * a.head_dim * (2 if a.attention_output_gate else 1)   # the gate beside q
    kv = 2 * h * a.kv_heads * a.head_dim
    o = a.attention_heads * a.head_dim * h
    return float(q + kv + o)


@dataclass(frozen=True, kw_only=True)
class LayerShapes:
    """GEMM widths of one layer (whole model, before sharding)."""

    qkv_out: float            # output width of the q/k/v projections (MLA: all its factors)
    o_in: float               # input width of the output projection (heads x v head dim)
    up: float                 # 2 for gated MLPs (gate + up), 1 otherwise
    kv_dim: float             # K and V widths a context-parallel rank passes on
    kv_split: float           # heads tensor parallelism can split K/V over


def layer_shapes(a: ModelArch) -> LayerShapes:
    """The GEMM widths of one layer, for the step model and the LoRA adapters beside them."""
    h = a.hidden_size
    d_qk, d_v = head_dims(a)
    o_in = a.attention_heads * d_v
    if a.is_mla:
        kv_dim = a.attention_heads * (d_qk + d_v)
        kv_split = a.attention_heads
    else:
        kv_dim, kv_split = 2 * a.kv_heads * a.head_dim, a.kv_heads
    return LayerShapes(qkv_out=(attention_params(a) - o_in * h) / h, o_in=o_in, up=2.0 if a.gated else 1.0,
                       kv_dim=kv_dim, kv_split=kv_split)


def mlp_params(a: ModelArch, ffn: int, width: int | None = None) -> float:
    """One MLP: gated (SwiGLU/GeGLU) has three width x f matrices, plain has two (width: the hidden
    size, or a latent MoE's expert width)."""
    return float((3 if a.gated else 2) * (width or a.hidden_size) * ffn)


def expert_params(a: ModelArch) -> float:
    """One routed expert, at the experts' width (arch.model moe_width)."""
    return mlp_params(a, a.moe_ffn_hidden_size, a.moe_width)


def latent_projection_params(a: ModelArch) -> float:
    """A latent MoE's down and up projections (hidden <-> latent) of one MoE block; 0 otherwise."""
    return float(2 * a.hidden_size * a.moe_latent_size)


def mamba_params(a: ModelArch) -> float:
    """Weights of one linear mixer. Mamba-2 (Megatron-Core ssm/mamba_mixer.py MambaMixer): in_proj
    h x (2 d_inner + 2 G N + heads), the depthwise conv1d over d_inner + 2 G N channels (kernel +
    bias), A_log, D and dt_bias per head, the gated RMSNorm over d_inner, out_proj d_inner x h.
    Gated DeltaNet (HF Qwen3NextGatedDeltaNet): in_proj h x (2 d_inner + 2 G N + 2 heads), the conv
    without bias, A_log and dt_bias per head, the gated RMSNorm over one head's values (shared by
    the heads), out_proj."""
    if not a.mamba_layers:
        return 0.0
    h, inner, conv = a.hidden_size, a.mamba_inner, a.mamba_conv_channels
    if a.gated_delta:
        return float(h * a.mamba_in_proj_width + conv * a.mamba_conv_kernel + 2 * a.mamba_heads
                     + a.mamba_head_dim + inner * h)
    return float(h * a.mamba_in_proj_width + conv * (a.mamba_conv_kernel + 1) + 3 * a.mamba_heads
                 + inner + inner * h)


def dense_layer_params(a: ModelArch) -> float:
    """Non-expert weights of one layer without routed experts, averaged over a hybrid's layers:
    its shares of attention, dense MLP and Mamba blocks and one norm per block."""
    return (a.attention_share * attention_params(a) + a.mlp_share * mlp_params(a, a.ffn_hidden_size)
            + a.mamba_share * mamba_params(a) + a.blocks_per_layer * a.hidden_size)


def param_counts(a: ModelArch) -> ParamCounts:
    h = a.hidden_size
    embedding = float(a.vocab_size * h)
    output_head = 0.0 if a.tied_embeddings else float(a.vocab_size * h)
    attn = attention_params(a)
    dense_mlp = mlp_params(a, a.ffn_hidden_size)
    routed = a.moe_experts * expert_params(a) if a.is_moe else 0.0
    shared_ffn = a.moe_shared_ffn_hidden_size or a.moe_ffn_hidden_size
    shared = a.moe_shared_experts * mlp_params(a, shared_ffn) if a.is_moe else 0.0
    # the router, and a latent MoE's projections: weights every token passes, beside the experts
    router = float(h * a.moe_experts) + latent_projection_params(a) if a.is_moe else 0.0
    norms = float(a.blocks_per_layer * h * a.layers + h)
    moe_blocks = a.moe_blocks
    body = (a.attention_layers * attn + a.mlp_blocks * dense_mlp + a.mamba_layers * mamba_params(a)
            + moe_blocks * (routed + shared + router) + norms)
    # DeepSeek-V3 MTP module: one extra transformer block plus a 2h x h projection and norms,
    # sharing the embedding and head (arXiv:2412.19437 §2.2).
    mtp_block = attn + (routed + shared + router if a.is_moe else dense_mlp) + 2 * h * h + 4 * h
    mtp = a.mtp_layers * mtp_block
    total = embedding + output_head + body + mtp
    active_routed = a.moe_top_k * expert_params(a) if a.is_moe else 0.0
    active = total - moe_blocks * (routed - active_routed) - (a.mtp_layers * (routed - active_routed))
    expert = (moe_blocks + a.mtp_layers) * routed
    return ParamCounts(
        embedding=embedding, output_head=output_head, attention_per_layer=attn,
        dense_mlp_per_layer=dense_mlp, moe_routed_per_layer=routed, moe_shared_per_layer=shared,
        router_per_layer=router, norms=norms, mtp=mtp, total=total, active=active,
        expert_params=expert, non_expert_params=total - expert,
    )


def _mean_keys(window: float, seq_len: int, causal: bool) -> float:
    """Mean keys a query attends to in a sequence of `seq_len`, with at most `window` keys.

    Causal, full (window >= seq_len): seq_len / 2, the usual convention. Causal, windowed: the
    first `window` positions ramp up, the rest see the whole window: window - window^2 / (2 seq_len).
    Non-causal: min(window, seq_len).
    """
    w = min(window, seq_len)
    if not causal:
        return float(w)
    return w - w * w / (2.0 * seq_len)


def attention_context(a: ModelArch, seq_len: int, causal: bool = False) -> float:
    """Mean keys attended per layer and query: the window on sliding-window layers, the whole
    sequence elsewhere, at most the top-k under sparse attention (a query attends to min(position,
    k) keys: `_mean_keys` with k as the window); `causal` averages over positions (see `_mean_keys`)."""
    full = _mean_keys(a.sparse_attention_topk or seq_len, seq_len, causal)
    if a.sliding_window and a.sliding_window_layers:
        windowed = _mean_keys(a.sliding_window, seq_len, causal)
        return (a.sliding_window_layers * windowed + (a.layers - a.sliding_window_layers) * full) / a.layers
    return full


def attention_flops_per_token(a: ModelArch, seq_len: int, causal: bool = True) -> float:
    """Forward score (QK^T) and mix (AV) FLOPs per token, all layers.

    Per layer and token: 2 * ctx * heads * d_qk (QK^T) + 2 * ctx * heads * d_v (AV), with ctx the
    mean keys attended (`attention_context`): seq_len non-causal, seq_len / 2 causal (what
    FlashAttention computes), at most the window on sliding-window layers. Narayanan et al. Eq. 3
    counts it non-causal.
    """
    d_qk, d_v = head_dims(a)
    ctx = attention_context(a, seq_len, causal)
    return 2.0 * ctx * a.attention_heads * (d_qk + d_v) * a.attention_layers


def head_dims(a: ModelArch) -> tuple[int, int]:
    """(query/key, value) size of one attention head: MLA's nope + rope key and its value head, else
    head_dim for both."""
    if a.is_mla:
        return a.mla_qk_nope_head_dim + a.mla_qk_rope_head_dim, a.mla_v_head_dim
    return a.head_dim, a.head_dim


def indexer_flops_per_key(a: ModelArch) -> float:
    """Forward FLOPs of the DSA lightning indexers for one query and one earlier key, all attention
    layers: heads x head_dim multiply-adds each (0 without sparse attention)."""
    if not a.sparse_attention_topk:
        return 0.0
    return 2.0 * a.indexer_heads * a.indexer_head_dim * a.attention_layers


def indexer_flops_per_token(a: ModelArch, seq_len: int, causal: bool = True) -> float:
    """Forward FLOPs per token of the DSA lightning indexers, all attention layers: each query scores
    every earlier key (causal: seq_len / 2 keys on average). Its projections are weights, counted
    with the matmuls."""
    return _mean_keys(seq_len, seq_len, causal) * indexer_flops_per_key(a)


def ssm_scan_flops_per_token(a: ModelArch) -> float:
    """Forward FLOPs per token of the Mamba-2 scans, all Mamba layers: 7 x d_inner x d_state each,
    Megatron-LM's count for hybrid models (training.py num_floating_point_operations,
    mamba_layer_flops "scan"), so MFU compares with Megatron-Bridge's reported model TFLOP/s. A Gated
    DeltaNet layer is counted alike (value channels x key dim): its recurrent step reads, updates
    and applies a state of that size, about as many multiply-adds per token."""
    return 7.0 * a.mamba_inner * a.mamba_state_dim * a.mamba_layers


def matmul_flops_per_token(a: ModelArch) -> float:
    """Forward weight-matmul FLOPs per token: 2 x active weights in matmuls (head included, the
    embedding lookup and the norms excluded; the router is a matmul and counts). A tied head
    shares the embedding's weights but is still a V x h matmul (Narayanan et al. Eq. 3, V term)."""
    c = param_counts(a)
    tied_head = c.embedding if a.tied_embeddings else 0.0
    return 2.0 * (c.active - c.embedding - c.norms + tied_head)


def forward_flops_per_token(a: ModelArch, seq_len: int, causal: bool = True) -> float:
    return (matmul_flops_per_token(a) + attention_flops_per_token(a, seq_len, causal)
            + indexer_flops_per_token(a, seq_len, causal) + ssm_scan_flops_per_token(a))


def training_flops_per_token(a: ModelArch, seq_len: int, causal: bool = True,
                             adapter_params: float | None = None) -> float:
    """Model FLOPs per trained token: 3 x forward (backward = 2 x forward). Recompute not counted:
    this is the MFU numerator (PaLM, Chowdhery et al. 2022, App. B). With LoRA (`adapter_params`
    trained, every other weight frozen: arch/lora.py) the backward computes the activations'
    gradients but no weight gradients of the frozen layers, so 2 x forward, plus 6 FLOPs per adapter
    parameter (its own forward and backward)."""
    if adapter_params is not None:
        return 2.0 * forward_flops_per_token(a, seq_len, causal) + 6.0 * adapter_params
    return 3.0 * forward_flops_per_token(a, seq_len, causal)
