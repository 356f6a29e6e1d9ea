"""Activation bytes one transformer layer keeps for its backward pass, derived tensor by tensor.

Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
arXiv:2205.05198, §4.1 and Table 2) count, per layer of a GPT block (LayerNorm, MHA, GeLU MLP
with ffn = 4h, dropout), the tensors each op saves for its backward pass, in bytes per token
(16-bit activations, 1-byte dropout masks):

    attention  QKV-linear input 2h, Q and K 4h, V 2h, softmax output 2as, dropout mask as,
               dropout output 2as, out-projection input 2h, dropout mask h  -> 11h + 5as
    MLP        fc1 input 2h, GeLU input 8h, fc2 input 8h, dropout mask h    -> 19h
    norms      two LayerNorm inputs                                         -> 4h
    total      34h + 5as  (no parallelism);  Table 2 splits it by tensor parallelism t into
               10h (replicated: norm and linear inputs, masks) + 24h/t + 5as/t, and sequence
               parallelism divides the replicated part by t as well: 34h/t + 5as/t.

We write the same list for any layer this package models instead of hard-coding 34 (the tests
check that a GPT layer gives exactly 34 and 5as): GQA (K and V have kv_heads x head_dim),
gated MLPs (fc1 holds gate and up: 2 x 2f, the fused SwiGLU of Megatron-Core/Transformer
Engine saves its input only, then fc2 input 2f), MoE (router logits fp32, and per routed
(token, expert) pair the dispatched input 2h, expert hidden 6f or 4f, the expert output 2h kept
for the probability-weighted combine), MLA (the low-rank q/kv paths and their norms). Modern
models have no dropout. With FlashAttention (Dao et al. 2022, arXiv:2205.14135) the s x s
softmax is never stored: the kernel saves its output and the fp32 log-sum-exp (4 bytes per head
per token) and recomputes the scores in backward, so the 5as term does not exist. Megatron-Core
and torchtitan always use it; it is the default here.

Under FP8/MXFP8/NVFP4 training with Transformer Engine (the framework profile's
`lowp_saved_gemm_inputs`), each GEMM keeps its input for the weight gradient in the low-precision
format it fed the forward GEMM (1 B per element for FP8; `gemm_input_bytes`): the linear inputs
after the norms, the out-projection's input (a copy beside the 16-bit attention output the kernel's
backward reads), the fc2 inputs; torchao's Float8Linear (torchtitan) keeps them in 16 bit.

A tensor's `sharding` says what divides it: "replicated" (t only with sequence parallelism),
"tp" (always t), "score" (bytes per token per attended key, / t), "expert_in" and
"expert_hidden" (per routed pair; see `ActivationCoefficients`).

Recompute policies (what stays stored between forward and backward):
    none            everything above
    attention_core  Korthikanti's selective recompute: the attention core (scores, softmax,
                    dropout, FlashAttention statistics) is recomputed; Q, K, V are kept.
                    Megatron-Core's default `--recompute-granularity selective` is this.
    op_sac          PyTorch per-op selective checkpointing as torchtitan configures it
                    (torchtitan parallelize_llama.py `_save_list`, policy "op"): keep the layer
                    input, the attention kernel's outputs and every second matmul output in
                    forward order; recompute norms, activation functions and the other
                    matmuls. This is `Layout.recompute == 3` ("op_selective"); with FlashAttention
                    `attention_core` (`recompute == 1`, "selective") keeps almost all of `none`.
    full            the layer input only (Korthikanti §4.2: 2sbh, / t with sequence parallel).
    modules         Megatron-Core --recompute-modules layernorm moe_act (below).
    mla_up_proj     Megatron-Core --recompute-modules mla_up_proj (multi_latent_attention.py
                    `recompute_up_proj`): the q and kv up-projections' outputs (Q, K, V of the
                    attention core) are dropped after forward and recomputed from the kept low-rank
                    inputs; a model without MLA keeps everything (as `none`). DeepSeek-V3's
                    Megatron-Bridge recipes on B200, GB200 and B300 run it (deepseek_workload_base_configs.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ..arch.model import ModelArch
from .block_tensors import attention_tensors, hybrid_blocks, mlp_tensors, moe_tensors, scaled
from .saved_tensors import ACT_BYTES, MASK_BYTES, ActivationCoefficients, SavedTensor

Policy = Literal["none", "attention_core", "op_sac", "full", "modules", "mla_up_proj"]
POLICIES: tuple[Policy, ...] = ("none", "attention_core", "op_sac", "full", "modules", "mla_up_proj")
LAYOUT_POLICIES: dict[int, Policy] = {0: "none", 1: "attention_core", 2: "full", 3: "op_sac", 4: "modules",
                                      5: "mla_up_proj"}
# Megatron-Core --recompute-modules layernorm moe_act (transformer_config.py recompute_modules): the
# norms' outputs (the inputs of the linear layers after them) and the activation functions' outputs
# are dropped after forward and recomputed from the tensors kept; the dispatched expert inputs stay.
MODULE_RECOMPUTED = ("attn_linear_in", "mlp_linear_in", "q_up_in", "kv_up_in")

def saved_tensors(a: ModelArch, *, moe_layer: bool, flash: bool = True, dropout: bool = False,
                  gemm_in: float = ACT_BYTES, probs_in_activation: bool = False,
                  ) -> tuple[list[SavedTensor], list[SavedTensor]]:
    """(tensors stored without recompute, matmul outputs in forward order) of one layer; `gemm_in`
    is the bytes per element of the inputs the GEMMs keep for their weight gradient (see
    `gemm_input_bytes`). A hybrid's layer is its shares of the three block kinds (arch.model)."""
    h = a.hidden_size
    if a.is_hybrid:      # every layer of a hybrid with MoE blocks is of the MoE kind
        blocks = hybrid_blocks(a, flash, gemm_in, probs_in_activation)
        return ([x for share, bt, _ in blocks for x in scaled(bt, share)],
                [x for share, _, bm in blocks for x in scaled(bm, share)])
    t, mm = attention_tensors(a, flash, dropout, gemm_in)
    t += [SavedTensor("norm2_in", ACT_BYTES * h, "replicated", "norm"),
          SavedTensor("mlp_linear_in", gemm_in * h, "replicated", "linear_in")]
    if moe_layer:
        et, emm = moe_tensors(a, gemm_in, probs_in_activation)
        t += et
        mm += emm
    else:
        mt, mmm = mlp_tensors(a, a.ffn_hidden_size, "tp", "replicated", "", gemm_in)
        t += mt
        mm += mmm
    if dropout:
        t.append(SavedTensor("mlp_dropout_mask", MASK_BYTES * h, "replicated", "mask"))
    return t, mm


def policy_tensors(a: ModelArch, policy: Policy, *, moe_layer: bool, flash: bool = True,
                   dropout: bool = False, gemm_in: float = ACT_BYTES,
                   probs_in_activation: bool = False) -> list[SavedTensor]:
    """The tensors one layer keeps between its forward and backward under `policy`."""
    stored, mm = saved_tensors(a, moe_layer=moe_layer, flash=flash, dropout=dropout, gemm_in=gemm_in,
                               probs_in_activation=probs_in_activation)
    if policy == "none":
        return stored
    if policy == "attention_core":
        return [x for x in stored if x.group != "attn_core"]
    if policy == "full":
        return [x for x in stored if x.group == "layer_in"]
    if policy == "modules":
        return [x for x in stored if x.name not in MODULE_RECOMPUTED and x.group != "act"]
    if policy == "mla_up_proj":
        return [x for x in stored if not (a.is_mla and x.group == "attn_qkv")]
    if policy == "op_sac":
        # torchtitan's op policy: MUST_SAVE for mm (except every second one), the SDPA kernel
        # outputs (attention output + log-sum-exp); the checkpoint keeps its input.
        keep = [x for x in stored if x.group == "layer_in"
                or x.group == "attn_out" or (flash and x.group == "attn_core")]
        return keep + mm[0::2]
    raise ValueError(f"unknown recompute policy {policy!r}; allowed: {POLICIES}")


def layer_bytes(c: ActivationCoefficients, *, tokens: float, ctx: float, tp: float, sp: bool,
                etp: float = 1.0, top_k: float = 0.0) -> float:
    """Bytes of one layer and micro-batch on one GPU: the formula of ActivationCoefficients
    (perf/memory.py evaluates the same formula on whole grids)."""
    replicated = c.replicated / (tp if sp else 1.0)
    return tokens * (replicated + (c.tp + c.score * ctx + top_k * c.expert_hidden) / tp
                     + top_k * c.expert_in * etp / tp)


def coefficients(tensors: list[SavedTensor]) -> ActivationCoefficients:
    """Sum the tensors by sharding."""
    acc = {"replicated": 0.0, "tp": 0.0, "score": 0.0, "expert_in": 0.0, "expert_hidden": 0.0}
    for x in tensors:
        acc[x.sharding] += x.bytes_per_token
    return ActivationCoefficients(**acc)


@dataclass(frozen=True)
class LayerActivations:
    """Per-token coefficients of a layer kind: what stays stored under each policy, and the
    transient working set of its backward pass (recomputed tensors plus activation gradients)."""

    stored: dict[Policy, ActivationCoefficients]
    recomputed: dict[Policy, ActivationCoefficients]
    gradients: ActivationCoefficients


@lru_cache(maxsize=128)       # ModelArch is frozen (hashable); compile calls this per layout
def layer_activations(a: ModelArch, *, moe_layer: bool, flash: bool = True,
                      dropout: bool = False, gemm_in: float = ACT_BYTES,
                      probs_in_activation: bool = False) -> LayerActivations:
    """Coefficients for every policy. In backward a recomputing layer materializes its whole
    no-recompute set again (an upper bound for op_sac, exact for full), and the gradients of the
    MLP hidden and activation outputs are live together (largest activation-gradient moment)."""
    full_set = policy_tensors(a, "none", moe_layer=moe_layer, flash=flash, dropout=dropout, gemm_in=gemm_in,
                              probs_in_activation=probs_in_activation)
    stored = {p: coefficients(policy_tensors(a, p, moe_layer=moe_layer, flash=flash, dropout=dropout,
                                             gemm_in=gemm_in, probs_in_activation=probs_in_activation))
              for p in POLICIES}
    everything = coefficients(full_set)
    core = coefficients([x for x in full_set if x.group == "attn_core"])
    modules = coefficients([x for x in full_set if x.name in MODULE_RECOMPUTED or x.group == "act"])
    up_proj = coefficients([x for x in full_set if a.is_mla and x.group == "attn_qkv"])
    recomputed: dict[Policy, ActivationCoefficients] = {
        "none": ActivationCoefficients(), "attention_core": core,
        "op_sac": everything, "full": everything, "modules": modules, "mla_up_proj": up_proj}
    grads = coefficients([x for x in full_set if x.group in ("mlp_hidden", "act")])
    if a.is_hybrid:
        # The backward's transients are one block's, not a layer's average: the largest block's
        # whole set under full recompute, and the largest block's gradients.
        def size(c: ActivationCoefficients) -> float:
            return c.replicated + c.tp + a.moe_top_k * (c.expert_in + c.expert_hidden)

        blocks = [bt for share, bt, _ in hybrid_blocks(a, flash, gemm_in, probs_in_activation) if share > 0]
        largest = max((coefficients(bt) for bt in blocks), key=size)
        recomputed |= {"op_sac": largest, "full": largest}
        grads = max((coefficients([x for x in bt if x.group in ("mlp_hidden", "act", "mamba")]) for bt in blocks),
                    key=size)
    return LayerActivations(stored=stored, recomputed=recomputed, gradients=grads)


def moe_dispatch_bytes_per_pair(a: ModelArch) -> tuple[float, float]:
    """Transient token-dispatch buffers of one MoE layer, bytes per routed pair on the GPU:
    (always, extra with expert parallelism). The permuted copy of the tokens exists with or
    without EP (moe_utils.permute: `tokens.index_select`); with ep > 1 the all-to-all's send and
    receive buffers exist at once (token_dispatcher.py MoEAlltoAllTokenDispatcher: permute, then
    all_to_all, then sort_chunks_by_idxs), and the combine and the backward move the same bytes
    the other way. They are freed within the layer, so they add to its working set only."""
    return ACT_BYTES * a.moe_width, 2.0 * ACT_BYTES * a.moe_width
