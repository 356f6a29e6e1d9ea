"""Time of one serving step (every running sequence advances one token), scalar or grid.

A continuous-batching step runs the decode tokens of the running sequences and a chunk of prefill
tokens together (chunked prefill / in-flight batching). Per pipeline stage and GPU:

  GEMMs      for each weight group (attention, dense MLP, linear mixers, routed experts, output head) a smooth
             roofline  t = (t_mem^k + t_flop^k)^(1/k)  with
               t_mem  = weight bytes read / (HBM bandwidth * stream * HBM_EFFICIENCY)
               t_flop = 2 * tokens * params / (peak * compute * GEMM_EFFICIENCY * d / (d + GEMM_HALF_DIM))
             peak, compute and stream at the group's precision: the linear layers at the GEMM
             precision (FP8 W8A8, NVFP4 W4A4, ...), the output head in BF16 (quantized checkpoints
             keep lm_head 16-bit). compute / stream are the GPU's kernel ceilings, the measured
             share of the datasheet peak its kernels sustain (inference/kernels.py): an NVFP4
             GEMM on a B200 sustains 0.39 of 9 PFLOP/s, an FP8 GEMM on an H100 0.62 of 1,979.
             d = the smallest weight dimension the GPU holds after sharding (heads*head_dim/tp,
             ffn/tp, expert ffn/etp, vocab/tp). Experts are read only where a token lands:
             fraction 1 - (1 - top_k/E)^tokens of them (uniform routing). Where AIConfigurator
             measured TensorRT-LLM's fused MoE op (CUTLASS backend) for the GPU, weight format,
             expert shape and expert TP/EP degrees, the routed experts take that latency at the
             step's tokens instead, routing to finalize (catalog/moe_latency.py).
  attention  roofline of the KV bytes the decode tokens read (batch * context * KV/token/GPU, at
             the GPU's KV-read ceiling for the KV dtype) and the attention FLOPs (FlashAttention-
             style, causal; at the measured rate of the engine's fused attention for the KV dtype:
             FP8 FMHA over an FP8 cache, BF16 otherwise, as a share of the BF16 peak).
             A hybrid's Mamba-2 (or Gated DeltaNet) scans join it: a decode token reads and writes its sequence's
             state in every Mamba layer (vLLM selective_state_update), a prompt token costs the
             chunked scan's counted HBM traffic (arch.model ssd_scan_elements); both at the KV-read
             ceiling, their FLOPs (Megatron-LM's 7 d_inner d_state per token and layer) at the
             attention rate.
  comm       TP: 2 all-reduces per layer of tokens * hidden * 2 bytes (alpha-beta, NCCL ring,
             perf/collectives.py; latency-bound at decode). Wide EP (ep > tp): all-to-all
             dispatch + combine per MoE layer instead of the MLP all-reduce. PP: one activation
             send per stage boundary.
  step       max(pp * t_stage + PP sends, host) + STEP_OVERHEAD_S  (pp micro-batches in flight;
             host: the engine's measured host seconds per running request x the requests one
             scheduler runs, where measured for the host CPU: engines.py host_cost).

Model after the roofline tradition of GenZ (arXiv:2406.01698) and LLM-Viewer, with the
efficiencies fitted on the TensorRT-LLM tables (inference/fitted.py) instead of left at 1.0,
which over-states decode throughput 1.5-1.9x (reference/peers-inference.md §4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arch.counts import head_dims, ssm_scan_flops_per_token
from ..catalog import moe_latency
from ..perf import collectives
from ..perf.layout import FloatArray, Hardware
from . import fitted
from .kernels import KernelCeilings
from .layout import ServingLayout
from .memory import kv_bytes_per_token_per_gpu, linear_weight_bytes, ssm_state_bytes_per_gpu, stage_fraction
from .model import SIXTEEN_BIT_BYTES, ServedModel

ACTIVATION_BYTES = SIXTEEN_BIT_BYTES   # activations travel in 16 bits between GPUs


@dataclass(frozen=True, kw_only=True)
class Device:
    """The accelerator as the step model sees it: peaks at the precisions the step runs in."""

    hw: Hardware
    gemm_peak_flops: float        # dense peak of the GEMM precision (fp8 for W8A8 FP8, ...)
    attention_peak_flops: float   # dense BF16 peak (attention math and the 16-bit output head)
    gemm_precision: str
    ceilings: KernelCeilings      # measured shares of those peaks the kernels sustain
    # the engine's host seconds per running request and step on this host (engines.py host_cost):
    # overlapped with the GPU, a floor under the step
    host_s_per_request: float = 0.0


@dataclass(frozen=True, kw_only=True)
class StepTime:
    """Seconds of one step, by part; every field has the broadcast shape of the inputs."""

    gemm_s: FloatArray
    attention_s: FloatArray
    communication_s: FloatArray
    overhead_s: FloatArray
    total_s: FloatArray
    memory_s: FloatArray      # the bandwidth-bound parts alone (weights + KV streamed)
    compute_s: FloatArray     # the FLOP-bound parts alone


# The parts of a StepTime, by field name without `_s`: the keys of every step_breakdown_s.
STEP_PARTS = ("gemm", "attention", "communication", "overhead", "total", "memory", "compute")


def roofline(t_mem: Any, t_flop: Any) -> FloatArray:
    """Smooth maximum (t_mem^k + t_flop^k)^(1/k), k = ROOFLINE_EXPONENT."""
    k = fitted.ROOFLINE_EXPONENT
    a, b = np.asarray(t_mem, dtype=np.float64), np.asarray(t_flop, dtype=np.float64)
    return np.asarray((a**k + b**k) ** (1.0 / k))


def sustained(multiplier: float, ceiling: float) -> float:
    """Share of a datasheet peak reached: the fitted multiplier on the measured kernel ceiling,
    never more than the datasheet itself."""
    return min(1.0, multiplier * ceiling)


def streaming_bytes_per_s(hw: Hardware, ceiling: float) -> float:
    """Bytes/s a step streams weights or KV cache at: the sustained HBM bandwidth measured on this
    machine (`wkc calibrate`) when there is one, else datasheet x sustained(HBM_EFFICIENCY, ceiling)."""
    return hw.measured.hbm_bytes_per_s or hw.hbm_bandwidth_bytes_per_s * sustained(fitted.HBM_EFFICIENCY, ceiling)


def gemm_efficiency(dim: Any) -> FloatArray:
    """GEMM_EFFICIENCY * d / (d + GEMM_HALF_DIM): the multiplier on the GEMM ceiling at the
    smallest sharded weight dimension d."""
    d = np.maximum(np.asarray(dim, dtype=np.float64), 1.0)
    return np.asarray(fitted.GEMM_EFFICIENCY * d / (d + fitted.GEMM_HALF_DIM))


def _gemm_groups(m: ServedModel, lay: ServingLayout, tokens_gpu: FloatArray, tokens_stage: FloatArray,
                 logit_tokens_gpu: FloatArray) -> list[tuple[FloatArray, FloatArray, FloatArray, bool]]:
    """(weight bytes read, FLOPs, smallest sharded weight dim, 16-bit) per GPU and stage, per group;
    16-bit marks the output head, which stays BF16 in quantized checkpoints."""
    a = m.arch
    stage = stage_fraction(a.layers, lay.pp)
    head_bytes = m.head_params * m.embedding_bytes_per_param / lay.tp / lay.pp   # once per step
    expert_bytes_total = m.expert_params * m.expert_bytes_per_param * stage / lay.moe_group
    dense_bytes = linear_weight_bytes(m) * stage / lay.tp
    q_width = a.attention_heads * head_dims(a)[0]
    attn_params = m.attention_params * stage / lay.tp
    mlp_params = (m.dense_mlp_params + m.shared_params) * stage / lay.tp
    non_expert = max(m.attention_params + m.dense_mlp_params + m.shared_params + m.mamba_params, 1.0)
    attn_bytes = dense_bytes * m.attention_params / non_expert
    mamba_bytes = dense_bytes * m.mamba_params / non_expert
    shared_ffn = a.moe_shared_ffn_hidden_size or a.moe_ffn_hidden_size
    mlp_dim = (a.ffn_hidden_size if a.mlp_blocks else shared_ffn) / lay.tp
    head_16bit = m.embedding_bytes_per_param > m.linear_bytes_per_param
    groups = [
        (np.asarray(attn_bytes), np.asarray(2.0 * tokens_gpu * attn_params), np.asarray(q_width / lay.tp), False),
        (np.asarray(dense_bytes - attn_bytes - mamba_bytes), np.asarray(2.0 * tokens_gpu * mlp_params),
         np.asarray(mlp_dim), False),
        (np.asarray(head_bytes), np.asarray(2.0 * logit_tokens_gpu * m.head_params / lay.tp / lay.pp),
         np.asarray(a.vocab_size / lay.tp), head_16bit),
    ]
    if m.mamba_params:
        groups.append((np.asarray(mamba_bytes), np.asarray(2.0 * tokens_gpu * m.mamba_params * stage / lay.tp),
                       np.asarray(a.mamba_inner / lay.tp), False))
    if a.is_moe:
        touched = 1.0 - (1.0 - a.moe_top_k / a.moe_experts) ** np.maximum(tokens_stage, 0.0)
        expert_flops = 2.0 * tokens_stage * m.active_expert_params() * stage / lay.moe_group
        groups.append((np.asarray(expert_bytes_total * touched), np.asarray(expert_flops),
                       np.asarray(a.moe_ffn_hidden_size / lay.etp), False))
    return groups


def step_time(m: ServedModel, dev: Device, lay: ServingLayout, *, decode_seqs: Any, prefill_tokens: Any,
              decode_context: Any, prefill_context: Any) -> StepTime:
    """One step of a replica: `decode_seqs` sequences each emit a token while `prefill_tokens`
    prompt tokens are processed; `decode_context` is the mean cached length a decode token
    attends to, `prefill_context` the prompt length (causal: a prompt token sees half on average).
    """
    a, hw, ceil = m.arch, dev.hw, dev.ceilings
    groups_per_stage = lay.pp * lay.dp_attn
    dec_gpu = np.asarray(decode_seqs, dtype=np.float64) / groups_per_stage
    pre_gpu = np.asarray(prefill_tokens, dtype=np.float64) / groups_per_stage
    tok_gpu = dec_gpu + pre_gpu                       # tokens one attention group runs per micro-batch
    tok_stage = np.asarray(tok_gpu * lay.dp_attn, dtype=np.float64)   # what one stage's experts see
    t_mem = np.zeros(np.broadcast_shapes(np.shape(tok_gpu), lay.shape))
    t_flop = np.zeros_like(t_mem)
    gemm = np.zeros_like(t_mem)
    groups = _gemm_groups(m, lay, tok_gpu, tok_stage, dec_gpu)
    measured = measured_experts_s(m, dev, lay, tok_stage)
    for i, (w_bytes, flops, dim, sixteen_bit) in enumerate(groups):
        if sixteen_bit:
            peak, compute, stream = dev.attention_peak_flops, ceil.head_compute, ceil.head_stream
        else:
            peak, compute, stream = dev.gemm_peak_flops, ceil.gemm_compute, ceil.gemm_stream
        tm = w_bytes / streaming_bytes_per_s(hw, stream)
        tf = flops / (peak * np.minimum(1.0, compute * gemm_efficiency(dim)))
        t = roofline(tm, tf)
        if measured is not None and i == len(groups) - 1:   # the routed experts (_gemm_groups puts them last)
            t_op = np.where(np.isnan(measured), t, measured)
            share = np.divide(t_op, t, out=np.ones_like(t_op), where=t > 0)
            tm, tf, t = tm * share, np.where(t > 0, tf * share, t_op), t_op
        gemm = gemm + t
        t_mem, t_flop = t_mem + tm, t_flop + tf
    kv_read = dec_gpu * m.kv_tokens_read(decode_context) * kv_bytes_per_token_per_gpu(m, lay)
    stage = stage_fraction(a.layers, lay.pp)
    heads_share = 1.0 / lay.tp
    attn_flops = (pre_gpu * m.attention_flops_per_token(np.asarray(prefill_context) / 2.0)
                  + dec_gpu * m.attention_flops_per_token(decode_context)) * heads_share * stage
    if a.mamba_layers:
        scan_flops, scan_bytes = _ssm_scan(m, lay, dec_gpu, pre_gpu)
        attn_flops, kv_read = attn_flops + scan_flops, kv_read + scan_bytes
    ta_mem = kv_read / streaming_bytes_per_s(hw, ceil.kv_stream)
    ta_flop = attn_flops / (dev.attention_peak_flops * sustained(fitted.GEMM_EFFICIENCY, ceil.attention_compute))
    attention = roofline(ta_mem, ta_flop)
    comm = _communication_s(m, hw, lay, tok_gpu)
    t_stage = gemm + attention + comm
    p2p_bw, p2p_lat = collectives.link_bw_latency(lay.tp * lay.dp_attn * 2, hw)
    sends = (lay.pp - 1) * collectives.p2p_s(tok_gpu * a.hidden_size * ACTIVATION_BYTES, p2p_bw, p2p_lat)
    overhead = np.full_like(t_stage, fitted.STEP_OVERHEAD_S)
    pp = lay.pp.astype(np.float64)
    total = pp * t_stage + sends
    if dev.host_s_per_request:
        # the host prepares the next step while the GPU runs this one: the step takes the longer of
        # the two; each attention-DP rank schedules its own requests (decoding + this step's prompts)
        requests = (np.asarray(decode_seqs, dtype=np.float64) + np.asarray(prefill_tokens, dtype=np.float64)
                    / np.maximum(np.asarray(prefill_context, dtype=np.float64), 1.0)) / lay.dp_attn
        total = np.maximum(total, dev.host_s_per_request * requests)
    total = total + overhead
    return StepTime(gemm_s=np.asarray(pp * gemm), attention_s=np.asarray(pp * attention),
                    communication_s=np.asarray(pp * comm + sends), overhead_s=overhead,
                    total_s=np.asarray(total), memory_s=np.asarray(pp * (t_mem + ta_mem)),
                    compute_s=np.asarray(pp * (t_flop + ta_flop)))


# serving weight format -> the format of the measured MoE op table (catalog/moe_latency.py); fp16
# weights take the bf16 rows: the same 16-bit tensor-core rate and bytes per weight (an approximation
# the table cannot check: AIConfigurator measured no fp16 MoE op)
MEASURED_MOE_FORMATS = {"nvfp4": "nvfp4", "fp8": "fp8", "fp8-block128": "fp8-block128", "bf16": "bf16",
                        "fp16": "bf16"}


def _moe_op_key(m: ServedModel) -> tuple[str, int, int, int, int] | None:
    """(table format, hidden, expert inter size, experts, top-k) of a model whose routed experts the
    measured MoE op table can describe (plain routed MoE layers, a format it holds), else None."""
    a = m.arch
    weights = MEASURED_MOE_FORMATS.get(m.weights)
    if not a.is_moe or a.is_hybrid or a.moe_latent_size or weights is None:
        return None
    return weights, a.hidden_size, a.moe_ffn_hidden_size, a.moe_experts, a.moe_top_k


def moe_op_measured(m: ServedModel, dev: Device, etp: int, ep: int) -> bool:
    """Whether the routed experts of this model run at the measured MoE op on this GPU and degrees."""
    key = _moe_op_key(m)
    return key is not None and moe_latency.measured(dev.hw.accelerator_id, *key, etp, ep)


def measured_experts_s(m: ServedModel, dev: Device, lay: ServingLayout, tok_stage: Any) -> FloatArray | None:
    """Seconds of one stage's routed experts per micro-batch from TensorRT-LLM's measured MoE op
    (catalog/moe_latency.py: the whole op, routing to finalize, at the step's tokens across the EP
    group) x the stage's MoE layers; NaN for the layouts whose expert shape and degrees were not
    measured on this GPU and format; None where none was (the modelled GEMMs then stand)."""
    key = _moe_op_key(m)
    if key is None:
        return None
    etp, ep = np.broadcast_arrays(lay.etp, lay.ep)
    out = np.full(np.broadcast_shapes(etp.shape, np.shape(tok_stage)), np.nan)
    found = False
    for t, e in {(int(t), int(e)) for t, e in zip(etp.ravel(), ep.ravel(), strict=True)}:
        sec = moe_latency.moe_op_seconds(dev.hw.accelerator_id, *key, t, e, tok_stage)
        if sec is not None:
            out = np.where((etp == t) & (ep == e), sec, out)
            found = True
    if not found:
        return None
    return np.asarray(out * m.arch.moe_layers * stage_fraction(m.arch.layers, lay.pp))


def _ssm_scan(m: ServedModel, lay: ServingLayout, dec_gpu: FloatArray,
              pre_gpu: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(FLOPs, HBM bytes) of a hybrid's Mamba-2 scans per GPU and stage (formulas in the module
    docstring); the heads are split over TP."""
    a = m.arch
    share = stage_fraction(a.layers, lay.pp) / lay.tp
    flops = (dec_gpu + pre_gpu) * ssm_scan_flops_per_token(a) * share
    state_rw = 2.0 * dec_gpu * ssm_state_bytes_per_gpu(m, lay)
    prompt = pre_gpu * a.ssd_scan_elements * SIXTEEN_BIT_BYTES * a.mamba_layers * share
    return np.asarray(flops), np.asarray(state_rw + prompt)


def _communication_s(m: ServedModel, hw: Hardware, lay: ServingLayout, tok_gpu: FloatArray) -> FloatArray:
    """TP all-reduces (one per residual block: 2 per transformer layer, 1 per hybrid layer; none
    after a MoE block when wide EP moves it to all-to-all) and the EP dispatch + combine, per stage."""
    a = m.arch
    blocks_stage = a.blocks_per_layer * np.ceil(a.layers / lay.pp)
    msg = tok_gpu * a.hidden_size * ACTIVATION_BYTES
    ar = collectives.group_all_reduce_s(msg, lay.tp, 1, hw)
    wide = lay.ep > lay.tp
    moe_stage = np.ceil(a.moe_blocks / lay.pp) if a.is_moe else 0.0
    n_ar = np.where(wide, blocks_stage - moe_stage, blocks_stage)
    dispatch = tok_gpu / lay.tp * a.moe_top_k * a.moe_width * ACTIVATION_BYTES if a.is_moe else 0.0
    a2a = collectives.group_all_to_all_s(dispatch, lay.ep, lay.tp, hw) if a.is_moe else 0.0
    return np.asarray(n_ar * ar + np.where(wide, 2.0 * moe_stage * a2a, 0.0))
