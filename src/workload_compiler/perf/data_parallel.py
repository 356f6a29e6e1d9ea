"""Data-parallel gradient and parameter communication, and the optimizer step, per training step;
and the share of an overlapped collective that stays on the critical path (step_time.py reads both)."""

from __future__ import annotations

import numpy as np

from ..arch.counts import param_counts
from ..arch.model import ModelArch
from . import collectives as coll
from .efficiency import memory_bound_s
from .fitted import TrainingConstants
from .layout import FloatArray, Hardware, Layout

ADAM_BYTES_PER_PARAM = 30.0  # read fp32 p, g, m, v (16) + write p, m, v (12) + write bf16 p (2)


def exposed_s(comm_s: FloatArray, window_s: FloatArray, k: TrainingConstants) -> FloatArray:
    """Communication left on the critical path when it runs beside `window_s` of compute: what
    does not fit in the window, plus the contention share of what does (NCCL kernels take SMs and
    HBM bandwidth from the compute they overlap)."""
    hidden = np.minimum(comm_s, window_s)
    return np.asarray(comm_s - hidden + k.overlap_contention * hidden)


def data_parallel_s(a: ModelArch, layout: Layout, hw: Hardware, t_mb: FloatArray, micro: FloatArray,
                    full: FloatArray, k: TrainingConstants, grad_bytes: float,
                    gather_bytes: float, adapters: float | None = None) -> tuple[FloatArray, FloatArray]:
    """(exposed gradient/parameter communication, optimizer step) per step.

    ZeRO 0: all-reduce of the gradients behind the last micro-batch's backward. ZeRO 1/2
    (distributed optimizer): reduce-scatter of the gradients behind the last backward, all-gather
    of the parameters behind the next first forward (Megatron --overlap-grad-reduce /
    --overlap-param-gather). ZeRO 3 / FSDP: every micro-batch gathers the parameters for the
    forward and again for the backward and reduce-scatters the gradients, each behind that pass.
    Dense weights sync over dp*cp ranks tp apart, experts over the expert-data-parallel group.
    With LoRA (`adapters` trained parameters) only the adapters' gradients are reduced and updated,
    and the frozen weights are gathered only where ZeRO-3 shards them.
    """
    c = param_counts(a)
    f64 = np.float64
    tp, pp, dp, cp = (np.asarray(x, dtype=f64) for x in (layout.tp, layout.pp, layout.dp, layout.cp))
    ep_etp = np.asarray(layout.ep * layout.etp, dtype=f64)
    body = c.non_expert_params - c.embedding - c.output_head
    dense = (body / pp + max(c.embedding, c.output_head)) / tp   # the stage holding an embedding
    expert = c.expert_params / pp / ep_etp
    n_dense, n_exp = dp * cp, dp * cp * tp / ep_etp

    trained = 1.0 if adapters is None else adapters / c.total

    def sync(bytes_per_param: float, share: float | FloatArray = 1.0) -> FloatArray:
        """Reduce-scatter (or all-gather: the same cost) of `share` of the stage's parameters."""
        rs = coll.group_reduce_scatter_s
        return np.asarray(rs(dense * share * bytes_per_param, n_dense, tp, hw)
                          + rs(expert * share * bytes_per_param, n_exp, ep_etp, hw))

    grads = sync(grad_bytes, trained)
    # without adapters every parameter is gathered whatever the stage: no ZeRO axis in these arrays
    # (the step model's hottest term; the planner's blocks broadcast ZeRO along its own axis)
    params = sync(gather_bytes, 1.0 if adapters is None else np.where(layout.zero >= 3, 1.0, trained))
    w_fwd = t_mb / (3.0 + full)
    w_bwd = t_mb - w_fwd
    zero = layout.zero
    exposed = np.where(
        zero >= 3, micro * (exposed_s(params, w_fwd, k) + exposed_s(params + grads, w_bwd, k)),
        np.where(zero >= 1, exposed_s(grads, w_bwd, k) + exposed_s(params, w_fwd, k),
                 exposed_s(2.0 * grads, w_bwd, k)))          # all-reduce = reduce-scatter + all-gather
    shard_dense = np.where(zero >= 1, n_dense, 1.0)
    shard_exp = np.where(zero >= 1, n_exp, 1.0)
    optimizer = memory_bound_s(ADAM_BYTES_PER_PARAM * trained * (dense / shard_dense + expert / shard_exp),
                               hw.hbm_bandwidth_bytes_per_s, hw.measured.hbm_bytes_per_s)
    return np.asarray(exposed), np.asarray(optimizer)
