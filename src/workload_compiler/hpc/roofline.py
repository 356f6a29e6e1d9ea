"""Roofline time of one step on one GPU, vectorized over the units each GPU holds.

For each kernel k of a step (hpc/classes.py),

    t_k = max(F_k n / (P_peak e_c), B_k n / (BW_peak e_m))        (Williams, Waterman & Patterson,
                                                                   CACM 52(4), 2009: roofline)

softened where compute and memory overlap imperfectly, t_k = (t_c^k + t_m^k)^(1/k) (`overlapped`;
k fitted): a kernel near the ridge (FluidX3D FP16S on A100) runs below both ceilings.

and the step is sum_k t_k plus the kernel launches. One kernel is the brief's formula
max(FLOPs/(peak x eff), bytes/(bw x eff)); classes whose step runs a compute-bound and a
memory-bound kernel one after the other (MD: pair kernel, then PME and update) add their times.
Efficiencies e_c, e_m are the few fitted constants of hpc/fitted.py, shared by every GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CatalogGap
from ..perf.layout import FloatArray
from .classes import Code, Kernel, Profile
from .device import Device
from .fitted import FITTED, HpcConstants

# ASSUMED: share of the vector peak a compute-bound vector kernel sustains (no calibration record
# has one: LBM, FFT and stencil kernels are memory bound); of the order of the fitted STREAM share
# of the bandwidth (hpc/fitted.py stream_fraction, 0.88), not fitted itself.
VECTOR_FRACTION = 0.85
# ASSUMED: host-side cost of one kernel launch on a GPU-resident step (CUDA/HIP launch + stream
# order, a few microseconds; CUDA Graphs lower it). Sets the floor of a step at small sizes.
LAUNCH_OVERHEAD_S = 2.0e-6

ROOFLINE_FORMULA = "roofline: sum over kernels of max(FLOPs/(peak x e_c), bytes/(HBM bw x e_m)) + launches"


def peak_flops(device: Device, arithmetic: str, compute: str, field: str = "precision") -> tuple[float, str]:
    """(dense peak FLOP/s, which catalog figure) for the arithmetic of a kernel.

    GEMM kernels use the matrix units (FP64 tensor where listed, else FP64 vector; FP16/BF16
    tensor for mixed/half precision); vector kernels use the vector FP64/FP32 peak. A figure the
    catalog does not hold is a CatalogGap: nothing is extrapolated from another precision.
    """
    if arithmetic == "fp64":
        if compute == "gemm" and device.peak_fp64_matrix is not None:
            value, name = max((device.peak_fp64_matrix, "peak_flops.fp64_tensor"),
                              (device.peak_fp64 or 0.0, "peak_flops.fp64"))
        else:
            value, name = device.peak_fp64 or 0.0, "peak_flops.fp64"
    elif arithmetic == "fp16" and compute == "gemm":
        value, name = device.peak_fp16 or 0.0, "peak_flops.fp16"
    else:   # fp32, and half-precision data computed on the FP32 vector units
        value, name = device.peak_fp32 or 0.0, "peak_flops.fp32"
    if value <= 0.0:
        raise CatalogGap([f"accelerators.{device.accelerator_id}.{name}"],
                         f"the {arithmetic.upper()} roofline (the compute layer)", field=field, value=arithmetic,
                         hint="not published, or not supported: choose another precision or accelerator, "
                              "or add the figure in a user catalog directory")
    return value, name


def compute_rate(device: Device, kernel: Kernel, arithmetic: str, c: HpcConstants = FITTED) -> float:
    """Sustained FLOP/s of a kernel on one GPU.

    GEMM: min(gemm_fraction x peak, gemm_fp64_flops_per_j x TDP) for FP64 (the board power limit
    binds HPL on GPUs with a doubled matrix peak); the MD pair kernel: md_pair_fraction x peak;
    other vector kernels: VECTOR_FRACTION x peak; both x the AMD share of the kernel's code on AMD.
    """
    peak, _ = peak_flops(device, arithmetic, kernel.compute)
    if kernel.compute == "gemm":
        rate = c.gemm_fraction * peak
        if arithmetic == "fp64" and device.tdp_w is not None:
            rate = min(rate, c.gemm_fp64_flops_per_j * device.tdp_w)
        return rate
    share = c.md_pair_fraction if kernel.compute == "md_pair" else VECTOR_FRACTION
    return share * peak * vendor_fraction(device, kernel.code, c)


def memory_rate(device: Device, access: str, code: Code = "application", c: HpcConstants = FITTED) -> float:
    """Sustained HBM bytes/s: stream_fraction or stencil_fraction of the datasheet bandwidth, x the
    AMD share of the code on AMD (application kernels, the FFT library; none for STREAM itself)."""
    share = c.stencil_fraction if access == "stencil" else c.stream_fraction
    # A stream bandwidth measured on this accelerator replaces stream_fraction x datasheet; a stencil
    # keeps its fitted ratio to streaming.
    measured = device.measured_hbm_bytes_per_s
    base = measured * share / c.stream_fraction if measured else device.memory_bandwidth_bytes_per_s * share
    return base * vendor_fraction(device, code, c)


def vendor_fraction(device: Device, code: Code = "application", c: HpcConstants = FITTED) -> float:
    """What a kernel of this code reaches on AMD relative to the same kernel on NVIDIA at equal
    ceilings (hpc/fitted.py): application kernels (HIP/SYCL ports) and the FFT library (rocFFT vs
    cuFFT) separately; 1 for the STREAM benchmark and on NVIDIA."""
    if not device.is_amd or code == "benchmark":
        return 1.0
    return c.amd_fft_fraction if code == "fft_library" else c.amd_kernel_fraction


def overlapped(tc: FloatArray, tm: FloatArray, exponent: float) -> FloatArray:
    """Time of a kernel whose arithmetic (tc) and memory traffic (tm) overlap imperfectly:
    (tc^k + tm^k)^(1/k), the roofline's max(tc, tm) as k -> infinity and their sum at k = 1. A
    kernel near the ridge loses most (both halves 1: 2^(1/k)); one far from it keeps max."""
    hi = np.maximum(tc, tm)
    lo = np.minimum(tc, tm)
    ratio = np.divide(lo, hi, out=np.zeros_like(hi), where=hi > 0)
    return np.asarray(hi * (1.0 + ratio**exponent) ** (1.0 / exponent))


@dataclass(frozen=True, kw_only=True)
class KernelTime:
    """Seconds per step on one GPU, split by what bounds each kernel (arrays of one shape)."""

    compute_s: FloatArray
    memory_s: FloatArray
    launch_s: FloatArray

    @property
    def total_s(self) -> FloatArray:
        return np.asarray(self.compute_s + self.memory_s + self.launch_s)


def kernel_time(profile: Profile, device: Device, units_per_gpu: Any, c: HpcConstants = FITTED) -> KernelTime:
    """Roofline time of the profile's kernels for `units_per_gpu` (scalar or array)."""
    n = np.asarray(units_per_gpu, dtype=np.float64)
    compute = np.zeros_like(n)
    memory = np.zeros_like(n)
    for k in profile.kernels:
        flops_s = compute_rate(device, k, profile.arithmetic, c) if k.flops_per_unit else 1.0
        bytes_s = memory_rate(device, k.access, k.code, c) if k.bytes_per_unit else 1.0
        tc = k.flops_per_unit * n / flops_s
        tm = k.bytes_per_unit * n / bytes_s
        t = overlapped(tc, tm, c.roofline_overlap_exponent)
        compute = compute + np.where(tc >= tm, t, 0.0)
        memory = memory + np.where(tc >= tm, 0.0, t)
    launch = np.full_like(n, profile.launches_per_step * LAUNCH_OVERHEAD_S)
    return KernelTime(compute_s=compute, memory_s=memory, launch_s=launch)
