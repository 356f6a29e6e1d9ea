"""Every fitted constant of the training step-time model, in one place.

PROVISIONAL: replaced by the output of tools/fit_training.py (see the block below once fitted).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class TrainingConstants:
    """The few numbers fitted across the calibration set (never per model, source or record)."""

    gemm_e_max: float            # best fraction of the dense peak a large GEMM sustains
    gemm_kernel_overhead_s: float  # fixed cost of one GEMM kernel (launch gaps, tails)
    attention_eff: float         # flash-attention core: fraction of the BF16 dense peak
    elementwise_mult: float      # multiplier on the counted bytes of the memory-bound kernels
    tp_exposed: float            # share of tensor-parallel communication left exposed
    overlap_contention: float    # share of overlapped communication that still costs time


FITTED = TrainingConstants(
    gemm_e_max=0.6881,
    gemm_kernel_overhead_s=5.437e-06,
    attention_eff=0.3474,
    elementwise_mult=1.741,
    tp_exposed=0.739,
    overlap_contention=0.319,
)
