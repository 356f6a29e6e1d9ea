"""Achievable rates: GEMM time from its size, and the rate of memory-bound kernels.

GEMM efficiency saturates with the GEMM's size (its FLOPs on one GPU):

    eff(F) = e_max * F / (F + F0),   F0 = e_max * peak * t0
    <=>  t(F) = F / (e_max * peak) + t0           (one kernel)

e_max is the fraction of the dense peak a large GEMM sustains (clock and power limits, tile
efficiency); t0 is the fixed cost of one kernel that does not shrink with its size (launch and
synchronization gaps, prologue/epilogue, the partly filled last wave). Both are fitted across the
calibration set (perf/fitted.py). A new accelerator enters through its datasheet peak only, and
small models or thin tensor-parallel shards lose efficiency through t0 exactly as they do on real
machines (Megatron GPT 1.7B at 41% MFU vs 462B at 47% on the same H100s).

Why size and not arithmetic intensity: the intensity form e_max * AI / (AI + c * peak/HBM_bw)
(a smoothed roofline) was fitted too. It explains no more of the calibration set (in sample
5.22% vs 5.25% MAPE, leave-one-group-out 6.18% vs 6.08%; fitted together, whichever enters first
takes the other's place): every training GEMM sits far above the ridge point (AI >= ~800 FLOP/B
against a machine balance of 150-300), so what separates small GEMMs from large ones in the
published runs is the fixed per-kernel cost, which also makes a faster GPU lose more to it.

Memory-bound kernels (norms, activations, residual adds, rotary, casts, the optimizer) stream
HBM at the BabelStream fraction of the datasheet bandwidth: triad 1.70/2.039 TB/s on A100-80GB
(83.4%) and 2.97/3.35 TB/s on H100 (88.7%), calibration/hpc_public.yaml (Azure
AI-benchmarking-guide) -> 0.86.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .layout import FloatArray

HBM_EFFICIENCY = 0.86


def gemm_efficiency(flops: Any, *, peak_flops: float, e_max: float, kernel_overhead_s: float) -> FloatArray:
    """Fraction of `peak_flops` one GEMM kernel of `flops` FLOPs sustains: e_max * F / (F + F0)."""
    f = np.asarray(flops, dtype=np.float64)
    return np.asarray(e_max * f / (f + e_max * peak_flops * kernel_overhead_s))


def gemm_time_s(flops: Any, *, peak_flops: float, e_max: float, kernel_overhead_s: float) -> FloatArray:
    """Time of one GEMM kernel of `flops` FLOPs: F / (e_max * peak) + t0."""
    return np.asarray(np.asarray(flops, dtype=np.float64) / (e_max * peak_flops) + kernel_overhead_s)


def memory_bound_s(bytes_moved: Any, hbm_bytes_per_s: float, measured_bytes_per_s: float | None = None) -> FloatArray:
    """Time to stream `bytes_moved` through HBM at the sustained (BabelStream) fraction, or at the
    sustained bandwidth measured on this accelerator (`wkc calibrate`) when there is one."""
    rate = measured_bytes_per_s or hbm_bytes_per_s * HBM_EFFICIENCY
    return np.asarray(np.asarray(bytes_moved, dtype=np.float64) / rate)
