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
    Transients of sharded states: at ZeRO >= 2 one layer's unsharded gradient before its
    reduce-scatter; at ZeRO-3 two layers' bf16 weights gathered (current + prefetch). With
    pp > 1 FSDP (ZeRO-3) does not reshard between micro-batches (torchtitan apply_fsdp: "For
    PP, do not reshard after forward to avoid per-microbatch all-gathers";
    torch.distributed.pipelining disables gradient sync until the last micro-batch), so the
    stage's bf16 weights and fp32 gradients stay unsharded: ZeRO-3 with PP costs about what
    ZeRO-1 does (DeepSpeed's pipeline engine does not allow ZeRO-2/3 at all).
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
stage, the loss peak of one micro-batch (LOSS_BYTES_PER_LOGIT, logits = tokens * vocab / tp);
the loss peak and the working set happen at different moments, so the larger one counts.

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
from .layout import FloatArray, IntArray, Layout, TrainingSetup
from .stages import resolve_stages

MEMORY_TERMS = ("weights", "gradients", "optimizer", "activations", "runtime")

# The loss peak, bytes per logit of one micro-batch (logits = tokens x vocab / tp). We size for
# the PyTorch-native path that the calibration runs use (torchtitan; HF is similar):
# tp == 1, ATen `cross_entropy(logits.float(), labels)`: at the start of backward the saved fp32
#   log-softmax output, the fp32 gradient from nll_loss_backward and the fp32 gradient
#   log_softmax_backward writes are live together: 3 x 4 B (the bf16 logits are freed first).
# tp > 1, vocab-parallel loss (torch.distributed.tensor.parallel.loss_parallel): its fused
#   backward `(grad_input + exp(x)) * grad_output` holds the saved output, the zero-filled
#   grad_input, the sum and the product: 4 x 4 B.
# Megatron's fused vocab-parallel cross-entropy needs about 6 B (bf16 logits + one fp32 softmax
# updated in place), so for Megatron jobs these are upper bounds.
LOSS_BYTES_PER_LOGIT = 12.0
LOSS_BYTES_PER_LOGIT_VOCAB_PARALLEL = 16.0


@dataclass(frozen=True)
class StateBytes:
    """Bytes per parameter of mixed-precision Adam, before ZeRO sharding."""

    weights: float
    gradients: float
    optimizer: float
    lowp_weight_cache: float = 0.0    # FP8/FP4 copies of GEMM weights (Transformer Engine)


# Low-precision weight copies, two orientations each: MXFP8 = 1 B + one 1-byte E8M0 scale per block of
# 32 (OCP Microscaling Formats spec v1.0); NVFP4 = 0.5 B + one 1-byte E4M3 scale per block of 16
# (NVIDIA Blackwell NVFP4). The tensor-wide fp32 scale of FP8 is negligible.
STATE_BYTES: dict[str, StateBytes] = {
    "bf16": StateBytes(weights=2, gradients=4, optimizer=12),
    "fp16": StateBytes(weights=2, gradients=2, optimizer=16),
    "fp8": StateBytes(weights=2, gradients=4, optimizer=12, lowp_weight_cache=2),
    # 128x128 weight blocks: one fp32 scale per 16,384 weights
    "fp8_blockwise": StateBytes(weights=2, gradients=4, optimizer=12, lowp_weight_cache=2 * (1 + 4 / 16384)),
    "mxfp8": StateBytes(weights=2, gradients=4, optimizer=12, lowp_weight_cache=2 * (1 + 1 / 32)),
    "nvfp4": StateBytes(weights=2, gradients=4, optimizer=12, lowp_weight_cache=2 * (0.5 + 1 / 16)),
}


def state_bytes(precision: str) -> StateBytes:
    try:
        return STATE_BYTES[precision]
    except KeyError:
        raise InputError("precision", precision, f"one of {sorted(STATE_BYTES)}") from None


# Is the term sharded over the data-parallel group at ZeRO stage 0..3? (looked up by stage)
_SHARD_W = np.array([0.0, 0.0, 0.0, 1.0])
_SHARD_G = np.array([0.0, 0.0, 1.0, 1.0])
_SHARD_O = np.array([0.0, 1.0, 1.0, 1.0])


def held_bytes_per_param(zero: IntArray, shard: FloatArray | float, per_param: StateBytes,
                         ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(weights, gradients, optimizer) bytes this GPU holds per parameter of its model shard,
    ZeRO stage `zero` over `shard` data-parallel ranks (ZeRO paper §5.1-5.3: P_os at 1, P_os+g
    at 2, P_os+g+p at 3). Megatron's 6 + 12/d is (2, 4, 12/d) at stage 1."""
    less = 1.0 / np.asarray(shard, dtype=np.float64) - 1.0
    return (per_param.weights * (1.0 + _SHARD_W[zero] * less),
            per_param.gradients * (1.0 + _SHARD_G[zero] * less),
            per_param.optimizer * (1.0 + _SHARD_O[zero] * less))


def _validate(setup: TrainingSetup, layout: Layout) -> None:
    for name in ("tp", "pp", "dp", "cp", "ep", "etp", "vp", "mbs"):
        low = int(np.min(getattr(layout, name)))
        if low < 1:
            raise InputError(f"layout.{name}", low, "integers >= 1")
    for name, top, allowed in (("recompute", 3, "0, 1, 2 or 3"), ("zero", 3, "0, 1, 2 or 3")):
        v = getattr(layout, name)
        low, high = int(np.min(v)), int(np.max(v))
        if low < 0 or high > top:
            raise InputError(f"layout.{name}", low if low < 0 else high, allowed)
    if setup.seq_len < 1:
        raise InputError("seq_len", setup.seq_len, "an integer >= 1")
    if setup.global_batch_size < 1:
        raise InputError("global_batch_size", setup.global_batch_size, "an integer >= 1")


Table = tuple[FloatArray, FloatArray, FloatArray]
# Activation policy of each Layout.recompute code, in code order (the rows of a `_code_table`).
_CODE_POLICIES = tuple(LAYOUT_POLICIES[code] for code in sorted(LAYOUT_POLICIES))


def _code_table(per_code: list[ActivationCoefficients], a: ModelArch, seq: int) -> Table:
    """Per recompute code 0..3: (replicated, / tp, x etp / tp) bytes per token, with the scalar
    context length and top_k folded in (see ActivationCoefficients)."""
    k = float(a.moe_top_k)
    return (np.array([r.replicated for r in per_code]),
            np.array([r.tp + r.score * seq + k * r.expert_hidden for r in per_code]),
            np.array([k * r.expert_in for r in per_code]))


def _bytes_per_token(tab: Table, code: IntArray, inv_sp: FloatArray, inv_tp: FloatArray,
                     etp_over_tp: FloatArray | None) -> FloatArray:
    x: FloatArray = tab[0][code] * inv_sp + tab[1][code] * inv_tp
    if etp_over_tp is not None:
        x = x + tab[2][code] * etp_over_tp
    return x


def _evaluate(arch: ModelArch, setup: TrainingSetup, layout: Layout, *,
              detail: bool) -> dict[str, FloatArray]:
    """The whole model on arrays of the layout's broadcast shape, for the three representative
    pipeline ranks of perf/stages.py (first, busiest middle, last); the GPU reported is the most
    loaded of those that exist. Branches are float masks and arithmetic, not np.where: the planner
    calls this on 1e6 layouts at a time."""
    _validate(setup, layout)
    sb = state_bytes(setup.precision)
    c = param_counts(arch)
    f8 = np.float64
    tp, pp, dp, cp = (layout.tp.astype(f8), layout.pp.astype(f8), layout.dp.astype(f8), layout.cp.astype(f8))
    vp, mbs = layout.vp.astype(f8), layout.mbs.astype(f8)
    zero, code = layout.zero, layout.recompute
    h, moe = float(arch.hidden_size), arch.is_moe
    inv_tp = 1.0 / tp
    single = (pp == 1.0).astype(f8)           # the first rank is also the last
    micro = np.maximum(np.ceil(setup.global_batch_size / (dp * mbs)), 1.0)
    st = resolve_stages(arch, layout, micro)
    n_first, n_mid, n_last = st.layers

    # ---- parameters per GPU on each rank: non-expert / tp (its layers, the embedding on the
    # first rank, the head (or the tied copy) and the final norm on the last, the dense part of
    # the MTP modules where they sit); routed experts / (ep * etp).
    dense_layer = c.attention_per_layer + c.dense_mlp_per_layer + 2 * h
    untied_head = c.embedding * float(c.output_head > 0)
    mtp_expert = arch.mtp_layers * c.moe_routed_per_layer if moe else 0.0
    mtp_dense_per = (c.mtp - mtp_expert) / max(arch.mtp_layers, 1)
    mtp_expert_per = mtp_expert / max(arch.mtp_layers, 1)
    moe_layer = c.attention_per_layer + c.moe_shared_per_layer + c.router_per_layer + 2 * h
    head = single * untied_head + (1.0 - single) * c.embedding    # on the rank holding the head
    has_emb = (1.0, 0.0, 0.0)
    has_head = (single, 0.0 * single, 1.0 - single)
    ep_etp = (layout.ep * layout.etp).astype(f8)
    inv_ee = 1.0 / ep_etp
    etp: FloatArray | None = layout.etp.astype(f8) if moe else None
    ranks = []
    for k in range(3):
        n, mtp, moe_n = st.layers[k], st.mtp[k], st.moe_layers[k]
        body = n * dense_layer + moe_n * (moe_layer - dense_layer)
        ne = (body + has_emb[k] * c.embedding + has_head[k] * (head + h) + mtp * mtp_dense_per) * inv_tp
        ex = (moe_n * c.moe_routed_per_layer + mtp * mtp_expert_per) * inv_ee if moe else 0.0 * n
        ranks.append((n, moe_n, ne, ex))

    # ---- model states under ZeRO: dense over dp * cp, experts over tp * cp * dp / (ep * etp)
    # Transients: at ZeRO >= 2 one layer's gradient before its reduce-scatter; at ZeRO-3 two
    # layers' weights gathered (current + prefetch), or with pp > 1 the whole stage's weights and
    # gradients unsharded between micro-batches. Only where there is more than one rank to shard over.
    fw, fg, fo = held_bytes_per_param(zero, dp * cp, sb)
    multi = 1.0 - single
    sharded = (dp * cp > 1.0).astype(f8)
    z3, z2 = _SHARD_W[zero] * sharded, _SHARD_G[zero] * sharded
    layer = max(dense_layer, moe_layer if moe else 0.0) * inv_tp
    if moe:
        edp = tp * cp * dp / ep_etp
        ew, eg, eo = held_bytes_per_param(zero, np.maximum(edp, 1.0), sb)
        e_sharded = (edp > 1.0).astype(f8)
        e3, e2 = _SHARD_W[zero] * e_sharded, _SHARD_G[zero] * e_sharded
        e_layer = c.moe_routed_per_layer * inv_ee

    # ---- activations: layers in flight, one layer's backward working set, the loss peak
    seq = setup.seq_len
    tokens = mbs * (seq / cp)
    inv_sp = inv_tp + (~layout.sp) * (1.0 - inv_tp)        # 1/t with sequence parallel, else 1
    kind_tabs = []
    work: FloatArray | float = 0.0
    for is_moe in ((False, True) if moe else (False,)):   # at most two layer kinds, not a loop over layouts
        la = layer_activations(arch, moe_layer=is_moe)
        store_tab = _code_table([la.stored[p] for p in _CODE_POLICIES], arch, seq)
        work_tab = _code_table([la.recomputed[p] + la.gradients for p in _CODE_POLICIES], arch, seq)
        e = etp * inv_tp if is_moe and etp is not None else None
        kind_tabs.append(_bytes_per_token(store_tab, code, inv_sp, inv_tp, e))
        work = np.maximum(work, _bytes_per_token(work_tab, code, inv_sp, inv_tp, e))
    work = tokens * work
    vocab_parallel = LOSS_BYTES_PER_LOGIT_VOCAB_PARALLEL - LOSS_BYTES_PER_LOGIT
    loss = (LOSS_BYTES_PER_LOGIT + (tp > 1.0) * vocab_parallel) * tokens * (arch.vocab_size * inv_tp)
    loss_over = np.maximum(loss - work, 0.0)     # the loss peak and the working set do not overlap
    inv_vp = 1.0 / vp

    parts: list[dict[str, FloatArray]] = []
    for k in range(3):
        n, moe_n, ne, ex = ranks[k]
        w, g, o = fw * ne, fg * ne, fo * ne
        w = w + z3 * sb.weights * (ne + single * (2.0 * layer - ne))
        g = g + sb.gradients * (z2 * layer + z3 * multi * (ne - layer))
        params = ne
        if moe:
            w, g, o = w + ew * ex, g + eg * ex, o + eo * ex
            params = ne + ex
            w = w + e3 * sb.weights * (ex + single * (2.0 * e_layer - ex))
            g = g + sb.gradients * (e2 * e_layer + e3 * multi * (ex - e_layer))
        if sb.lowp_weight_cache:     # FP8/FP4 copies of the GEMM weights (none with ZeRO-3)
            keep = sb.lowp_weight_cache * (1.0 - z3)     # dense z3 stands for both
            not_gemm = (n * 2 * h + moe_n * (c.router_per_layer if moe else 0.0) + has_emb[k] * c.embedding
                        + has_head[k] * single * untied_head) * inv_tp
            w = w + keep * (params - not_gemm - has_head[k] * h * inv_tp)
        mtp_layers = st.mtp[k]
        per_layer = (n - moe_n) * kind_tabs[0] + (moe_n + mtp_layers) * kind_tabs[-1]   # MTP: the last kind
        stored = tokens * per_layer * (st.in_flight[k] * inv_vp)
        head_in = tokens * (4.0 * h) * inv_sp          # the final norm's and the head's inputs
        act = stored + has_head[k] * (head_in + loss_over) + work
        parts.append({"weights": w, "gradients": g, "optimizer": o, "activations": act,
                      "modeled": w + g + o + act, "params": params, "stored": stored})

    fix, frac = fitted_memory.RUNTIME_FIXED_BYTES, fitted_memory.RUNTIME_FRACTION
    # absent ranks (no middle below pp 3, no separate last at pp 1) never bind
    modeled_k = [parts[k]["modeled"] * st.present[k] - (1.0 - st.present[k]) for k in range(3)]
    modeled = np.maximum(np.maximum(modeled_k[0], modeled_k[1]), modeled_k[2])
    is_mid = (modeled_k[1] > modeled_k[0]) & (modeled_k[1] >= modeled_k[2])
    is_last = (modeled_k[2] > modeled_k[0]) & ~is_mid
    sel = (1.0 - is_mid - is_last, is_mid.astype(f8), is_last.astype(f8))

    def pick(term: str) -> FloatArray:
        return np.asarray(sel[0] * parts[0][term] + sel[1] * parts[1][term] + sel[2] * parts[2][term])

    out = {
        "weights": pick("weights"), "gradients": pick("gradients"),
        "optimizer": pick("optimizer"), "activations": pick("activations"),
        "runtime": fix + frac * modeled, "total": fix + (1.0 + frac) * modeled,
    }
    if detail:
        out |= {
            "first_stage_total": fix + (1.0 + frac) * parts[0]["modeled"],
            "middle_stage_total": (fix + (1.0 + frac) * parts[1]["modeled"]) * st.present[1],
            "last_stage_total": fix + (1.0 + frac) * np.where(pp > 1, parts[2]["modeled"], parts[0]["modeled"]),
            "binding_stage": sel[1] + 2.0 * sel[2], "binding_stage_is_last": sel[2],
            "weights_first": parts[0]["weights"],
            "weights_last": np.where(pp > 1, parts[2]["weights"], parts[0]["weights"]),
            "params_first": parts[0]["params"],
            "params_last": np.where(pp > 1, parts[2]["params"], parts[0]["params"]),
            "activations_stored_first": parts[0]["stored"],
            "activations_stored_last": np.where(pp > 1, parts[2]["stored"], parts[0]["stored"]),
            "activations_working_set": work, "loss_peak": loss,
            "microbatches": micro, "chunks_in_flight_first": st.in_flight[0],
            "layers_first": n_first, "layers_middle": n_mid, "layers_last": n_last,
        }
    shape = layout.shape
    return {k: np.broadcast_to(np.asarray(v, dtype=f8), shape) for k, v in out.items()}


def training_memory_detail(arch: ModelArch, setup: TrainingSetup, layout: Layout) -> dict[str, FloatArray]:
    """The MEMORY_TERMS and 'total' of the binding stage, plus per-stage totals and parts:
    first_stage_total, last_stage_total, binding_stage_is_last (1.0 = last), weights_first,
    weights_last, params_first, params_last (parameters held per GPU), activations_stored_first,
    activations_stored_last, activations_working_set, loss_peak, microbatches,
    chunks_in_flight_first."""
    return _evaluate(arch, setup, layout, detail=True)


def training_memory_bytes(arch: ModelArch, setup: TrainingSetup, layout: Layout) -> dict[str, FloatArray]:
    """Bytes per GPU (the most loaded pipeline stage) for each of MEMORY_TERMS and 'total'."""
    return _evaluate(arch, setup, layout, detail=False)
