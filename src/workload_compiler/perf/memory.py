"""Training memory per GPU by term, for one layout or a grid of them (same code for both).

The GPU reported is the most loaded pipeline stage: we evaluate the first stage (embedding, the
most micro-batches in flight) and the last stage (output head, the cross-entropy peak, MTP) and
return the terms of whichever is larger (`total` = max of the two stage totals; the terms add
up to it).

Model states (weights, gradients, optimizer), bytes per parameter held by this GPU:
    mixed-precision Adam, Megatron-Core defaults (docs dist_optimizer.md, calibration record
    `megatron_dist_optimizer_bytes_per_param`; Rajbhandari et al. 2020, ZeRO, arXiv:1910.02054 §3):
        bf16 params 2 B, fp32 main grads 4 B, fp32 master + Adam m + v 12 B  -> 18 B
        fp16 params 2 B, fp16 grads 2 B, fp32 master + main grad + m + v 16 B -> 20 B
    ZeRO stage z shards over the data-parallel group N: 1 the optimizer (= Megatron distributed
    optimizer: 6 + 12/N B), 2 also the gradients, 3 also the weights (FSDP). N = dp * cp for
    dense parameters (Megatron's distributed-optimizer group and torchtitan's dp_shard_cp mesh
    both span the CP ranks); for routed experts N = tp * cp * dp / (ep * etp), the expert
    data-parallel group of Megatron-Core's MoE parallel folding.
    Parameters on a stage: its layers (ceil(L / pp) of them; vp chunks of ceil(L / (pp * vp))
    when interleaved) / tp, routed experts / (ep * etp), the embedding on the first stage, the
    output head on the last (a tied embedding is kept on both when pp > 1, as Megatron does),
    MTP modules on the last.
    ZeRO-3 transients: two layers' bf16 weights gathered (current + prefetch) and one layer's
    unsharded gradient before its reduce-scatter. With pp > 1 FSDP does not reshard between
    micro-batches (torchtitan apply_fsdp: "For PP, do not reshard after forward to avoid
    per-microbatch all-gathers"; torch.distributed.pipelining disables gradient sync until the
    last micro-batch), so the stage's bf16 weights and fp32 gradients stay unsharded.
    FP8/MXFP8 (Transformer Engine): bf16 weights stay, plus an FP8 copy of every GEMM weight in
    both orientations (TE Linear caches `weight_fp8` and `weight_t_fp8` across micro-batches;
    Hopper FP8 GEMMs are TN-only, Blackwell MXFP8 keeps row- and column-wise copies): 2 B/param;
    NVFP4 2 x (0.5 + 1/16 scale) B. None with ZeRO-3 (weights are gathered per layer).

Activations (perf/activations.py, Korthikanti et al. 2022 generalized): per layer and
micro-batch, tokens = mbs * seq / cp. In flight on the first stage: min(pp, micro-batches) for
1F1B; interleaved (vp > 1) holds min(pp*vp + pp - 1, m*vp) model chunks, i.e.
L * (1 + (pp-1)/(pp*vp)) layer-micro-batches (Korthikanti §4.2.3; Megatron schedules.py warmup
count). The last stage holds 1 (1F1B) or min((vp-1)*pp + 1, m*vp) chunks. Plus the backward
working set of one layer (recomputed tensors and activation gradients) and, on the last
stage, the loss peak: LOSS_BYTES_PER_LOGIT per logit of one micro-batch, vocab / tp (vocab-
parallel loss).

Runtime (perf/fitted_memory.py): allocator fragmentation and communication buffers, a fixed
part plus a fraction of the modeled bytes, fitted on measured peaks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arch.counts import param_counts
from ..arch.model import ModelArch
from ..errors import InputError
from . import fitted_memory
from .activations import LAYOUT_POLICIES, ActivationCoefficients, layer_activations
from .layout import FloatArray, Layout, TrainingSetup

MEMORY_TERMS = ("weights", "gradients", "optimizer", "activations", "runtime")

# Unfused cross-entropy in PyTorch (torchtitan, HF: `cross_entropy(logits.float(), labels)`): at
# the start of backward the fp32 log-softmax output (saved), the fp32 gradient from nll_loss and
# the fp32 gradient log_softmax_backward writes are live together: 3 x 4 B per logit. (Megatron's
# fused vocab-parallel cross-entropy keeps bf16 logits + one fp32 softmax: 6 B.)
LOSS_BYTES_PER_LOGIT = 16.0


@dataclass(frozen=True)
class StateBytes:
    """Bytes per parameter of mixed-precision Adam, before ZeRO sharding."""

    weights: float
    gradients: float
    optimizer: float
    lowp_weight_cache: float = 0.0    # FP8/FP4 copies of GEMM weights (Transformer Engine)


STATE_BYTES: dict[str, StateBytes] = {
    "bf16": StateBytes(weights=2, gradients=4, optimizer=12),
    "fp16": StateBytes(weights=2, gradients=2, optimizer=16),
    "fp8": StateBytes(weights=2, gradients=4, optimizer=12, lowp_weight_cache=2),
    "mxfp8": StateBytes(weights=2, gradients=4, optimizer=12, lowp_weight_cache=2 * (1 + 1 / 32)),
    "nvfp4": StateBytes(weights=2, gradients=4, optimizer=12, lowp_weight_cache=2 * (0.5 + 1 / 16)),
}


def state_bytes(precision: str) -> StateBytes:
    try:
        return STATE_BYTES[precision]
    except KeyError:
        raise InputError("precision", precision, f"one of {sorted(STATE_BYTES)}") from None


def zero_state_bytes(params: FloatArray | float, shard: FloatArray | float, zero: FloatArray | int,
                     per_param: StateBytes) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(weights, gradients, optimizer) bytes of `params` under ZeRO stage `zero` over `shard`
    data-parallel ranks (ZeRO paper §5: P_os at 1, P_os+g at 2, P_os+g+p at 3)."""
    z = np.asarray(zero)
    inv = 1.0 / np.asarray(shard, dtype=np.float64)
    p = np.asarray(params, dtype=np.float64)
    w = p * per_param.weights * np.where(z >= 3, inv, 1.0)
    g = p * per_param.gradients * np.where(z >= 2, inv, 1.0)
    o = p * per_param.optimizer * np.where(z >= 1, inv, 1.0)
    return w, g, o


def _moe_before(n: FloatArray, a: ModelArch) -> FloatArray:
    """MoE layers among the first n layers (pattern: dense first, then every interval-th)."""
    k = np.ceil((n - a.moe_dense_layers) / a.moe_layer_interval)
    return np.clip(k, 0.0, float(a.moe_layers))


def _validate(setup: TrainingSetup, layout: Layout) -> None:
    for name in ("tp", "pp", "dp", "cp", "ep", "etp", "vp", "mbs"):
        v = getattr(layout, name)
        if np.any(v < 1):
            raise InputError(f"layout.{name}", np.min(v), "integers >= 1")
    if np.any((layout.recompute < 0) | (layout.recompute > 2)):
        raise InputError("layout.recompute", np.unique(layout.recompute).tolist(), "0, 1 or 2")
    if np.any((layout.zero < 0) | (layout.zero > 3)):
        raise InputError("layout.zero", np.unique(layout.zero).tolist(), "0, 1, 2 or 3")
    if setup.seq_len < 1:
        raise InputError("seq_len", setup.seq_len, "an integer >= 1")
    if setup.global_batch_size < 1:
        raise InputError("global_batch_size", setup.global_batch_size, "an integer >= 1")


def _per_token(c: ActivationCoefficients, a: ModelArch, seq: int) -> tuple[float, float, float]:
    """(replicated, /t, x etp/t) bytes per token: folds the scalar context and top_k in."""
    k = float(a.moe_top_k)
    return c.replicated, c.tp + c.score * seq + k * c.expert_hidden, k * c.expert_in


def training_memory_detail(arch: ModelArch, setup: TrainingSetup, layout: Layout) -> dict[str, FloatArray]:
    """Every intermediate of the memory model, arrays of the layout's broadcast shape:
    the MEMORY_TERMS and 'total' of the binding stage, plus per-stage totals and parts."""
    _validate(setup, layout)
    sb = state_bytes(setup.precision)
    c = param_counts(arch)
    f = np.float64
    tp, pp, dp, cp = (layout.tp.astype(f), layout.pp.astype(f), layout.dp.astype(f), layout.cp.astype(f))
    ep_etp = (layout.ep * layout.etp).astype(f)
    etp, vp, mbs = layout.etp.astype(f), layout.vp.astype(f), layout.mbs.astype(f)
    zero, code = layout.zero, layout.recompute
    L, h = float(arch.layers), float(arch.hidden_size)
    moe = arch.is_moe
    inv_tp = 1.0 / tp
    inv_ee = 1.0 / ep_etp
    single = pp == 1.0

    # ---- layers on the first and last stage (vp chunks of ceil(L / (pp * vp)) layers)
    lc = np.ceil(L / (pp * vp))
    n_stage = vp * lc
    if moe:
        f_moe = arch.moe_layers / L
        other = (vp - 1.0) * lc * f_moe
        moe_first = np.minimum(_moe_before(lc, arch) + other, n_stage)
        moe_last = np.minimum(_moe_before(np.full_like(lc, L), arch)
                              - _moe_before(np.maximum(L - lc, 0.0), arch) + other, n_stage)
    else:
        moe_first = moe_last = np.zeros_like(lc)
    dense_first, dense_last = n_stage - moe_first, n_stage - moe_last

    # ---- parameters held per GPU (non-expert / tp, routed experts / (ep * etp))
    dense_layer = c.attention_per_layer + c.dense_mlp_per_layer + 2 * h
    moe_layer = c.attention_per_layer + c.moe_shared_per_layer + c.router_per_layer + 2 * h
    vocab = c.embedding * (1.0 + np.where(single, float(c.output_head > 0), 0.0))
    mtp_expert = arch.mtp_layers * c.moe_routed_per_layer if moe else 0.0
    mtp_dense = c.mtp - mtp_expert
    ne_first = (dense_first * dense_layer + moe_first * moe_layer + vocab
                + np.where(single, mtp_dense + h, 0.0)) * inv_tp
    ne_last = (dense_last * dense_layer + moe_last * moe_layer + vocab + mtp_dense + h) * inv_tp
    ex_first = (moe_first * c.moe_routed_per_layer + np.where(single, mtp_expert, 0.0)) * inv_ee
    ex_last = (moe_last * c.moe_routed_per_layer + mtp_expert) * inv_ee
    gemm_dense = c.attention_per_layer + c.dense_mlp_per_layer
    gemm_moe = c.attention_per_layer + c.moe_shared_per_layer
    gemm_first = (dense_first * gemm_dense + moe_first * gemm_moe) * inv_tp \
        + moe_first * c.moe_routed_per_layer * inv_ee
    gemm_last = (dense_last * gemm_dense + moe_last * gemm_moe + mtp_dense) * inv_tp \
        + (moe_last * c.moe_routed_per_layer + mtp_expert) * inv_ee

    # ---- ZeRO sharding groups: dense over dp * cp, experts over the expert-data-parallel group
    shard_dense = dp * cp
    shard_expert = tp * cp * dp * inv_ee
    z3 = zero >= 3
    layer_gpu = max(dense_layer, 0.0) * inv_tp if not moe else \
        np.maximum(dense_layer * inv_tp, moe_layer * inv_tp + c.moe_routed_per_layer * inv_ee)

    def states(ne: FloatArray, ex: FloatArray, gemm: FloatArray) -> tuple[FloatArray, ...]:
        w1, g1, o1 = zero_state_bytes(ne, shard_dense, zero, sb)
        w2, g2, o2 = zero_state_bytes(ex, shard_expert, zero, sb)
        stage = ne + ex
        # ZeRO-3 transients: per layer without PP, the whole stage unsharded with PP.
        gathered_w = np.where(z3, np.where(single, 2.0 * layer_gpu, stage) * sb.weights, 0.0)
        gathered_g = np.where(z3, np.where(single, layer_gpu, stage) * sb.gradients, 0.0)
        cache = np.where(z3, 0.0, gemm * sb.lowp_weight_cache)
        return w1 + w2 + gathered_w + cache, g1 + g2 + gathered_g, o1 + o2

    w_first, g_first, o_first = states(ne_first, ex_first, gemm_first)
    w_last, g_last, o_last = states(ne_last, ex_last, gemm_last)

    # ---- activations
    seq = setup.seq_len
    tokens = mbs * (seq / cp)
    inv_sp = np.where(layout.sp, inv_tp, 1.0)
    micro = np.maximum(np.ceil(setup.global_batch_size / (dp * mbs)), 1.0)
    interleaved = vp > 1.0
    chunks_first = np.where(interleaved, np.minimum(pp * vp + pp - 1.0, micro * vp), np.minimum(pp, micro))
    chunks_last = np.where(interleaved, np.minimum((vp - 1.0) * pp + 1.0, micro * vp), 1.0)

    kinds = [(False, dense_first, dense_last)] + ([(True, moe_first, moe_last)] if moe else [])
    stored_first = np.zeros_like(tokens)
    stored_last = np.zeros_like(tokens)
    work = np.zeros_like(tokens)
    for is_moe, n_f, n_l in kinds:   # at most two layer kinds, not a loop over layouts
        la = layer_activations(arch, moe_layer=is_moe)
        table = np.array([_per_token(la.stored[LAYOUT_POLICIES[i]], arch, seq) for i in range(3)])
        wtab = np.array([_per_token(la.recomputed[LAYOUT_POLICIES[i]] + la.gradients, arch, seq)
                         for i in range(3)])
        per_layer = tokens * (table[code, 0] * inv_sp + (table[code, 1] + table[code, 2] * etp) * inv_tp)
        ws = tokens * (wtab[code, 0] * inv_sp + (wtab[code, 1] + wtab[code, 2] * etp) * inv_tp)
        stored_first = stored_first + n_f * per_layer
        extra_mtp = arch.mtp_layers if is_moe == moe else 0
        stored_last = stored_last + (n_l + extra_mtp) * per_layer
        work = np.maximum(work, ws)
    stored_first = stored_first * (chunks_first / vp)
    stored_last = stored_last * (chunks_last / vp) + tokens * (4.0 * h) * inv_sp  # final norm + head input
    loss = LOSS_BYTES_PER_LOGIT * tokens * arch.vocab_size * inv_tp
    act_first = stored_first + np.where(single, np.maximum(work, loss), work)
    act_last = stored_last + np.maximum(work, loss)

    modeled_first = w_first + g_first + o_first + act_first
    modeled_last = w_last + g_last + o_last + act_last
    rt_first = fitted_memory.RUNTIME_FIXED_BYTES + fitted_memory.RUNTIME_FRACTION * modeled_first
    rt_last = fitted_memory.RUNTIME_FIXED_BYTES + fitted_memory.RUNTIME_FRACTION * modeled_last
    total_first, total_last = modeled_first + rt_first, modeled_last + rt_last
    last = total_last > total_first
    out = {
        "weights": np.where(last, w_last, w_first),
        "gradients": np.where(last, g_last, g_first),
        "optimizer": np.where(last, o_last, o_first),
        "activations": np.where(last, act_last, act_first),
        "runtime": np.where(last, rt_last, rt_first),
        "total": np.maximum(total_first, total_last),
        "first_stage_total": total_first,
        "last_stage_total": total_last,
        "binding_stage_is_last": last.astype(f),
        "weights_first": w_first, "weights_last": w_last,
        "params_first": ne_first + ex_first, "params_last": ne_last + ex_last,
        "activations_stored_first": stored_first, "activations_stored_last": stored_last,
        "activations_working_set": work, "loss_peak": loss,
        "microbatches": micro, "chunks_in_flight_first": chunks_first,
    }
    shape = layout.shape
    return {k: np.broadcast_to(np.asarray(v, dtype=f), shape) for k, v in out.items()}


def training_memory_bytes(arch: ModelArch, setup: TrainingSetup, layout: Layout) -> dict[str, FloatArray]:
    """Bytes per GPU (the most loaded pipeline stage) for each of MEMORY_TERMS and 'total'."""
    d = training_memory_detail(arch, setup, layout)
    return {k: d[k] for k in (*MEMORY_TERMS, "total")}
