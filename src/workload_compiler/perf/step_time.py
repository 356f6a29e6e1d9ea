"""Training step time from the layout, the model and the machine: MFU is an output.

One optimizer step of a pipeline runs m = global_batch / (dp * mbs) micro-batches through each
stage (1F1B, Narayanan et al. 2021, arXiv:2104.04473 §2.2):

    step = m * t_mb + (pp-1)/vp * t_mb + p2p + exposed DP communication + optimizer

t_mb is one micro-batch on the slowest stage (L/pp layers plus the output head): the GEMMs at
the shape-dependent efficiency of perf/efficiency.py (forward, 2x backward, +1 forward under full
recompute), the flash-attention core (forward, 2.5x backward as FlashAttention recomputes the
scores, +1 forward under selective or full recompute) at a fitted fraction of the BF16 peak,
memory-bound kernels over HBM, tensor-parallel all-reduces, the context-parallel KV ring beyond
what the attention core hides, and the expert all-to-alls. Collectives come from
perf/collectives.py; fitted constants from perf/fitted.py. Everything broadcasts over the
`Layout` arrays: one layout or a million run the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arch.counts import (
    attention_flops_per_token,
    attention_params,
    param_counts,
    training_flops_per_token,
)
from ..arch.model import ModelArch
from ..errors import InputError
from . import collectives as coll
from .efficiency import gemm_time_s, memory_bound_s
from .fitted import FITTED, TrainingConstants
from .layout import FloatArray, Hardware, Layout, TrainingSetup

STEP_TERMS = ("compute", "memory_bound", "tp_comm", "cp_comm_exposed", "ep_comm",
              "pp_bubble", "pp_p2p", "dp_comm_exposed", "optimizer")

GRAD_REDUCE_BYTES = 4.0   # fp32 gradient reduction (Megatron grad_reduce_in_fp32, torchtitan default)
PARAM_GATHER_BYTES = 2.0  # bf16 parameter all-gather (distributed optimizer, FSDP)
ADAM_BYTES_PER_PARAM = 30.0  # read fp32 p, g, m, v (16) + write p, m, v (12) + write bf16 p (2)


@dataclass(frozen=True, kw_only=True)
class LayerShapes:
    """The GEMM widths of one layer, from the architecture (per model, before any sharding)."""

    qkv_out: float            # output width of the fused q/k/v projection (MLA: all its factors)
    o_in: float               # input width of the output projection (heads x v head dim)
    up_factor: float          # 2 for gated MLPs (gate + up), 1 otherwise
    ffn: float
    dense_layers: int
    moe_layers: int
    experts: float
    top_k: float
    expert_ffn: float
    shared_experts: float
    shared_ffn: float
    vocab: float
    kv_dim: float             # K and V widths a context-parallel rank passes on (all heads)
    kv_heads_for_split: float # heads that tensor parallelism can split K/V over


def layer_shapes(a: ModelArch) -> LayerShapes:
    h = a.hidden_size
    d_v = a.mla_v_head_dim if a.is_mla else a.head_dim
    o_in = a.attention_heads * d_v
    qkv_out = (attention_params(a) - o_in * h) / h
    if a.is_mla:
        kv_dim, kv_split = a.attention_heads * (a.mla_qk_nope_head_dim + a.mla_qk_rope_head_dim + d_v), a.attention_heads
    else:
        kv_dim, kv_split = 2 * a.kv_heads * a.head_dim, a.kv_heads
    return LayerShapes(
        qkv_out=qkv_out, o_in=o_in, up_factor=2.0 if a.gated else 1.0, ffn=a.ffn_hidden_size,
        dense_layers=a.dense_mlp_layers, moe_layers=a.moe_layers, experts=max(a.moe_experts, 1),
        top_k=a.moe_top_k, expert_ffn=a.moe_ffn_hidden_size, shared_experts=a.moe_shared_experts,
        shared_ffn=a.moe_shared_ffn_hidden_size or a.moe_ffn_hidden_size, vocab=a.vocab_size,
        kv_dim=kv_dim, kv_heads_for_split=kv_split)


@dataclass(frozen=True, kw_only=True)
class StepResult:
    step_time_s: FloatArray
    breakdown_s: dict[str, FloatArray]     # STEP_TERMS; they add up to step_time_s
    tokens_per_s: FloatArray               # whole job
    model_flops_per_gpu_per_s: FloatArray  # model FLOPs (no recompute), causal attention
    mfu: FloatArray                        # against the dense peak of the training precision's GEMMs
    mfu_bf16: FloatArray                   # against the dense BF16 peak (= mfu unless fp8/fp4)


def gemm_precision(setup: TrainingSetup, hw: Hardware) -> tuple[float, float]:
    """(dense peak FLOP/s, bytes per element) of the GEMMs at the training precision."""
    p = setup.precision
    if p in ("bf16", "fp16"):
        return hw.peak_flops_bf16, 2.0
    peak = hw.peak_flops_fp8 if p in ("fp8", "mxfp8") else hw.peak_flops_fp4 if p == "nvfp4" else None
    if p not in ("fp8", "mxfp8", "nvfp4"):
        raise InputError("precision", p, "one of bf16, fp16, fp8, mxfp8, nvfp4")
    if peak is None:
        raise InputError("precision", p, f"{hw.accelerator_id} publishes no dense {p} peak; use bf16")
    return peak, 1.0 if p in ("fp8", "mxfp8") else 0.5


def training_step(arch: ModelArch, setup: TrainingSetup, layout: Layout, hw: Hardware,
                  constants: TrainingConstants = FITTED) -> StepResult:
    """Step time and its breakdown for every layout of `layout` (see the module docstring)."""
    k = constants
    f64 = np.float64
    tp, pp, dp, cp = (np.asarray(x, dtype=f64) for x in (layout.tp, layout.pp, layout.dp, layout.cp))
    ep, etp, vp, mbs = (np.asarray(x, dtype=f64) for x in (layout.ep, layout.etp, layout.vp, layout.mbs))
    full = np.asarray(layout.recompute == 2, dtype=f64)
    recompute_attn = np.asarray(layout.recompute >= 1, dtype=f64)
    seq = float(setup.seq_len)
    tok = mbs * seq / cp                                     # GEMM rows per micro-batch per GPU
    micro = setup.global_batch_size / (dp * mbs)            # micro-batches per step
    peak, b = gemm_precision(setup, hw)
    hbm = hw.hbm_bandwidth_bytes_per_s

    def gemm(m: FloatArray, n: FloatArray, kk: FloatArray) -> FloatArray:
        """One GEMM kernel of (m x kk) @ (kk x n) on one GPU."""
        return gemm_time_s(2.0 * m * n * kk, peak_flops=peak, e_max=k.gemm_e_max,
                           kernel_overhead_s=k.gemm_kernel_overhead_s)

    s: LayerShapes = layer_shapes(arch)
    h = float(arch.hidden_size)

    def mlp(m: FloatArray, ffn: float, split: FloatArray) -> FloatArray:
        """Up (gate+up when gated) and down projections: two GEMM kernels."""
        return np.asarray(gemm(m, s.up_factor * ffn / split, h) + gemm(m, h, ffn / split))

    # Forward GEMM time of one layer for one micro-batch on one GPU.
    attn_gemm = gemm(tok, s.qkv_out / tp, h) + gemm(tok, h, s.o_in / tp)
    dense_mlp = mlp(tok, s.ffn, tp)
    routed_tok = tok / tp * s.top_k                      # token copies per GPU after dispatch (SP)
    # Routed experts: one grouped GEMM per projection over the local experts' tokens; its
    # efficiency follows one expert's shape (tokens per expert = routed tokens x ep x etp / E).
    moe_mlp = 0.0 * tok
    if s.moe_layers:
        per_expert = routed_tok * etp * ep / s.experts
        local = s.experts / ep
        moe_mlp = (local * (gemm(per_expert, s.up_factor * s.expert_ffn / etp, h)
                            + gemm(per_expert, h, s.expert_ffn / etp))
                   - (2 * local - 2) * k.gemm_kernel_overhead_s           # two grouped kernels, not 2 x local
                   + s.shared_experts * mlp(tok, s.shared_ffn, tp) + gemm(tok / tp, s.experts + 0 * tok, h))
    head = gemm(tok, s.vocab / tp, h)
    if setup.flash_attention:       # fused core at a fraction of the BF16 peak; backward = 2.5x forward
        core = attention_flops_per_token(arch, setup.seq_len, causal=True) / arch.layers * tok / tp
        core_s = core / (hw.peak_flops_bf16 * k.attention_eff)
        core_passes = 3.5 + recompute_attn
        scores = 0.0 * tok
    else:                           # unfused: two batched GEMMs over the full s x s, softmax in HBM
        core = attention_flops_per_token(arch, setup.seq_len, causal=False) / arch.layers * tok / tp
        core_s = 2 * gemm(tok / tp * arch.attention_heads, seq, float(arch.head_dim)) * core / (
            2 * 2.0 * tok / tp * arch.attention_heads * seq * arch.head_dim)
        core_passes = 3.0 + recompute_attn
        # scores per layer: heads/tp x tokens x seq elements; fwd softmax+dropout 9 B/element,
        # bwd 11 B/element, a recompute repeats the forward (Korthikanti et al. 2022 §4.2).
        scores = arch.attention_heads / tp * tok * seq * (20.0 + 9.0 * recompute_attn)

    # Memory-bound bytes of one layer's forward: counted element traffic x fitted multiplier.
    h_act = np.where(layout.sp, h / tp, h)                # norms/residuals: split by SP only
    elems = 10 * h_act + 2 * s.qkv_out / tp              # 2 norms, 2 residual adds; rotary on q, k
    dense_el = elems + (s.up_factor + 1) * s.ffn / tp    # activation (and gating)
    moe_el = (elems + s.top_k / tp * ((s.up_factor + 1) * s.expert_ffn + 4 * h)   # + permute/unpermute
              + s.shared_experts * (s.up_factor + 1) * s.shared_ffn / tp)
    # FP8: every GEMM input is cast (and transposed for the backward GEMMs), read 2 B, write 2 x 1 B.
    cast = 4.0 * (2 * h_act + s.o_in / tp + s.ffn / tp) if b < 2 else 0.0 * tp
    dense_frac = s.dense_layers / arch.layers
    el_bytes = 2.0 * (dense_frac * dense_el + (1 - dense_frac) * moe_el) + cast
    mem_layer = k.elementwise_mult * tok * el_bytes
    loss_bytes = tok * s.vocab / tp * 4.0 * 3.0             # fp32 logits: softmax fwd, bwd

    # One stage: L/pp layers, with the output head and loss spread over the stages as balanced
    # recipes do (uneven first/last stages: Llama 3 paper §3.3.2; NeMo account_for_*_in_pipeline_split).
    layers = arch.layers / pp
    gemm_passes = 3.0 + full
    compute_mb = (gemm_passes * layers * (attn_gemm + dense_frac * dense_mlp + (1 - dense_frac) * moe_mlp)
                  + 3.0 * head / pp + core_passes * layers * core_s)
    memory_mb = memory_bound_s((3.0 + full) * layers * mem_layer + layers * scores
                               + k.elementwise_mult * loss_bytes / pp, hbm)

    # Tensor parallel: per layer 2 all-reduces forward, 2 backward, 2 more under full recompute (with
    # sequence parallelism each is a reduce-scatter + all-gather: the same bytes). A fitted share
    # stays exposed (some frameworks overlap part of it with the GEMMs, most do not).
    tp_mb = k.tp_exposed * layers * (4.0 + 2.0 * full) * coll.group_all_reduce_s(tok * h * 2.0, tp, 1, hw)
    kv_bytes = tok * s.kv_dim / np.minimum(tp, s.kv_heads_for_split) * 2.0
    bw, lat = coll.link_bw_latency(tp * cp, hw)
    hop = (cp - 1.0) * coll.p2p_s(kv_bytes, bw, lat) * (cp > 1)
    cp_mb = layers * (_exposed(hop, core_s, k) * (1.0 + full) + _exposed(2 * hop, 2.5 * core_s, k))
    a2a = coll.group_all_to_all_s(routed_tok * h * 2.0, ep, etp, hw)
    ep_mb = (1 - dense_frac) * layers * (4.0 + 2.0 * full) * a2a

    t_mb = compute_mb + memory_mb + tp_mb + cp_mb + ep_mb
    bubble = (pp - 1.0) / vp * t_mb
    bw, lat = coll.link_bw_latency(tp * cp * dp * pp, hw)
    p2p = np.where(pp > 1, 2.0 * vp * micro * coll.p2p_s(tok * h * 2.0 / tp, bw, lat), 0.0)

    dp_exposed, optimizer = _data_parallel(arch, layout, hw, t_mb, micro, full, k)
    terms = {"compute": micro * compute_mb, "memory_bound": micro * memory_mb,
             "tp_comm": micro * tp_mb,
             "cp_comm_exposed": micro * cp_mb, "ep_comm": micro * ep_mb, "pp_bubble": bubble,
             "pp_p2p": p2p, "dp_comm_exposed": dp_exposed, "optimizer": optimizer}
    shape = layout.shape
    breakdown = {name: np.broadcast_to(np.asarray(v, dtype=f64), shape) for name, v in terms.items()}
    step = np.asarray(sum(breakdown.values()), dtype=f64)
    tokens_per_s = setup.global_batch_size * seq / step
    flops = tokens_per_s * training_flops_per_token(arch, setup.seq_len, causal=True) / layout.gpus
    return StepResult(step_time_s=step, breakdown_s=breakdown, tokens_per_s=tokens_per_s,
                      model_flops_per_gpu_per_s=flops, mfu=flops / peak, mfu_bf16=flops / hw.peak_flops_bf16)


def _exposed(comm_s: FloatArray, window_s: FloatArray, k: TrainingConstants) -> FloatArray:
    """Communication left on the critical path when it runs beside `window_s` of compute: what
    does not fit in the window, plus the contention share of what does (NCCL kernels take SMs
    and HBM bandwidth from the compute they overlap)."""
    hidden = np.minimum(comm_s, window_s)
    return np.asarray(comm_s - hidden + k.overlap_contention * hidden)


def _data_parallel(arch: ModelArch, layout: Layout, hw: Hardware, t_mb: FloatArray, micro: FloatArray,
                   full: FloatArray, k: TrainingConstants) -> tuple[FloatArray, FloatArray]:
    """(exposed gradient/parameter communication, optimizer step) per step.

    ZeRO 0: all-reduce of the gradients after the last micro-batch, hidden behind its backward.
    ZeRO 1/2 (distributed optimizer): reduce-scatter of gradients behind the last backward and
    all-gather of the parameters behind the next step's first forward (Megatron
    --overlap-grad-reduce / --overlap-param-gather). ZeRO 3 / FSDP: every micro-batch gathers the
    parameters for forward and again for backward and reduce-scatters the gradients, each
    hidden behind that pass's compute. Dense weights sync over dp*cp; experts over the
    expert-data-parallel group tp*cp*dp/(ep*etp).
    """
    c = param_counts(arch)
    f64 = np.float64
    tp, pp, dp, cp = (np.asarray(x, dtype=f64) for x in (layout.tp, layout.pp, layout.dp, layout.cp))
    ep_etp = np.asarray(layout.ep * layout.etp, dtype=f64)
    ends = max(c.embedding, c.output_head)
    dense = ((c.non_expert_params - c.embedding - c.output_head) / pp + ends) / tp
    expert = c.expert_params / pp / ep_etp
    n_dense, n_exp = dp * cp, dp * cp * tp / ep_etp

    def sync(bytes_per_param: float) -> FloatArray:
        """Reduce-scatter (or all-gather: the same cost) of every parameter of the stage."""
        rs = coll.group_reduce_scatter_s
        return np.asarray(rs(dense * bytes_per_param, n_dense, tp, hw) + rs(expert * bytes_per_param, n_exp, ep_etp, hw))

    grads_rs = sync(GRAD_REDUCE_BYTES)
    params_ag = sync(PARAM_GATHER_BYTES)
    w_fwd = t_mb / (3.0 + full)
    w_bwd = t_mb - w_fwd
    zero = layout.zero
    exposed = np.where(
        zero >= 3,
        micro * (_exposed(params_ag, w_fwd, k) + _exposed(params_ag + grads_rs, w_bwd, k)),
        np.where(zero >= 1, _exposed(grads_rs, w_bwd, k) + _exposed(params_ag, w_fwd, k),
                 _exposed(2.0 * grads_rs, w_bwd, k)))   # all-reduce = reduce-scatter + all-gather
    shard_dense = np.where(zero >= 1, n_dense, 1.0)
    shard_exp = np.where(zero >= 1, n_exp, 1.0)
    optimizer = memory_bound_s(ADAM_BYTES_PER_PARAM * (dense / shard_dense + expert / shard_exp),
                               hw.hbm_bandwidth_bytes_per_s)
    return np.asarray(exposed), np.asarray(optimizer)
