"""Every fitted constant of the HPC model, in one place, with what it was fitted on.

All fits use only /work/shared/calibration/hpc_public.yaml, least squares on log(predicted /
published), one constant shared by every GPU (never one per record, code or GPU model). The
checks in tests/unit/test_hpc_fitted.py re-derive each value from those records.
"""

from __future__ import annotations

# --- Memory ceiling -------------------------------------------------------------------------
# Fraction of the datasheet HBM bandwidth a streaming kernel sustains. Fitted on the BabelStream
# triad / device-copy / node-burn stream records: A100-80GB 1.70 of 2.039 TB/s, H100 2.97 and
# 2.903 of 3.35 TB/s, GH200 3.70 of 4.0 TB/s (stream-babelstream-a100-azure,
# stream-babelstream-h100-azure, stream-gpu-1node-8xh100-voltagepark, stream-nodeburn-gh200-cscs).
STREAM_FRACTION = 0.8755

# Fraction of the datasheet HBM bandwidth a stencil kernel (neighbour gathers, misaligned
# streaming loads) sustains. Fitted on the FluidX3D single-GPU D3Q19 rows, FP32 and FP16S storage
# (lbm-fluidx3d-1xv100-sxm2-32gb, -1xa100-sxm4-40gb, -1xa100-sxm4-80gb): 70-84% of datasheet.
STENCIL_FRACTION = 0.7717

# --- Compute ceiling ------------------------------------------------------------------------
# Fraction of the FP64 matrix (tensor-core) peak a large DGEMM / HPL sustains when power does
# not bind, and the FP64 GEMM work per joule at the board power limit. Rate per GPU =
# min(GEMM_FRACTION x peak, GEMM_FP64_FLOPS_PER_J x TDP). Fitted on HPL per GPU and DGEMM:
# H100 45.7 TF (hpl-1node-8xh100-voltagepark), A100 11-15 TF (hpl-per-accelerator-a100-lockwood)
# and 17.4 TF (top500-2024-leonardo), MI250X 29.3 TF (top500-2022-06-frontier) and 34-36 TF
# (hpl-per-accelerator-mi250x-lockwood), GH200 DGEMM 42.7 TF (dgemm-node-burn-gh200-cscs), MI250X
# GCD DGEMM 19-27 TF (dgemm-coralgemm-mi200-cscs). AMD's 2x matrix peak is power-capped in HPL
# (MI250X 35 of 95.7 TF), which one efficiency on the peak alone cannot express.
GEMM_FRACTION = 0.7494
GEMM_FP64_FLOPS_PER_J = 63.9e9

# Fraction of the FP32/FP64 vector peak that application kernels (MD non-bonded pair kernel)
# sustain on the FLOPs they count. Fitted jointly with MD_BYTES_PER_ATOM_STEP and
# AMD_KERNEL_FRACTION on the single-GPU GROMACS and AMBER records (STMV, ADH, Cellulose on V100,
# A100 and one MI250X GCD; gromacs-*-1x*, amber-cellulose-1x*, gromacs-stmv-1gcd-mi250x-lumi-2023).
VECTOR_FRACTION = 0.3367

# Effective HBM bytes per atom per MD step outside the pair kernel (PME spread/gather and FFT,
# integration, constraints, pair-list upkeep), FP32 storage. Published bytes per atom-step were
# not found (reference/hpc.md), so this is fitted with VECTOR_FRACTION on the same MD records.
MD_BYTES_PER_ATOM_STEP = 5741.0

# Application kernels (not vendor GEMM or STREAM) on AMD GPUs reach this fraction of what the
# same kernel reaches on NVIDIA at equal peaks (ROCm/HIP code generation; reference/hpc.md:
# FluidX3D 53-66% of bandwidth on MI250/MI300X vs 76-85% on NVIDIA). Fitted with the MD
# constants above on the MI250X GCD records (GROMACS STMV, AMBER Cellulose).
AMD_KERNEL_FRACTION = 0.6988

# --- Network --------------------------------------------------------------------------------
# Fraction of the per-GPU NIC injection bandwidth an all-to-all sustains across nodes: "more than
# 70% of the peak machine bandwidth" (fft3d-cufftmp-16384cube-4096xa100, cuFFTMp on Selene).
ALL_TO_ALL_NETWORK_FRACTION = 0.70

# Per-peer cost of a large all-to-all (LogGP gap g per message): what makes the 2048^3 FFT on
# 2048 A100s take 4 ms instead of 2 ms. Fitted on fft3d-cufftmp-2048cube-2048xa100.
ALL_TO_ALL_PEER_GAP_S = 1.0e-6
