"""Training step time from the layout, the model and the machine: MFU is an output, never an input.

One optimizer step of a pipeline runs m = global_batch / (dp * mbs) micro-batches through each
stage (1F1B; Narayanan et al. 2021, arXiv:2104.04473 §2.2):

    step = m * t_mb + (pp-1)/vp * t_mb + p2p + exposed DP communication + optimizer

t_mb is one micro-batch on one stage (L/pp layers; head and loss spread over the stages):
- GEMMs (forward, 2x backward, +1 forward under full recompute) at the size-dependent
  efficiency of perf/efficiency.py (its ceiling the fitted one times the GPU's measured gap to the
  median GPU, perf/gemm_precision.py) and the peak of the training precision; with FP8 only the
  GEMMs run at the FP8 peak;
- the attention core: fused (FlashAttention: forward, backward 2.5x as it recomputes the scores,
  +1 forward under any recompute) at a fitted fraction of the BF16 peak times the GPU's measured
  gap to the median GPU, longer where the softmax exponentials bind (perf/attention_rate.py), over
  a packed document's span where documents share a sequence; or unfused (2021-22 Megatron: batched
  GEMMs plus a memory-bound softmax over the s x s scores);
- memory-bound kernels (norms, residuals, activations, rotary, FP8 casts, loss, a clamped GLU's
  clamps) over HBM;
- a fitted exposed share of the tensor-parallel all-reduces, the context-parallel KV ring beyond
  what the attention core hides, and the expert all-to-alls;
- under dropless MoE routing, a fitted floor: an MoE layer takes at least the host's time to issue it.
Collectives come from perf/collectives.py; the fitted constants from perf/fitted.py. Everything
broadcasts over the `Layout` arrays: one layout and a million run the same code.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..arch.counts import (
    attention_flops_per_token,
    layer_shapes,
    mla_up_projections,
    training_flops_per_token,
)
from ..arch.lora import adapter_traffic_elements, lora_adapter_params
from ..arch.model import ModelArch
from . import collectives as coll
from . import offload
from .attention_rate import fused_core_s
from .data_parallel import data_parallel_s, exposed_s
from .efficiency import gemm_time_s, memory_bound_s
from .fitted import FITTED, TrainingConstants
from .gemm_precision import fp4_share, gemm_precision, gemm_speed
from .layout import PEAK_CLASS, FloatArray, Hardware, Layout, TrainingSetup
from .memory import training_memory_detail
from .stages import resolve_stages

STEP_TERMS = ("compute", "memory_bound", "tp_comm", "cp_comm_exposed", "ep_comm",
              "pp_bubble", "pp_p2p", "dp_comm_exposed", "optimizer", "offload_exposed")
MB_TERMS = STEP_TERMS[:5]        # the terms of one micro-batch on one stage

# FlashAttention-1-era kernels (flash-attn 1.x, its Triton port) run at about half the speed of
# FlashAttention-2: "FlashAttention-2 ... around 2x faster than FlashAttention" (Dao 2023,
# arXiv:2307.08691, abstract; 1.7-3.0x in its benchmarks, 1.3-2.5x over the Triton version).
FA1_RELATIVE_SPEED = 0.5


@dataclass(frozen=True, kw_only=True)
class StepResult:
    step_time_s: FloatArray
    breakdown_s: dict[str, FloatArray]     # STEP_TERMS; they add up to step_time_s
    tokens_per_s: FloatArray               # whole job
    model_flops_per_gpu_per_s: FloatArray  # model FLOPs (6N + attention, causal, no recompute)
    mfu: FloatArray                        # against the dense peak of the training precision's GEMMs
    mfu_bf16: FloatArray                   # against the dense BF16 peak (= mfu unless fp8/fp4)


def op_sac_recompute_fraction(a: ModelArch) -> float:
    """Share of a layer's forward matmul FLOPs that per-op selective checkpointing recomputes.

    torchtitan's op-level SAC (parallelize_llama.py `_save_list`, policy "op") saves every second
    matmul output in forward order and recomputes the others: q, k, v, o, then the MLP's
    (gate, up,) down. For Llama 3 8B that is k, o and up: 36.6% of the matmul FLOPs. MoE layers are
    taken at the dense layers' share (their expert GEMMs follow the same save-every-second rule).
    """
    s = layer_shapes(a)
    kv = s.kv_dim / 2.0 if not a.is_mla else s.qkv_out / 3.0
    q = s.qkv_out - 2.0 * kv
    ffn = float(a.ffn_hidden_size or a.moe_ffn_hidden_size)
    widths = [q, kv, kv, s.o_in, *([ffn] * (3 if a.gated else 2))]  # matmul FLOPs are h x width
    return float(sum(w for i, w in enumerate(widths) if i % 2 == 1) / sum(widths))


def glu_clamp_elements(a: ModelArch, forward_again: FloatArray) -> FloatArray:
    """Elements a clamped GLU's clamps move per element of its output width, forward and backward,
    + the forward again under a recompute that reruns the activation; 0 without a clamp.

    Megatron-Core's weighted_bias_quick_geglu_impl (moe/experts.py TEGroupedMLP passes
    activation_func_clamp_value; megatron/core/fusions/fused_bias_geglu.py) chunks fc1's output into
    its gate and linear halves, clamps each and concatenates them before the fused activation
    kernel, as separate PyTorch ops. Forward 8: two clamps read and write a half each (4), the
    concatenation reads and writes both (4). Backward 10: each clamp's gradient reads the incoming
    gradient and its input and writes one half (6), the chunk's gradient joins the halves again (4).
    Counted bytes, like LoRA's adapters, so no fitted multiplier."""
    return (8.0 * (1.0 + forward_again) + 10.0) * a.clamps_glu


def training_step(arch: ModelArch, setup: TrainingSetup, layout: Layout, hw: Hardware,
                  constants: TrainingConstants = FITTED) -> StepResult:
    """Step time, its breakdown, throughput and MFU for every layout of `layout`."""
    k, a, f64 = constants, arch, np.float64
    tp, pp, dp, cp = (np.asarray(x, dtype=f64) for x in (layout.tp, layout.pp, layout.dp, layout.cp))
    ep, etp, vp, mbs = (np.asarray(x, dtype=f64) for x in (layout.ep, layout.etp, layout.vp, layout.mbs))
    full = np.asarray(layout.recompute == 2, dtype=f64)
    any_rc = np.asarray((layout.recompute == 1) | (layout.recompute == 2), dtype=f64)  # attention core again
    sac = np.asarray(layout.recompute == 3, dtype=f64)
    mods = np.asarray(layout.recompute == 4, dtype=f64)     # norms and activation functions again
    up_again = np.asarray(layout.recompute == 5, dtype=f64)  # MLA's q and kv up-projections again
    seq, h = float(setup.seq_len), float(a.hidden_size)
    tok = mbs * seq / cp                                  # GEMM rows per micro-batch per GPU
    micro = setup.global_batch_size / (dp * mbs)         # micro-batches per step
    peak, bytes_el = gemm_precision(setup, hw)
    s = layer_shapes(a)

    e_max, t0 = hw.measured.gemm_constants(setup.precision, k.gemm_e_max * gemm_speed(hw, setup) * fp4_share(hw, setup),
                                           k.gemm_kernel_overhead_s)

    def gemm(flops: FloatArray) -> FloatArray:            # one kernel
        return gemm_time_s(flops, peak_flops=peak, e_max=e_max, kernel_overhead_s=t0)

    def mlp(rows: FloatArray, ffn: float, split: FloatArray, width: float = h) -> FloatArray:   # up (+gate), down
        return np.asarray(gemm(2 * rows * width * s.up * ffn / split) + gemm(2 * rows * width * ffn / split))

    # Forward GEMM time of one layer, one micro-batch, one GPU; a hybrid's layer holds its shares of
    # attention, MLP and Mamba-2 blocks (arch.model attention_share, ...: 1, 1 and 0 in a transformer).
    attn = a.attention_share * (gemm(2 * tok * h * s.qkv_out / tp) + gemm(2 * tok * s.o_in * h / tp))
    # Mamba-2: in_proj (z, x, B, C, dt) and out_proj, column- and row-parallel over tp like q/k/v and o
    # (Megatron-Core MambaMixer); zero in a transformer
    mamba = 0.0 * tok
    if a.mamba_layers:
        mamba = a.mamba_share * (gemm(2 * tok * h * a.mamba_in_proj_width / tp)
                                 + gemm(2 * tok * a.mamba_inner * h / tp))
    # mla_up_proj recompute runs the up-projections (low rank -> Q; low rank -> K nope and V) once
    # more in backward; zero without MLA
    up_proj = 0.0 * tok
    if a.is_mla:
        q_up, kv_up = mla_up_projections(a)
        up_proj = up_again * (gemm(2 * tok * q_up / tp) + gemm(2 * tok * kv_up / tp))
    dense_mlp = a.mlp_share * mlp(tok, a.ffn_hidden_size, tp) if a.mlp_blocks else 0.0 * tok
    # token copies per GPU after dispatch (SP), on the busiest expert rank
    routed = tok / tp * a.moe_top_k * setup.moe_load_imbalance
    moe_mlp = 0.0 * tok
    if a.is_moe:
        # The local experts' GEMMs run one per expert (Transformer Engine GroupedLinear: one GEMM per
        # expert), each with its share of the routed tokens and its own fixed cost. With expert TP a
        # GPU holds 1/etp of each of its experts and sees the tokens of its whole ETP group: etp x
        # the rows, 1/etp of the width. Then the router and the shared experts.
        local = np.maximum(a.moe_experts / ep, 1.0)
        shared_ffn = a.moe_shared_ffn_hidden_size or a.moe_ffn_hidden_size
        # a latent MoE's experts run at the latent width, between its down and up projections
        latent = 2.0 * gemm(2 * tok / tp * h * a.moe_latent_size) if a.moe_latent_size else 0.0 * tok
        moe_mlp = a.moe_share * (local * mlp(routed * etp / local, a.moe_ffn_hidden_size, etp, a.moe_width)
                                 + gemm(2 * tok / tp * h * a.moe_experts) + latent
                                 + a.moe_shared_experts * mlp(tok, shared_ffn, tp))
        if a.is_hybrid:      # every layer of a hybrid is of the MoE kind, with its dense MLP share too
            moe_mlp = moe_mlp + dense_mlp
    head = gemm(2 * tok * h * a.vocab_size / tp)
    if setup.flash_attention:
        core_fwd, core_bwd = fused_core_s(a, setup, hw, k, tok / tp)
        core_passes, scores = 3.5 + any_rc, 0.0 * tok
    else:  # QK^T and AV as batched GEMMs over the full s x s; softmax + dropout through HBM:
        # forward 9 B, backward 11 B per score element, a recompute repeats the forward.
        core_fwd = 2 * gemm(attention_flops_per_token(a, setup.seq_len, causal=False) / a.layers * tok / tp / 2)
        core_bwd = 2.0 * core_fwd
        core_passes = 3.0 + any_rc
        scores = a.attention_heads / tp * tok * seq * (20.0 + 9.0 * any_rc)

    # Memory-bound traffic of one layer's forward: counted elements x fitted multiplier.
    h_act = np.where(layout.sp, h / tp, h)                # norms/residuals: split only by SP
    blocks = a.blocks_per_layer
    # a norm and a residual add per block, rotary on q/k; Mamba-2's conv1d (read and write its
    # channels) and gated norm (read y and z, write)
    elems = (5 * blocks * h_act + a.attention_share * 2 * s.qkv_out / tp
             + a.mamba_share * (2 * a.mamba_conv_channels + 3 * a.mamba_inner) / tp)
    dense_el = elems + a.mlp_share * (s.up + 1) * a.ffn_hidden_size / tp
    moe_el = (elems + a.moe_share * a.moe_top_k * setup.moe_load_imbalance / tp
              * ((s.up + 1) * a.moe_ffn_hidden_size + 4 * a.moe_width) + (dense_el - elems) * a.is_hybrid)
    # FP8: each GEMM input is cast and transposed for the backward: read 2 B, write 2 x 1 B.
    cast = 4.0 * (blocks * h_act + a.attention_share * s.o_in / tp + a.mlp_share * a.ffn_hidden_size / tp
                  + a.mamba_share * a.mamba_inner / tp) * (bytes_el < 2)
    loss_bytes = k.elementwise_mult * tok * a.vocab_size / tp * 12.0   # fp32 logits, fwd + bwd
    # Mamba-2's chunked scan: its kernels' own HBM traffic (counted, so no fitted multiplier), with the
    # attention core's passes (forward, a backward that recomputes the chunk states, + any recompute)
    ssd_bytes = a.mamba_share * tok * 2.0 * a.ssd_scan_elements / tp
    # LoRA's adapters (arch/lora.py): unfused rank-r GEMMs that read their layer's input and add into its
    # output, in each pass (forward, data gradient, the adapters' weight gradient): counted bytes
    lora_bytes = tok * 2.0 * adapter_traffic_elements(a, setup.lora) / tp if setup.lora is not None else 0.0

    # op_selective (per-op checkpointing, perf/activations.py op_sac): every second matmul and the
    # elementwise ops of the forward run again in backward.
    # LoRA (arch/lora.py): the frozen weights take no weight-gradient GEMM, so forward + data gradient
    frozen = 1.0 if setup.lora is not None else 0.0
    passes = 3.0 - frozen + full + sac * op_sac_recompute_fraction(a)
    bw_passes = 3.0 + full + sac
    # TP: per layer 2 all-reduces forward, 2 backward, +2 under full recompute (with SP each is a
    # reduce-scatter + all-gather of the same bytes): in series with the GEMMs, or overlapped with
    # them, leaving what does not fit under the GEMMs and the contention share of what does.
    tp_comm = (blocks / 2.0) * (4.0 + 2.0 * full) * coll.group_all_reduce_s(tok * h * 2.0, tp, 1, hw)
    # CP ring: cp-1 hops of this rank's K/V per layer (forward; backward passes K/V and dK/dV),
    # hidden behind the attention core except for contention.
    bw, lat = coll.link_bw_latency(tp * cp, hw)
    kv = tok * s.kv_dim / np.minimum(tp, s.kv_split) * 2.0
    hop = a.attention_share * (cp - 1.0) * coll.p2p_s(kv, bw, lat) * (cp > 1)
    cp_layer = (1.0 + full) * exposed_s(hop, core_fwd, k) + exposed_s(2 * hop, core_bwd, k)
    if a.mamba_layers:
        # Mamba-2 under cp (Megatron-Core ssm/mamba_context_parallel.py): all-to-alls from sequence to
        # head sharding before the conv and scan (z, x, B, C, dt) and back after (y), forward and
        # backward (+ forward again under full recompute), in series with the layer
        pre = coll.group_all_to_all_s(tok / tp * a.mamba_in_proj_width * 2.0, cp, tp, hw)
        post = coll.group_all_to_all_s(tok / tp * a.mamba_inner * 2.0, cp, tp, hw)
        cp_layer = cp_layer + a.mamba_share * (2.0 + full) * (pre + post) * (cp > 1)
    # EP: dispatch + combine, forward and backward (+ forward again under full recompute): an
    # all-to-all of every token copy, or (DeepEP / HybridEP) each token once per remote node.
    if setup.ep_dispatch_dedup and a.is_moe:
        one_copy = tok / tp * setup.moe_load_imbalance * a.moe_width * 2.0   # `routed` before the top-k copies
        ep_pass = coll.group_dispatch_dedup_s(one_copy, float(a.moe_top_k), ep, etp, hw,
                                              a.moe_router_groups, a.moe_router_group_top_k)
    else:
        ep_pass = coll.group_all_to_all_s(routed * a.moe_width * 2.0, ep, etp, hw)
    ep_layer = a.moe_share * (4.0 + 2.0 * full) * ep_pass

    def layer_terms(mlp_time: FloatArray, elements: FloatArray, is_moe: bool) -> dict[str, FloatArray]:
        """One decoder layer, one micro-batch, forward and backward, by step term."""
        # the activation function's output width per token on this GPU (an MoE layer: its routed copies)
        act_width = (a.moe_top_k * setup.moe_load_imbalance * a.moe_ffn_hidden_size if is_moe
                     else a.mlp_share * a.ffn_hidden_size) / tp
        # module recompute runs the two norms and the activation function forward again
        again = mods * (2.0 * blocks * h_act + (2.0 + s.up) * act_width)
        moved = k.elementwise_mult * tok * (2.0 * elements + cast + again)
        gemms = passes * (attn + mamba + mlp_time) + up_proj
        tp_layer = exposed_s(tp_comm, gemms, k) if setup.tp_comm_overlap else tp_comm
        compute = gemms + (1.0 + any_rc) * core_fwd + core_bwd
        clamp = tok * 2.0 * act_width * glu_clamp_elements(a, full + mods)   # 2 B: bf16 activations
        bound = memory_bound_s(bw_passes * moved + scores + core_passes * ssd_bytes + 3.0 * lora_bytes + clamp,
                               hw.hbm_bandwidth_bytes_per_s, hw.measured.hbm_bytes_per_s)
        # EP overlap (Megatron-Core's combined 1F1B, core.pipeline_parallel.combined_1f1b: "EP A2A in
        # forward step is hidden by the attention/mlp computation in the backward step, and vice
        # versa"): an all-to-all of one micro-batch has every kernel of the other's layer as its
        # window (attention core and memory-bound kernels too), not only its GEMMs.
        ep_exposed = exposed_s(ep_layer, compute + bound, k) if setup.ep_comm_overlap else ep_layer
        return {"compute": compute, "memory_bound": bound,
                "tp_comm": tp_layer, "cp_comm_exposed": cp_layer,
                "ep_comm": ep_exposed if is_moe else 0.0 * tok}

    dense_t = layer_terms(dense_mlp, dense_el, False)
    moe_t = layer_terms(moe_mlp, moe_el, True) if a.is_moe else dense_t
    if a.is_moe and setup.moe_dropless:
        # Dropless routing brings the token counts to the host in every MoE layer and pass (they size
        # the grouped GEMMs), so the host cannot run ahead of the GPU: a layer takes at least the
        # host's time to issue its kernels. Bound by the host where kernels are small (one micro-batch
        # of a small-expert model), by the GPU where they are large.
        gpu = sum(moe_t.values())
        host = a.moe_share * (2.0 + full) * k.moe_dropless_host_s
        moe_t["compute"] = moe_t["compute"] + np.maximum(host - gpu, 0.0)
    head_t = {"compute": (3.0 - frozen) * head,
              "memory_bound": memory_bound_s(loss_bytes, hw.hbm_bandwidth_bytes_per_s, hw.measured.hbm_bytes_per_s)}
    # an MTP module: a layer and a head. A hybrid's (an attention and an MoE block: Nemotron 3 Super) is
    # charged one average layer of its pattern, about half its blocks: ~1% of such a model's step.
    mtp_t = {n: moe_t[n] + head_t.get(n, 0.0) for n in MB_TERMS}

    # Each representative rank (perf/stages.py): its decoder layers by kind, the head and loss on
    # the last (the first when pp = 1), the MTP modules where they sit.
    st = resolve_stages(a, layout, micro)
    single = np.asarray(pp == 1.0, dtype=f64)
    has_head = (single, 0.0 * single, 1.0 - single)
    rank_terms = []
    for r in range(3):
        n, n_moe, mtp = st.layers[r], st.moe_layers[r], st.mtp[r]
        rank_terms.append({t: (n - n_moe) * dense_t[t] + n_moe * moe_t[t] + has_head[r] * head_t.get(t, 0.0)
                           + mtp * mtp_t[t] for t in MB_TERMS})
    rank_t = [sum(terms.values()) * st.present[r] for r, terms in enumerate(rank_terms)]
    # 1F1B with unequal stages: the first micro-batch crosses every stage, the others are paced by
    # the slowest (step = m t_max + sum_r t_r - t_max); interleaving divides that fill by vp.
    slowest = np.maximum(np.maximum(rank_t[0], rank_t[1]), rank_t[2])
    is_mid = (rank_t[1] > rank_t[0]) & (rank_t[1] >= rank_t[2])
    is_last = (rank_t[2] > rank_t[0]) & ~is_mid
    sel = (1.0 - is_mid - is_last, np.asarray(is_mid, dtype=f64), np.asarray(is_last, dtype=f64))
    t_sum = rank_t[0] + np.maximum(pp - 2.0, 0.0) * rank_t[1] + rank_t[2]
    bubble = (t_sum - slowest) / vp

    bw, lat = coll.link_bw_latency(2 * tp * cp * dp, hw)  # stage neighbours are tp*cp*dp ranks apart
    p2p = np.where(pp > 1, 2.0 * vp * micro * coll.p2p_s(tok * h * 2.0 / tp, bw, lat), 0.0)
    # the parameter all-gather runs in the low-precision primary weights' dtype only where the framework
    # keeps them (fp8_param_gather); bf16 runs gather bf16
    lowp = PEAK_CLASS.get(setup.precision, "bf16") != "bf16"
    gather_bytes = setup.framework.param_gather_bytes if lowp else max(2.0, setup.framework.param_gather_bytes)
    adapters = lora_adapter_params(a, setup.lora)
    dp_exposed, optimizer = data_parallel_s(a, layout, hw, slowest, micro, full, k, setup.grad_reduce_bytes,
                                           gather_bytes, adapters)
    terms = {t: micro * sum(sel[r] * rank_terms[r][t] for r in range(3)) for t in MB_TERMS}
    terms |= {"pp_bubble": bubble, "pp_p2p": p2p, "dp_comm_exposed": dp_exposed, "optimizer": optimizer,
              "offload_exposed": _offload_exposed(a, setup, layout, hw,
                                                  rank_terms[0]["compute"] - single * head_t["compute"], micro)}
    shape = layout.shape     # a property over every field: once, not once per term
    breakdown = {n: np.broadcast_to(np.asarray(terms[n], dtype=f64), shape) for n in STEP_TERMS}
    step = np.asarray(sum(breakdown.values()), dtype=f64)
    tokens_per_s = setup.global_batch_size * seq / step
    per_token = training_flops_per_token(a, setup.seq_len, causal=True, adapter_params=adapters)
    flops = tokens_per_s * per_token / layout.gpus
    return StepResult(step_time_s=step, breakdown_s=breakdown, tokens_per_s=tokens_per_s,
                      model_flops_per_gpu_per_s=flops, mfu=flops / peak, mfu_bf16=flops / hw.peak_flops_bf16)


def _offload_exposed(a: ModelArch, setup: TrainingSetup, layout: Layout, hw: Hardware, layers_compute_s: FloatArray,
                     micro: FloatArray) -> FloatArray:
    """Activation offload's copies left exposed (perf/offload.py); offload runs at pp 1 only, so the
    first rank is the whole model. `layers_compute_s`: its decoder layers' compute per micro-batch,
    forward + backward (3x the forward: no recompute)."""
    if not np.any(np.asarray(layout.offload) > 0):
        return np.asarray(0.0)
    d = training_memory_detail(a, setup, dataclasses.replace(layout, offload=np.asarray(0)))
    n = np.maximum(d["layers_first"], 1.0)
    forward_per_layer = layers_compute_s / (3.0 * n)
    return offload.exposed_s(d["activations_stored_first"] / n, forward_per_layer, layout.offload, micro, hw)
