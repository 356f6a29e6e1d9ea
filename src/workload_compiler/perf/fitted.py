"""Every fitted constant of the training step-time model, in one place.

Fitted by tools/fit_training.py (least squares on log(predicted / published step time), scipy
1.17.1) on 2026-05 over the 115 usable records of /work/shared/calibration/training_public.yaml
(162 records; 48 skipped with their reason by `wkc validate`): Narayanan 2021, Korthikanti 2022,
Megatron-Core weak scaling, Llama 3 Table 4, NeMo 24.07 / 25.02 / long-sequence, Megatron-Bridge,
DGX Cloud v25.03, torchtitan (A100), IBM fms-fsdp; A100-80GB and H100-SXM, BF16 and FP8.

Result (step time, |predicted / published - 1|):
    in sample:              MAPE 5.28%, max 37.6% (Megatron-Core GPT 32B)
    leave-one-group-out:    MAPE 6.11% (each source family predicted by constants fitted on the
                            others; per group: dgxc 3.5, narayanan2021 3.7, korthikanti2022 4.0,
                            nemo_longseq 4.1, nemo2502 5.3, torchtitan 5.6, llama3 5.8, nemo2407
                            6.2, mbridge 6.6, megatron_core 13.8, ibm_fsdp 18.8)
The constants move little between the folds (gemm_e_max 0.66-0.70, attention_eff 0.32-0.35),
which is what lets them stand for runs that are not in the set.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class TrainingConstants:
    """The few numbers fitted across the calibration set (never per model, source or record)."""

    gemm_e_max: float              # best fraction of the dense peak a large GEMM sustains
    gemm_kernel_overhead_s: float  # fixed cost of one GEMM kernel (launch gaps, prologue, tail wave)
    attention_eff: float           # fused attention core: fraction of the dense BF16 peak
    elementwise_mult: float        # multiplier on the counted bytes of the memory-bound kernels
    tp_exposed: float              # share of tensor-parallel communication left exposed
    overlap_contention: float      # share of overlapped DP/CP communication that still costs time


FITTED = TrainingConstants(
    gemm_e_max=0.6881,
    gemm_kernel_overhead_s=5.437e-06,
    attention_eff=0.3474,
    elementwise_mult=1.741,
    tp_exposed=0.739,
    overlap_contention=0.319,
)
