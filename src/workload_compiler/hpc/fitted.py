"""Every fitted constant of the HPC model, in one place, with what it was fitted on.

All fits use only ../shared/calibration/hpc_public.yaml: least squares on log(predicted /
published), each constant shared by every GPU (never one per record, code or GPU model).
`hpc/fit.py` re-derives them from the validation cases (validation/hpc_readers.py), starting from
PRIORS; tests/unit/test_hpc_validation.py checks that refitting reproduces the frozen values below.

Figures (2026-12, `wkc validate --suite hpc --leave-one-gpu-out`; MAPE of each record's own
published figure; 43 cases from 33 records, 38 records listed as not expressible with the reason):

    in sample        6.6% overall   a100 6.2  gh200 3.9  h100 7.1  mi250x 10.1  v100 3.6
                                    cfd:lbm 4.2  fft 8.5  hpl 10.6  dgemm 12.5  stream 3.2
                                    md:gromacs 4.7  md:amber 6.5  collective 14.2
    leave-one-GPU-out 8.5% overall  a100 7.3  gh200 5.0  h100 7.2  v100 3.9  mi250x 15.2
                                    cfd:lbm 5.8  fft 16.7  hpl 9.7  dgemm 13.0  stream 4.0
                                    md:gromacs 4.0  md:amber 7.6  collective 14.2
                                    (max 39.5%: the 256^3 FFT on one MI250X GCD)

Each held-out family is predicted by constants refitted from PRIORS without its cases and records,
so a constant only that family's records identify stays at its prior. MI250X is the public set's
only AMD GPU and its only 1- vs N-GPU MD pair: held out, the two AMD shares and the MD Amdahl share
are PRIORS' values, the published figures of other GPUs (FluidX3D on MI355X, 3-D FFT on MI300A
against GH200, GROMACS STMV 1 to 4 GH200; ../shared/reference/hpc.md), hence mi250x 15.2% (FFT
+21 to +40%, DGEMM -23%). Before 2026-12-04 those priors were 1, 1 and 0 (no AMD share, no serial
part) and MI250X held out read 41.1% (GROMACS on 8 GCDs +113%, FFT -34 to -54%), 14.6% overall.
With AMD records of other GPUs beside the public file (the readers express MI300A, MI300X, MI355X
and MI250 records) the fold learns them from those.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..perf.collectives import NIC_EFFICIENCY, NIC_LATENCY_S


@dataclass(frozen=True, kw_only=True)
class HpcConstants:
    """The few numbers fitted across the calibration set. The model functions take one of these
    (default FITTED), so a refit (hpc/fit.py, leave-one-GPU-out) runs the same code."""

    # Fraction of the datasheet HBM bandwidth a streaming kernel sustains. Fitted on BabelStream
    # triad / device copy / node-burn stream: A100-80GB 1.70 of 2.039 TB/s, H100 2.97 and 2.903
    # of 3.35 TB/s, GH200 3.70 of 4.0 TB/s (stream-* records).
    stream_fraction: float
    # Fraction of the datasheet HBM bandwidth a stencil kernel (neighbour gathers, misaligned
    # streaming loads) sustains. Fitted on the FluidX3D single-GPU D3Q19 rows, FP32 and FP16S
    # storage (lbm-fluidx3d-1x* on V100, A100 SXM 40 GB and 80 GB, A100 PCIe 80 GB), with the
    # soft-roofline exponent below.
    stencil_fraction: float
    # FP64 GEMM: rate per GPU = min(gemm_fraction x matrix peak, gemm_fp64_flops_per_j x TDP).
    # The board power limit binds on GPUs whose FP64 matrix peak doubled (MI250X: HPL 35 of 95.7
    # TF), which one efficiency on the peak cannot express. Fitted on HPL per GPU (H100 node,
    # A100 Lockwood and Leonardo, MI250X Frontier and Lockwood) and DGEMM (GH200 node-burn,
    # MI250X GCD coralgemm).
    gemm_fraction: float
    gemm_fp64_flops_per_j: float
    # Fraction of the FP32/FP64 vector peak the MD pair kernel sustains on the FLOPs counted as
    # 66 per pair inside the cut-off (it also computes the cluster pairs beyond it, which this
    # absorbs). Fitted jointly with md_bytes_per_atom_step (and, through the MI250X GCD rows,
    # amd_kernel_fraction) on the single-GPU GROMACS and AMBER records (STMV, ADH, Cellulose on
    # V100, A100, one MI250X GCD).
    md_pair_fraction: float
    # Effective HBM bytes per atom per MD step outside the pair kernel (PME spread/gather/FFT,
    # update, constraints, pair-list upkeep) at FP32. Published figures were not found
    # (reference/hpc.md), so fitted on the same MD records.
    md_bytes_per_atom_step: float
    # Application kernels (HIP/SYCL ports: not vendor GEMM, FFT or STREAM) on AMD reach this share
    # of what the same kernel reaches on NVIDIA at equal ceilings: a software-stack effect that no
    # catalog number carries. Fitted on the single-GPU application records on AMD (GROMACS STMV and
    # AMBER Cellulose on one MI250X GCD), swept with the MD constants.
    amd_kernel_fraction: float
    # The FFT library on AMD (rocFFT) against cuFFT at equal bandwidth: the CSCS single-GPU 3-D FFT
    # times on one MI250X GCD (fft3d-single-gpu-mi200-cscs, 4 sizes) reach ~half of what cuFFT
    # reaches on NVIDIA, below the application kernels' share above.
    amd_fft_fraction: float
    # Amdahl share of a one-GPU MD step that does not divide over GPUs (GROMACS GPU-resident runs
    # put PME on one rank). From gromacs-stmv-1gcd- and -8gcd-mi250x-lumi-2023 (16.21 and 78.38
    # ns/day, same code and node): 16.21/78.38 = s + (1-s)/8; the in-node halo and PME all-to-all
    # over Infinity Fabric (350 GB/s per GCD, catalog) come on top in the model.
    md_serial_fraction: float
    # Share of the per-GPU NIC injection rate an all-to-all sustains across nodes: "more than 70%
    # of the peak machine bandwidth" (fft3d-cufftmp-16384cube-4096xa100, cuFFTMp on Selene).
    all_to_all_network_fraction: float
    # Per-peer cost of a large all-to-all (LogGP gap g per message): what makes the 2048^3 FFT
    # on 2048 A100s take 4 ms rather than 2 ms. Fitted on fft3d-cufftmp-2048cube-2048xa100.
    all_to_all_peer_gap_s: float
    # Share of one GPU's host link (PCIe, per direction) that halo copies staged through host memory
    # get, summed over all the GPUs of the host (they queue behind one another): FluidX3D's OpenCL
    # multi-GPU runs (lbm-fluidx3d-4xv100-sxm2, -8xa100-sxm4-40gb, -4xa100-pcie-80gb).
    host_staging_fraction: float
    # Exponent k of the soft roofline (tc^k + tm^k)^(1/k) (hpc/roofline.py `overlapped`): how well a
    # kernel's arithmetic hides behind its memory traffic. Fitted with stencil_fraction on the
    # FluidX3D one-GPU rows: FP16S storage (406 FLOPs on 77 B) loses more on A100 (ridge nearer)
    # than on V100.
    roofline_overlap_exponent: float


FITTED = HpcConstants(
    stream_fraction=0.8773,
    stencil_fraction=0.7974,
    gemm_fraction=0.7723,
    gemm_fp64_flops_per_j=64.43e9,
    md_pair_fraction=0.3170,
    md_bytes_per_atom_step=5570.0,
    amd_kernel_fraction=0.7002,
    amd_fft_fraction=0.5760,
    md_serial_fraction=0.09356,
    all_to_all_network_fraction=0.70,
    all_to_all_peer_gap_s=1.847e-6,
    host_staging_fraction=0.7470,
    roofline_overlap_exponent=2.092,
)

PRIORS = HpcConstants(
    stream_fraction=1.0,
    stencil_fraction=1.0,
    gemm_fraction=1.0,
    gemm_fp64_flops_per_j=1e15,
    md_pair_fraction=1.0,
    md_bytes_per_atom_step=5000.0,
    # The three constants only MI250X's records identify in the public set start from published
    # figures of other GPUs (../shared/reference/hpc.md), never of the MI250X family (MI250 included):
    # FluidX3D's FP32 stencil reaches 58% of the datasheet bandwidth on MI355X against 76-85% on
    # V100..GH200 (midpoint 80.5%): 0.58 / 0.805 = 0.72.
    amd_kernel_fraction=0.72,
    # CSCS single-GPU 512^3 complex-double 3-D FFT: MI300A 1.10 TB/s effective of 5.3 TB/s (20.8%)
    # against GH200 1.75 of 4.0 TB/s (43.8%): 0.474.
    amd_fft_fraction=0.474,
    # GROMACS STMV on one GH200 node, 1 to 4 GPUs: 49.7 to 155.4 ns/day; 49.7 / 155.4 = s + (1-s)/4.
    md_serial_fraction=0.0931,
    all_to_all_network_fraction=NIC_EFFICIENCY,
    all_to_all_peer_gap_s=NIC_LATENCY_S,
    host_staging_fraction=1.0,
    roofline_overlap_exponent=50.0,
)
"""What the model assumes before any fit: datasheet ceilings (fractions 1, no power limit), the
plain roofline (k large), for all-to-all what the training model's collectives assume
(perf/collectives.py: NIC efficiency, one NIC latency per peer), and for the AMD shares and the MD
serial part the published figures of other GPUs quoted above. Leave-one-GPU-out refits from these,
so a constant that only the held-out GPU's records identify (the AMD shares and the MD Amdahl
share when MI250X is held out) is not learnt from it: it is what the reference says of GPUs other
than the held-out one."""
