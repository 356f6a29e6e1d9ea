"""Every fitted constant of the training step-time model, in one place.

Fitted by tools/fit_training.py (least squares on log(predicted / published step time), scipy
1.17.1, each source family weighted alike) on 2026-12-01 over the 230 records with a step time of
/work/shared/calibration/training_public.yaml and training_added.yaml, each compiled from the
intake a user would write (validation/training_suite.py; 48 records are not compiled, each listed
with the reason by `wkc validate`): Narayanan 2021, Korthikanti 2022, Megatron-Core weak scaling,
Llama 3 Table 4, NeMo 24.07 / 25.02 / long-sequence, Megatron-Bridge 25.09-26.06, DGX Cloud
v25.03, torchtitan (A100), IBM fms-fsdp, MosaicML llm-foundry; A100, H100, B200 and GB200; BF16,
FP8 and MXFP8; dense and MoE.

Result (step time, |predicted / published - 1|), with the framework profiles (catalog/data/
frameworks.yaml), recompute left to the planner where the record does not state it, and
Megatron-Core's module recompute (layernorm, moe_act) among the modes:
    in sample:              MAPE 7.58%, max 95.1% (Megatron-Bridge 25.09 DeepSeek-V3 on 1,024 H100)
    leave-one-family-out:   MAPE 8.03% (each source family predicted by constants fitted on the
                            others; per family: dgxc 4.3, mpt 4.7, korthikanti2022 5.0, nemo_longseq
                            5.0, narayanan2021 5.2, llama3 5.5, torchtitan 6.0, nemo2407 6.2, nemo2502
                            10.8, megatron_core 11.2, ibm_fsdp 12.1, mbridge 16.9)
    held out, by kind:      Hopper dense bf16 5.2 (98 runs), Ampere dense bf16 6.1 (35), Hopper
                            dense fp8 6.6 (56), Blackwell dense fp8 10.9 (16), Blackwell moe fp8
                            11.3 (13), Blackwell moe bf16 29.7 (4), Hopper moe fp8 43.9 (7), Hopper
                            moe bf16 2.5 (1)
The constants move little between the folds (gemm_e_max 0.72-0.75, attention_eff 0.36-0.37),
which is what lets them stand for runs that are not in the set. The MoE misses are release over
release: Megatron-Bridge 25.09, 25.11 and 26.04 run the same Qwen3-235B layout on H100 at 1,204,
1,575 and 1,686 tokens/s per GPU; the tables do not say which overlap features each release turned
on, so the model does not guess them.
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
    overlap_contention: float      # share of overlapped DP/CP communication that still costs time
    # per MoE layer and pass (forward, backward) under dropless routing: the host sync that sizes the
    # grouped GEMMs and the launches it exposes (Megatron-Core alltoall dispatcher, tokens_per_expert)
    moe_dropless_sync_s: float = 0.0


FITTED = TrainingConstants(
    gemm_e_max=0.7385,
    gemm_kernel_overhead_s=1.951e-05,
    attention_eff=0.3666,
    elementwise_mult=2.341,
    overlap_contention=0.5334,
    moe_dropless_sync_s=0.0005938,
)
