"""Achievable rates: GEMM efficiency from the per-GPU GEMM shape, and the memory-bound rate.

GEMM efficiency (fraction of the dense peak of the GEMM's precision) is a smooth roofline of the
GEMM's arithmetic intensity against the machine balance:

    AI      = 2 m n k / (b (m k + k n + m n))         FLOP per HBM byte, b bytes per element
    balance = peak_flops / hbm_bandwidth               FLOP per byte at the ridge point
    eff     = e_max * AI / (AI + c * balance)

Why this form: a GEMM's time is its compute time plus the part of its operand traffic the
pipeline does not hide, t = F/(e_max P) + c' * bytes/(e_max BW), which is exactly the
saturating function above (Williams, Waterman & Patterson 2009, "Roofline", with the max()
smoothed into a sum). It needs no table per GPU: a new accelerator enters only through its
datasheet peak and HBM bandwidth, so B200, MI300X or an FP8 GEMM on H100 are predicted from the
same two fitted constants (e_max: the best fraction of peak a large GEMM sustains, clock and
power limits included; c: how much more traffic than the compulsory m k + k n + m n a tiled
kernel moves, wave quantization and tails folded in). The intensity is symmetric in (m, n, k),
so the two backward GEMMs (dgrad, wgrad) of a layer run at the forward GEMM's efficiency.

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


def arithmetic_intensity(m: Any, n: Any, k: Any, bytes_per_element: float) -> FloatArray:
    """FLOP per compulsory HBM byte of an (m x k) @ (k x n) GEMM."""
    m, n, k = (np.asarray(x, dtype=np.float64) for x in (m, n, k))
    return np.asarray(2.0 * m * n * k / (bytes_per_element * (m * k + k * n + m * n)))


def gemm_efficiency(m: Any, n: Any, k: Any, *, bytes_per_element: float, peak_flops: float,
                    hbm_bytes_per_s: float, e_max: float, balance_mult: float) -> FloatArray:
    """Fraction of `peak_flops` an (m, n, k) GEMM sustains: e_max * AI / (AI + c * balance)."""
    ai = arithmetic_intensity(m, n, k, bytes_per_element)
    balance = peak_flops / hbm_bytes_per_s
    return np.asarray(e_max * ai / (ai + balance_mult * balance))


def gemm_time_s(flops: Any, m: Any, n: Any, k: Any, *, bytes_per_element: float, peak_flops: float,
                hbm_bytes_per_s: float, e_max: float, balance_mult: float) -> FloatArray:
    """Time of `flops` worth of GEMMs of shape (m, n, k) at the efficiency above."""
    eff = gemm_efficiency(m, n, k, bytes_per_element=bytes_per_element, peak_flops=peak_flops,
                          hbm_bytes_per_s=hbm_bytes_per_s, e_max=e_max, balance_mult=balance_mult)
    return np.asarray(np.asarray(flops, dtype=np.float64) / (peak_flops * eff))


def memory_bound_s(bytes_moved: Any, hbm_bytes_per_s: float) -> FloatArray:
    """Time to stream `bytes_moved` through HBM at the sustained (BabelStream) fraction."""
    return np.asarray(np.asarray(bytes_moved, dtype=np.float64) / (hbm_bytes_per_s * HBM_EFFICIENCY))
