"""Simple stand-in memory and step-time models for the planner tests.

They have the shape of the real ones (perf/memory.py, perf/step_time.py: NumPy arrays in, arrays
of the layout's broadcast shape out) and the trade-offs that make a search meaningful (sharding
saves memory, recompute costs time, the pipeline bubble shrinks with micro-batches and virtual
stages, data parallelism costs a gradient all-reduce), so the planner is tested on its own: its
grid, masks, ranking and census, not the physics.
"""

from __future__ import annotations

import numpy as np

from workload_compiler.arch.counts import param_counts, training_flops_per_token
from workload_compiler.arch.model import ModelArch
from workload_compiler.perf.layout import FloatArray, Hardware, Layout, TrainingSetup
from workload_compiler.perf.step_time import StepResult

# none, selective, full, op_selective, modules, mla_up_proj
ACT_BYTES_PER_TOKEN_PER_H = np.array([34.0, 18.0, 2.0, 12.0, 26.0, 28.0])
RECOMPUTE_EXTRA = np.array([0.0, 0.05, 1.0 / 3.0, 0.12, 0.02, 0.03])   # extra compute per recompute mode
RUNTIME_BYTES = 2e9
STANDIN_EFFICIENCY = 0.5


def memory(arch: ModelArch, setup: TrainingSetup, layout: Layout) -> dict[str, FloatArray]:
    c = param_counts(arch)
    tp, pp, dp, cp = (layout.tp.astype(float), layout.pp.astype(float), layout.dp.astype(float),
                      layout.cp.astype(float))
    params = c.non_expert_params / (tp * pp) + c.expert_params / (layout.ep * layout.etp * pp)
    shard = dp * cp
    w = 2.0 * params / np.where(layout.zero >= 3, shard, 1.0)
    g = 4.0 * params / np.where(layout.zero >= 2, shard, 1.0)
    o = 12.0 * params / np.where(layout.zero >= 1, shard, 1.0)
    micro = setup.global_batch_size / (dp * layout.mbs)
    tokens = layout.mbs * setup.seq_len / cp
    per_layer = (ACT_BYTES_PER_TOKEN_PER_H[layout.recompute] * tokens * arch.hidden_size
                 / np.where(layout.sp, tp, 1.0))
    act = per_layer * arch.layers / pp * np.minimum(pp, micro)
    runtime = np.full(np.shape(w), RUNTIME_BYTES)
    out = {"weights": w, "gradients": g, "optimizer": o, "activations": act, "runtime": runtime}
    shape = layout.shape
    out = {k: np.broadcast_to(np.asarray(v, dtype=float), shape) for k, v in out.items()}
    out["total"] = np.asarray(sum(out.values()), dtype=float)
    return out


def step(arch: ModelArch, setup: TrainingSetup, layout: Layout, hw: Hardware) -> StepResult:
    gpus = layout.gpus.astype(float)
    tp, pp, dp = layout.tp.astype(float), layout.pp.astype(float), layout.dp.astype(float)
    tokens = setup.global_batch_size * setup.seq_len
    flops = training_flops_per_token(arch, setup.seq_len) * tokens
    compute = (flops / (gpus * hw.peak_flops_bf16 * STANDIN_EFFICIENCY)
               * (1 + RECOMPUTE_EXTRA[layout.recompute]))
    # Small micro-batches run GEMMs less efficiently: a fixed cost per micro-batch and layer.
    micro = setup.global_batch_size / (dp * layout.mbs)
    per_micro = 1e-4 * micro * arch.layers / pp
    tp_comm = 0.05 * compute * (tp - 1) / tp
    bubble = (compute + per_micro) * (pp - 1) / (layout.vp * micro)
    grad_bytes = 4.0 * param_counts(arch).total / (tp * pp)
    dp_comm = np.where(dp > 1, grad_bytes / hw.scale_out_bandwidth_bytes_per_s * 0.1, 0.0)
    dp_comm = dp_comm * np.where(layout.zero >= 3, 3.0, 1.0)
    terms = {"compute": compute, "micro_batch_overhead": per_micro, "tp_comm": tp_comm, "pp_bubble": bubble,
             "dp_comm_exposed": dp_comm}
    shape = layout.shape
    breakdown = {k: np.broadcast_to(np.asarray(v, dtype=float), shape) for k, v in terms.items()}
    total = np.asarray(sum(breakdown.values()), dtype=float)
    tps = tokens / total
    model_flops = flops / total / gpus
    mfu = model_flops / hw.peak_flops_bf16
    return StepResult(step_time_s=total, breakdown_s=breakdown, tokens_per_s=tps,
                      model_flops_per_gpu_per_s=model_flops, mfu=mfu, mfu_bf16=mfu)


def hardware(*, hbm_bytes: float = 80e9, domain: int = 8, node: int = 8) -> Hardware:
    """An A100-like machine (the numbers only need to be plausible for a stand-in)."""
    return Hardware(accelerator_id="test-gpu", system_id="test-node", peak_flops_bf16=312e12,
                    peak_flops_fp8=None, peak_flops_fp4=None, hbm_bytes=hbm_bytes,
                    hbm_bandwidth_bytes_per_s=2.0e12,
                    scale_up_bandwidth_bytes_per_s=300e9, scale_up_domain_gpus=domain, gpus_per_node=node,
                    scale_out_bandwidth_bytes_per_s=25e9, tdp_w=400.0)


def small_arch(*, layers: int = 4, hidden: int = 256, heads: int = 8, kv_heads: int | None = None,
               ffn: int | None = None, experts: int = 0, top_k: int = 0) -> ModelArch:
    return ModelArch(name="tiny", layers=layers, hidden_size=hidden, attention_heads=heads,
                     kv_heads=kv_heads or heads, head_dim=hidden // heads, ffn_hidden_size=ffn or 4 * hidden,
                     vocab_size=1000, moe_experts=experts, moe_top_k=top_k,
                     moe_ffn_hidden_size=(ffn or 4 * hidden) if experts else 0)
