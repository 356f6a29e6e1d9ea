"""Model states per GPU (weights, gradients, optimizer) under ZeRO, for one layout or a grid.

Bytes per parameter before sharding come from the framework profile (perf/framework.py; sourced
in catalog/data/frameworks.yaml): mixed-precision Adam keeps a 16-bit working copy, a gradient and
fp32 master + moments (Rajbhandari et al. 2020, ZeRO, arXiv:1910.02054 §3: 2 + 2 + 12 with fp16
gradients; Megatron-Core dist_optimizer.md: 6 + 12/d with fp32 main gradients).

ZeRO stage z over a data-parallel group of N ranks (ZeRO paper §5.1-5.3):
    1  the optimizer states / N (Megatron-Core's distributed optimizer)
    2  also the gradients / N; one layer's unsharded gradient lives until its reduce-scatter
    3  also the parameters / N, plus the gathered working copy: two layers (current + prefetch),
       or with pp > 1 the whole stage, which FSDP does not reshard between micro-batches
       (torchtitan apply_fsdp: "For PP, do not reshard after forward to avoid per-microbatch
       all-gathers"), with the stage's unsharded gradients accumulated until the last one.
The gathered copy is held even when the group has one rank: FSDP2 keeps a sharded and an
unsharded tensor per parameter (pytorch/pytorch#114299, "Each FSDPParam manages two tensors") and
still copies in and out on a one-rank shard group (pytorch/pytorch#152710 proposes the fast path
that would skip it). So the expert weights of an MoE stage cost their gathered copy whether the
expert data-parallel group has one rank or many, and more TP never raises weight bytes.
A profile with `fsdp_param_storage` (PyTorch FSDP, FSDP2, MaxText: the fp32 parameter is the
master) stores the parameters sharded from ZeRO-2 on; its ZeRO-2 (FSDP SHARD_GRAD_OP: "parameters
are not resharded after forward") keeps every layer's gathered copy from forward to backward.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .framework import FrameworkProfile
from .layout import FloatArray, IntArray


@dataclass(frozen=True)
class StateBytes:
    """Bytes per parameter of mixed-precision Adam, before ZeRO sharding."""

    weights: float
    gradients: float
    optimizer: float
    lowp_weight_cache: float = 0.0    # FP8/FP4 copies of GEMM weights (two orientations)


# Low-precision weight copies, per copy: FP8 1 B (its tensor-wide fp32 scale is negligible);
# 128x128 blocks one fp32 scale per 16,384 weights; MXFP8 1 B + one 1-byte E8M0 scale per block of
# 32 (OCP Microscaling Formats spec v1.0); NVFP4 0.5 B + one 1-byte E4M3 scale per block of 16.
LOWP_COPY_BYTES: dict[str, float] = {"bf16": 0.0, "fp16": 0.0, "fp8": 1.0, "fp8_blockwise": 1.0 + 4 / 16384,
                                     "mxfp8": 1.0 + 1 / 32, "nvfp4": 0.5 + 1 / 16}


def state_bytes(precision: str, framework: FrameworkProfile | None = None) -> StateBytes:
    """Bytes per parameter for a precision under a framework profile (the generic one if None)."""
    if precision not in LOWP_COPY_BYTES:
        raise InputError("precision", precision, f"one of {sorted(LOWP_COPY_BYTES)}")
    fw = framework or FrameworkProfile()
    w, g, o = fw.state_bytes(precision)
    return StateBytes(weights=w, gradients=g, optimizer=o,
                      lowp_weight_cache=fw.lowp_weight_copies * LOWP_COPY_BYTES[precision])


STATE_BYTES: dict[str, StateBytes] = {p: state_bytes(p) for p in LOWP_COPY_BYTES}

# Is the term sharded over the data-parallel group at ZeRO stage 0..3? (looked up by stage)
_SHARD_W = np.array([0.0, 0.0, 0.0, 1.0])
_SHARD_G = np.array([0.0, 0.0, 1.0, 1.0])
_SHARD_O = np.array([0.0, 1.0, 1.0, 1.0])
_IS_Z2 = np.array([0.0, 0.0, 1.0, 0.0])


def held_bytes_per_param(zero: IntArray, shard: FloatArray | float, per_param: StateBytes,
                         ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(weights, gradients, optimizer) bytes this GPU holds per parameter of its model shard,
    ZeRO stage `zero` over `shard` data-parallel ranks, without transients (ZeRO paper §5.1-5.3:
    P_os at 1, P_os+g at 2, P_os+g+p at 3). Megatron's 6 + 12/d is (2, 4, 12/d) at stage 1."""
    less = 1.0 / np.asarray(shard, dtype=np.float64) - 1.0
    return (per_param.weights * (1.0 + _SHARD_W[zero] * less),
            per_param.gradients * (1.0 + _SHARD_G[zero] * less),
            per_param.optimizer * (1.0 + _SHARD_O[zero] * less))


@dataclass(frozen=True)
class StateCoefficients:
    """Per-GPU state bytes of a parameter group (dense or routed experts) as linear coefficients, so
    the three pipeline ranks cost a few multiplies each (the planner evaluates ~1e6 layouts at once):
        weights   = weights_per_param * p + gathered_live * min(live, p)
        gradients = grads_per_param * p + grads_bucket * min(bucket, p)
        optimizer = optimizer_per_param * p;  step transient = step_per_param * p
    for p parameters on the rank."""

    weights_per_param: FloatArray
    gathered_live: FloatArray
    live: FloatArray
    grads_per_param: FloatArray
    grads_bucket: FloatArray
    bucket: FloatArray
    optimizer_per_param: FloatArray
    step_per_param: FloatArray

    def held(self, params: FloatArray | float) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """(weights, gradients, optimizer, step transient) bytes of `params` parameters per GPU."""
        p = np.asarray(params, dtype=np.float64)
        weights = self.weights_per_param * p + self.gathered_live * np.minimum(self.live, p)
        grads = self.grads_per_param * p + self.grads_bucket * np.minimum(self.bucket, p)
        return weights, grads, self.optimizer_per_param * p, self.step_per_param * p


def state_coefficients(zero: IntArray, shard: FloatArray, layer: FloatArray | float, pipelined: FloatArray,
                       sb: StateBytes, fw: FrameworkProfile) -> StateCoefficients:
    """The coefficients of one parameter group under ZeRO stage `zero` over `shard` ranks; the
    group's largest layer holds `layer` parameters per GPU; `pipelined` is 1.0 where pp > 1. The
    terms (module docstring): sharded storage, the gathered working copy (two layers, or the whole
    stage when pipelined; every layer under FSDP's ZeRO-2), one layer's unsharded gradient at
    ZeRO >= 2 (the whole stage's when ZeRO-3 is pipelined), the optimizer and its step copy."""
    w, g, o = held_bytes_per_param(zero, shard, sb)
    inv = 1.0 / shard
    z3, z2, z1, is_z2 = _SHARD_W[zero], _SHARD_G[zero], _SHARD_O[zero], _IS_Z2[zero]
    gathered_all = z3 * pipelined
    if fw.fsdp_param_storage:        # ZeRO-2 shards the fp32 parameter storage and keeps every layer gathered
        w = w + is_z2 * sb.weights * (inv - 1.0)
        gathered_all = gathered_all + is_z2
    live = np.asarray(2.0 * layer, dtype=np.float64)
    if fw.zero3_live_params:
        live = np.minimum(live, fw.zero3_live_params)
    bucket = np.asarray(layer, dtype=np.float64)
    if fw.grad_bucket_params:
        bucket = np.minimum(bucket, fw.grad_bucket_params)
    g_all = sb.gradients * z3 * pipelined      # the pipelined ZeRO-3 stage's unsharded gradients
    kept = 1.0 - fw.optimizer_offload_fraction
    return StateCoefficients(
        weights_per_param=w + fw.gathered_param_bytes * gathered_all,
        gathered_live=fw.gathered_param_bytes * z3 * (1.0 - pipelined), live=live,
        grads_per_param=g + g_all, grads_bucket=sb.gradients * z2 - g_all, bucket=bucket,
        optimizer_per_param=o * kept,
        step_per_param=fw.step_grad_copy_bytes * (1.0 + z1 * (inv - 1.0)) * kept)


def held_states(zero: IntArray, shard: FloatArray, params: FloatArray | float, layer: FloatArray | float,
                pipelined: FloatArray, sb: StateBytes, fw: FrameworkProfile,
                ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """(weights, gradients, optimizer, step transient) bytes of `params` parameters per GPU; the
    step transient (the fp32 gradient copy some optimizers make) exists only after the backward."""
    return state_coefficients(zero, shard, layer, pipelined, sb, fw).held(params)


__all__ = ["LOWP_COPY_BYTES", "STATE_BYTES", "StateBytes", "StateCoefficients", "held_bytes_per_param", "held_states",
           "state_bytes", "state_coefficients"]
