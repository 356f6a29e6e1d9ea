"""Training memory per GPU by term, for one layout or a grid of them (same code for both).

Three pipeline ranks stand for the pipeline (perf/stages.py): the first (embedding, the most
micro-batches in flight), the busiest middle and the last (output head, the loss peak, MTP). The
GPU reported is the most loaded of those that exist; `total` is its total and the terms add up
to it. What the training framework keeps is its profile (`TrainingSetup.framework`,
perf/framework.py, sourced in catalog/data/frameworks.yaml); the default generic profile takes the
largest term of the known frameworks.

Model states (perf/model_states.py): bytes per parameter from the profile (Megatron-Core 2 + 4 +
12 with a separate fp32 master; PyTorch FSDP/FSDP2 and MaxText 4 + 4 + 8 with the fp32 parameter
as the master), sharded by ZeRO stage over N = dp * cp for dense parameters (Megatron's
distributed-optimizer group and torchtitan's dp_shard_cp mesh both span the CP ranks) and over the
expert data-parallel group N = tp * cp * dp / (ep * etp) for routed experts (Megatron-Core's MoE
parallel folding). Parameters on a rank: its layers / tp, routed experts / (ep * etp), the
embedding on the first rank, the output head on the last (a tied embedding is kept on both when
pp > 1, as Megatron does), MTP modules where they sit.
FP8/MXFP8/NVFP4 (Transformer Engine): bf16 weights stay, plus `lowp_weight_copies` low-precision
copies of every GEMM weight (TE caches the weight and its transpose across micro-batches; Hopper
FP8 GEMMs are TN-only, Blackwell keeps row- and column-wise copies); none with ZeRO-3.

Activations (perf/activations.py, Korthikanti et al. 2022 generalized): per layer and
micro-batch, tokens = mbs * seq / cp, the tensors the profile's kernels keep (FlashAttention
keeps no s x s scores; dropout masks only where the recipe uses dropout), less what the profile
offloads to the host. In flight per rank, and the layers stored at its peak (a light chunk 0
counts as light): perf/stages.py and perf/schedule_peak.py. Plus the backward working set of one
layer (recomputed tensors, activation gradients and, in a MoE layer, the token-dispatch buffers)
and, on the last rank, the loss peak of one micro-batch (the profile's bytes per logit, logits =
tokens * vocab / tp); the loss peak and the working set happen at different moments, so the
larger one counts.

Runtime (perf/fitted_memory.py): allocator fragmentation and communication buffers, a fixed
part plus a fraction of the modeled bytes, fitted on measured peaks, per allocator.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..arch.lora import adapter_params_per_layer
from ..arch.model import ModelArch
from ..errors import InputError
from . import fitted_memory
from .activations import LAYOUT_POLICIES, layer_activations, moe_dispatch_bytes_per_pair
from .layout import FloatArray, IntArray, Layout, TrainingSetup
from .model_states import STATE_BYTES, StateBytes, held_bytes_per_param, state_bytes, state_coefficients
from .offload import kept_fraction
from .rank_params import rank_params
from .saved_tensors import ActivationCoefficients, gemm_input_bytes
from .stages import Stages, resolve_stages

MEMORY_TERMS = ("weights", "gradients", "optimizer", "activations", "runtime")


def _validate(setup: TrainingSetup, layout: Layout) -> None:
    for name in ("tp", "pp", "dp", "cp", "ep", "etp", "vp", "mbs"):
        low = int(np.min(getattr(layout, name)))
        if low < 1:
            raise InputError(f"layout.{name}", low, "integers >= 1")
    top_code = max(LAYOUT_POLICIES)
    for name, top, allowed in (("recompute", top_code, f"an integer 0..{top_code}"), ("zero", 3, "0, 1, 2 or 3")):
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
    """Per recompute code 0..5: (replicated, / tp, x etp / tp) bytes per token, with the scalar
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


def _activation_tables(arch: ModelArch, setup: TrainingSetup, layout: Layout, inv_tp: FloatArray,
                       ) -> tuple[list[FloatArray], FloatArray]:
    """Bytes per token stored by one layer of each kind (dense, MoE) under the layout's recompute
    code, and the per-token backward working set of the heavier kind."""
    fw, seq, code = setup.framework, setup.seq_len, layout.recompute
    inv_sp = inv_tp + (~layout.sp) * (1.0 - inv_tp)        # 1/t with sequence parallel, else 1
    etp_over_tp = layout.etp.astype(np.float64) * inv_tp
    kinds: list[FloatArray] = []
    work: FloatArray = np.zeros(())
    for is_moe in ((False, True) if arch.is_moe else (False,)):   # layer kinds, not layouts
        la = layer_activations(arch, moe_layer=is_moe, flash=setup.flash_attention, dropout=fw.dropout,
                               gemm_in=gemm_input_bytes(setup.precision, fw.lowp_saved_gemm_inputs),
                               probs_in_activation=fw.moe_probs_in_activation)
        store_tab = _code_table([la.stored[p] for p in _CODE_POLICIES], arch, seq)
        work_tab = _code_table([la.recomputed[p] + la.gradients for p in _CODE_POLICIES], arch, seq)
        e = etp_over_tp if is_moe else None
        kinds.append(_bytes_per_token(store_tab, code, inv_sp, inv_tp, e))
        w = _bytes_per_token(work_tab, code, inv_sp, inv_tp, e)
        if is_moe:
            always, with_ep = moe_dispatch_bytes_per_pair(arch)
            w = w + arch.moe_top_k * etp_over_tp * (always + with_ep * (layout.ep > 1))
        work = np.maximum(work, w)
    return kinds, work


def _evaluate(arch: ModelArch, setup: TrainingSetup, layout: Layout, *,
              detail: bool | None) -> dict[str, FloatArray]:
    """The whole model on arrays of the layout's broadcast shape, for the three representative
    pipeline ranks of perf/stages.py (first, busiest middle, last); the GPU reported is the most
    loaded of those that exist. Branches are float masks and arithmetic, not np.where: the planner
    calls this on 1e6 layouts at a time."""
    _validate(setup, layout)
    fw = setup.framework
    sb = trained_sb = state_bytes(setup.precision, fw)
    adapter_layer = 0.0
    if setup.lora is not None:
        # LoRA: the frozen weights keep their working copy (and FP8 copies) only: no gradient, no
        # optimizer state, no step copy; the adapters carry the full states, unsharded (they are ~1%)
        sb = dataclasses.replace(sb, gradients=0.0, optimizer=0.0)
        fw = dataclasses.replace(fw, step_grad_copy_bytes=0.0)
        adapter_layer = adapter_params_per_layer(arch, setup.lora)
    f8 = np.float64
    tp, pp, dp, cp = (layout.tp.astype(f8), layout.pp.astype(f8), layout.dp.astype(f8), layout.cp.astype(f8))
    vp, mbs = layout.vp.astype(f8), layout.mbs.astype(f8)
    zero = layout.zero
    h = float(arch.hidden_size)
    inv_tp = 1.0 / tp
    single = (pp == 1.0).astype(f8)           # the first rank is also the last
    multi = 1.0 - single
    micro = np.maximum(np.ceil(setup.global_batch_size / (dp * mbs)), 1.0)
    st = resolve_stages(arch, layout, micro)
    rp = rank_params(arch, layout, st, single)

    # ---- activations: layers in flight, one layer's backward working set, the loss peak
    tokens = mbs * (setup.seq_len / cp)
    kind_tabs, work_per_token = _activation_tables(arch, setup, layout, inv_tp)
    work = tokens * work_per_token
    per_logit = fw.loss_bytes_per_logit + (tp > 1.0) * (fw.loss_bytes_per_logit_tp - fw.loss_bytes_per_logit)
    loss = per_logit * tokens * (arch.vocab_size * inv_tp)
    loss_over = np.maximum(loss - work, 0.0)     # the loss peak and the working set do not overlap
    inv_sp = inv_tp + (~layout.sp) * (1.0 - inv_tp)
    kept = 1.0 - fw.activation_offload_fraction

    dense_states = state_coefficients(zero, dp * cp, rp.dense_layer, multi, sb, fw)
    # routed experts over the expert data-parallel group tp * cp * dp / (ep * etp)
    expert_states = state_coefficients(zero, tp * cp * dp / rp.ep_etp, rp.expert_layer, multi, sb, fw) \
        if arch.is_moe else None
    parts: list[dict[str, FloatArray]] = []
    for k in range(3):
        n, moe_n, ne, ex = st.layers[k], st.moe_layers[k], rp.dense[k], rp.expert[k]
        w, g, o, step = dense_states.held(ne)
        if adapter_layer:
            lora_p = n * adapter_layer * inv_tp
            w, g, o = (w + trained_sb.weights * lora_p, g + trained_sb.gradients * lora_p,
                       o + trained_sb.optimizer * lora_p)
        params = ne
        if expert_states is not None:
            ew, eg, eo, estep = expert_states.held(ex)
            w, g, o, step, params = w + ew, g + eg, o + eo, step + estep, ne + ex
        if sb.lowp_weight_cache:     # FP8/FP4 copies of the GEMM weights (none with ZeRO-3)
            gemm = (zero < 3) * (params - rp.not_gemm[k])
            w = w + sb.lowp_weight_cache * gemm
            if fw.lowp_primary_weights:      # the low-precision copy is the parameter
                w = w - sb.weights * gemm
        per_layer = (n - moe_n) * kind_tabs[0] + (moe_n + st.mtp[k]) * kind_tabs[-1]   # MTP: the last kind
        # micro-batches each layer keeps at the rank's peak (chunk 0 may be lighter: perf/schedule_peak.py)
        per_layer_flight = np.where(n > 0.0, st.stored[k] / np.maximum(n, 1.0), st.in_flight[k] / vp)
        stored = tokens * per_layer * (per_layer_flight * kept) * kept_fraction(layout.offload, n)
        head_in = tokens * (4.0 * h) * inv_sp          # the final norm's and the head's inputs
        act = stored + rp.has_head[k] * (head_in + loss_over) + work
        if fw.step_grad_copy_bytes:    # the step's gradient copy and the activations never coexist
            o = o + np.maximum(step - act, 0.0)
        parts.append({"weights": w, "gradients": g, "optimizer": o, "activations": act,
                      "modeled": w + g + o + act, "params": params, "stored": stored})
    return _pick_rank(parts, st, pp, fw.allocator, detail, layout.shape,
                      extra={"activations_working_set": work, "loss_peak": loss, "microbatches": micro})


def _pick_rank(parts: list[dict[str, FloatArray]], st: Stages, pp: FloatArray, allocator: str,
               detail: bool | None, shape: tuple[int, ...], extra: dict[str, FloatArray]) -> dict[str, FloatArray]:
    """The terms of the most loaded existing rank, the runtime reserve on top; per-rank details
    (`detail` True), or the total alone (None: what the planner's blocks read)."""
    f8 = np.float64
    fix, frac = fitted_memory.runtime_constants(allocator)
    # absent ranks (no middle below pp 3, no separate last at pp 1) never bind
    modeled_k = [parts[k]["modeled"] * st.present[k] - (1.0 - st.present[k]) for k in range(3)]
    modeled = np.maximum(np.maximum(modeled_k[0], modeled_k[1]), modeled_k[2])
    if detail is None:
        return {"total": np.broadcast_to(np.asarray(fix + (1.0 + frac) * modeled, dtype=f8), shape)}
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
        def last(term: str) -> FloatArray:
            return np.asarray(np.where(pp > 1, parts[2][term], parts[0][term]))

        n_first, n_mid, n_last = st.layers
        out |= {
            "first_stage_total": fix + (1.0 + frac) * parts[0]["modeled"],
            "middle_stage_total": (fix + (1.0 + frac) * parts[1]["modeled"]) * st.present[1],
            "last_stage_total": fix + (1.0 + frac) * last("modeled"),
            "binding_stage": sel[1] + 2.0 * sel[2], "binding_stage_is_last": sel[2],
            "weights_first": parts[0]["weights"], "weights_last": last("weights"),
            "params_first": parts[0]["params"], "params_last": last("params"),
            "activations_stored_first": parts[0]["stored"], "activations_stored_last": last("stored"),
            "chunks_in_flight_first": st.in_flight[0],
            "layers_first": n_first, "layers_middle": n_mid, "layers_last": n_last,
        } | extra
    return {k: np.broadcast_to(np.asarray(v, dtype=f8), shape) for k, v in out.items()}


def training_memory_detail(arch: ModelArch, setup: TrainingSetup, layout: Layout) -> dict[str, FloatArray]:
    """The MEMORY_TERMS and 'total' of the binding stage, plus per-stage totals and parts:
    first_stage_total, middle_stage_total, last_stage_total, binding_stage (0 first, 1 middle,
    2 last), binding_stage_is_last, weights_first, weights_last, params_first, params_last
    (parameters held per GPU), activations_stored_first, activations_stored_last,
    activations_working_set, loss_peak, microbatches, chunks_in_flight_first, layers_*."""
    return _evaluate(arch, setup, layout, detail=True)


def training_memory_bytes(arch: ModelArch, setup: TrainingSetup, layout: Layout) -> dict[str, FloatArray]:
    """Bytes per GPU (the most loaded pipeline stage) for each of MEMORY_TERMS and 'total'."""
    return _evaluate(arch, setup, layout, detail=False)


def training_memory_total(arch: ModelArch, setup: TrainingSetup, layout: Layout) -> dict[str, FloatArray]:
    """'total' of `training_memory_bytes` alone (the same arithmetic, without the per-term picks)."""
    return _evaluate(arch, setup, layout, detail=None)


__all__ = ["MEMORY_TERMS", "STATE_BYTES", "StateBytes", "held_bytes_per_param", "state_bytes",
           "training_memory_bytes", "training_memory_detail", "training_memory_total"]
