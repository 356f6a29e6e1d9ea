"""The saved tensors of each block kind: attention (MHA/GQA/MLA, flash or not), MLP, Mamba-2 (or Gated
DeltaNet), mixture of experts; a hybrid's blocks with their shares per layer (perf/activations.py
assembles a layer from them under each recompute policy)."""

from __future__ import annotations

import dataclasses

from ..arch.counts import head_dims
from ..arch.model import ModelArch
from .saved_tensors import ACT_BYTES, MASK_BYTES, STAT_BYTES, SavedTensor, Sharding


def attention_tensors(a: ModelArch, flash: bool, dropout: bool, gemm_in: float,
               ) -> tuple[list[SavedTensor], list[SavedTensor]]:
    """Saved tensors of the attention block, and its matmul outputs in forward order."""
    h, heads = a.hidden_size, a.attention_heads
    t: list[SavedTensor] = [
        SavedTensor("norm1_in", ACT_BYTES * h, "replicated", "layer_in"),
        SavedTensor("attn_linear_in", gemm_in * h, "replicated", "linear_in"),
    ]
    if a.is_mla:
        qk, v = head_dims(a)
        q_dim, k_dim, v_dim = heads * qk, heads * qk, heads * v
        mm: list[SavedTensor] = []
        if a.mla_q_lora_rank:
            r = a.mla_q_lora_rank
            t += [SavedTensor("q_norm_in", ACT_BYTES * r, "replicated", "norm"),
                  SavedTensor("q_up_in", gemm_in * r, "replicated", "linear_in")]
            mm.append(SavedTensor("q_down", ACT_BYTES * r, "replicated", "mm_out"))
        r = a.mla_kv_lora_rank
        t += [SavedTensor("kv_norm_in", ACT_BYTES * r, "replicated", "norm"),
              SavedTensor("kv_up_in", gemm_in * r, "replicated", "linear_in")]
        mm += [SavedTensor("q_up", ACT_BYTES * q_dim, "tp", "mm_out"),
               SavedTensor("kv_down", ACT_BYTES * (r + a.mla_qk_rope_head_dim), "replicated", "mm_out"),
               SavedTensor("kv_up", ACT_BYTES * heads * (a.mla_qk_nope_head_dim + a.mla_v_head_dim),
                           "tp", "mm_out")]
    else:
        q_dim = v_dim = heads * a.head_dim
        k_dim = a.kv_heads * a.head_dim
        mm = [SavedTensor("wq", ACT_BYTES * q_dim, "tp", "mm_out"),
              SavedTensor("wk", ACT_BYTES * k_dim, "tp", "mm_out"),
              SavedTensor("wv", ACT_BYTES * k_dim, "tp", "mm_out")]
    v_stored = v_dim if a.is_mla else k_dim    # GQA: V has kv_heads x head_dim like K
    t += [SavedTensor("q", ACT_BYTES * q_dim, "tp", "attn_qkv"),
          SavedTensor("k", ACT_BYTES * k_dim, "tp", "attn_qkv"),
          SavedTensor("v", ACT_BYTES * v_stored, "tp", "attn_qkv")]
    if flash:
        t.append(SavedTensor("softmax_lse", STAT_BYTES * heads, "tp", "attn_core"))
    else:
        t.append(SavedTensor("softmax_out", ACT_BYTES * heads, "score", "attn_core"))
        if dropout:
            t += [SavedTensor("attn_dropout_mask", MASK_BYTES * heads, "score", "attn_core"),
                  SavedTensor("attn_dropout_out", ACT_BYTES * heads, "score", "attn_core")]
    t.append(SavedTensor("attn_out", ACT_BYTES * v_dim, "tp", "attn_out"))
    if gemm_in != ACT_BYTES:     # the out-projection keeps its own low-precision copy of it
        t.append(SavedTensor("attn_proj_in", gemm_in * v_dim, "tp", "attn_out"))
    if dropout:
        t.append(SavedTensor("attn_resid_dropout_mask", MASK_BYTES * h, "replicated", "mask"))
    mm.append(SavedTensor("wo", ACT_BYTES * h, "replicated", "mm_out"))
    return t, mm


def mlp_tensors(a: ModelArch, ffn: float, sharding: Sharding, in_sharding: Sharding, prefix: str, gemm_in: float,
         width: int | None = None) -> tuple[list[SavedTensor], list[SavedTensor]]:
    """fc1 output (gate and up for gated MLPs) and activation output (fc2's input) of one MLP of
    width ffn, its output `width` wide (the hidden size, or a latent MoE's expert width)."""
    hidden = (2 if a.gated else 1) * ACT_BYTES * ffn
    t = [SavedTensor(f"{prefix}fc1_out", hidden, sharding, "mlp_hidden"),
         SavedTensor(f"{prefix}act_out", gemm_in * ffn, sharding, "act")]
    if a.clamps_glu:
        # a clamped GLU (perf/step_time.py glu_clamp_elements): the clamps keep their input, fc1's
        # output, and the fused activation saves the clamped copy it was given
        t.append(SavedTensor(f"{prefix}clamped_in", hidden, sharding, "act"))
    names = ("w1", "w3") if a.gated else ("w1",)
    mm = [SavedTensor(f"{prefix}{n}", ACT_BYTES * ffn, sharding, "mm_out") for n in names]
    mm.append(SavedTensor(f"{prefix}w2", ACT_BYTES * (width or a.hidden_size), in_sharding, "mm_out"))
    return t, mm


def mamba_tensors(a: ModelArch, gemm_in: float) -> tuple[list[SavedTensor], list[SavedTensor]]:
    """Saved tensors of one Mamba-2 block (Megatron-Core MambaMixer on mamba_ssm's fused
    mamba_split_conv1d_scan_combined, which saves the in_proj output zxbcdt and the scan output and
    recomputes the conv and the chunk states in backward), and its matmul outputs."""
    h, inner, width = a.hidden_size, a.mamba_inner, a.mamba_in_proj_width
    t = [SavedTensor("mamba_norm_in", ACT_BYTES * h, "replicated", "layer_in"),
         SavedTensor("mamba_linear_in", gemm_in * h, "replicated", "linear_in"),
         SavedTensor("zxbcdt", ACT_BYTES * width, "tp", "mamba"),
         SavedTensor("ssm_out", ACT_BYTES * inner, "tp", "mamba"),
         SavedTensor("mamba_out_proj_in", gemm_in * inner, "tp", "linear_in")]
    mm = [SavedTensor("in_proj", ACT_BYTES * width, "tp", "mm_out"),
          SavedTensor("out_proj", ACT_BYTES * h, "replicated", "mm_out")]
    return t, mm


def scaled(tensors: list[SavedTensor], share: float) -> list[SavedTensor]:
    return [dataclasses.replace(x, bytes_per_token=x.bytes_per_token * share) for x in tensors]


def hybrid_blocks(a: ModelArch, flash: bool, gemm_in: float, probs_in_activation: bool = False,
                   ) -> list[tuple[float, list[SavedTensor], list[SavedTensor]]]:
    """(share per layer, saved tensors, matmul outputs) of a hybrid's block kinds; each block's
    input is a layer input (full recompute keeps one per block)."""
    def block_input(name: str) -> list[SavedTensor]:
        return [SavedTensor(f"{name}_norm_in", ACT_BYTES * a.hidden_size, "replicated", "layer_in"),
                SavedTensor(f"{name}_linear_in", gemm_in * a.hidden_size, "replicated", "linear_in")]

    at, amm = attention_tensors(a, flash, False, gemm_in)
    mt, mmm = mlp_tensors(a, a.ffn_hidden_size, "tp", "replicated", "", gemm_in)
    st, smm = mamba_tensors(a, gemm_in)
    blocks = [(a.attention_share, at, amm), (a.mlp_share, block_input("mlp") + mt, mmm),
              (a.mamba_share, st, smm)]
    if a.is_moe:
        et, emm = moe_tensors(a, gemm_in, probs_in_activation)
        blocks.append((a.moe_share, block_input("moe") + et, emm))
    return blocks


def moe_tensors(a: ModelArch, gemm_in: float, probs_in_activation: bool,
               ) -> tuple[list[SavedTensor], list[SavedTensor]]:
    """Saved tensors and matmul outputs of a mixture of experts (router, shared and routed experts)."""
    t: list[SavedTensor] = []
    mm: list[SavedTensor] = []
    # Router (Megatron-Core router.py, fp32 router): the softmax/sigmoid output over the E experts
    # is saved for its backward (4 B each), the bool routing map [tokens, E] is kept for the
    # permutation and the combine (1 B each); both on the layer's own tokens.
    t += [SavedTensor("router_probs", STAT_BYTES * a.moe_experts, "replicated", "moe_misc"),
          SavedTensor("routing_map", MASK_BYTES * a.moe_experts, "replicated", "moe_misc")]
    mm.append(SavedTensor("router", STAT_BYTES * a.moe_experts, "replicated", "mm_out"))
    if a.moe_shared_experts:
        f_sh = a.moe_shared_experts * (a.moe_shared_ffn_hidden_size or a.moe_ffn_hidden_size)
        st, smm = mlp_tensors(a, f_sh, "tp", "replicated", "shared_", gemm_in)
        t += st
        mm += smm
    # Per routed (token, expert) pair: the permuted token as the grouped GEMM's fc1 input, and
    # the expert output the probability-weighted combine saves for the gradient of the probs
    # (moe_utils.unpermute: permuted_tokens * permuted_probs) - unless the probs weigh the
    # activation inside the experts (`probs_in_activation`: Megatron-Core's experts.py
    # activation_func_with_probs, act(fc1) * probs before fc2; the combine then keeps nothing).
    # a latent MoE dispatches and multiplies its tokens at the latent width; its up projection keeps
    # its input (the combined latent tokens) for the weight gradient
    w = a.moe_width
    t.append(SavedTensor("expert_in", gemm_in * w, "expert_in", "linear_in"))
    if not probs_in_activation:
        t.append(SavedTensor("expert_out", ACT_BYTES * w, "expert_in", "moe_misc"))
    if a.moe_latent_size:
        t.append(SavedTensor("latent_up_in", gemm_in * a.moe_latent_size, "replicated", "linear_in"))
    et, emm = mlp_tensors(a, a.moe_ffn_hidden_size, "expert_hidden", "expert_in", "expert_", gemm_in, w)
    t += et
    mm += emm
    return t, mm
