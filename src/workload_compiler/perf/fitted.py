"""Every fitted constant of the training step-time model, in one place.

Fitted by tools/fit_training.py (least squares on log(predicted / published step time), scipy
1.17.1) on 2026-05 over the 115 usable records of /work/shared/calibration/training_public.yaml
(162 records; 48 skipped with their reason by `wkc validate`): Narayanan 2021, Korthikanti 2022,
Megatron-Core weak scaling, Llama 3 Table 4, NeMo 24.07 / 25.02 / long-sequence, Megatron-Bridge,
DGX Cloud v25.03, torchtitan (A100), IBM fms-fsdp; A100-80GB and H100-SXM, BF16 and FP8.

Result (step time, |predicted / published - 1|), refitted 2026-11-30 after "op_selective"
(torchtitan per-op checkpointing, which recomputes every second matmul) was told apart from
Megatron's attention-core "selective":
    in sample:              MAPE 5.07%, max 37.6% (Megatron-Core GPT 32B); 5.08% once the slowest
                            pipeline stage was charged ceil(L/pp) layers (uneven stages), not refitted
    leave-one-group-out:    MAPE 6.13% (each source family predicted by constants fitted on the
                            others; per group: dgxc 3.4, torchtitan 3.7, korthikanti2022 3.9,
                            narayanan2021 4.2, nemo2502 5.3, nemo_longseq 5.6, llama3 5.7, nemo2407
                            6.2, mbridge 6.3, megatron_core 13.7, ibm_fsdp 19.7)
The constants move little between the folds (gemm_e_max 0.67-0.71, attention_eff 0.32-0.37),
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
    # per MoE layer and pass (forward, backward) under dropless routing: the host sync that sizes the
    # grouped GEMMs and the launches it exposes (Megatron-Core alltoall dispatcher, tokens_per_expert)
    moe_dropless_sync_s: float = 0.0


FITTED = TrainingConstants(
    gemm_e_max=0.6909,
    gemm_kernel_overhead_s=2.724e-05,
    attention_eff=0.318,
    elementwise_mult=2.171,
    tp_exposed=0.3317,
    overlap_contention=0.2796,
    moe_dropless_sync_s=0.0005896,
)
