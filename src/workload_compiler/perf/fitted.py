"""Every fitted constant of the training step-time model, in one place.

PROVISIONAL: replaced by the output of tools/fit_training.py (see the block below once fitted).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class TrainingConstants:
    """The few numbers fitted across the calibration set (never per model, source or record)."""

    gemm_e_max: float            # best fraction of the dense peak a large GEMM sustains
    gemm_balance_mult: float     # c in eff = e_max * AI / (AI + c * peak/HBM_bw)
    attention_eff: float         # flash-attention core: fraction of the BF16 dense peak
    elementwise_mult: float      # multiplier on the counted bytes of the memory-bound kernels
    tp_exposed: float            # fraction of tensor-parallel communication left exposed
    layer_overhead_s: float      # fixed cost per layer and pass (kernel launches, syncs, tails)


FITTED = TrainingConstants(
    gemm_e_max=0.80,
    gemm_balance_mult=1.0,
    attention_eff=0.5,
    elementwise_mult=1.0,
    tp_exposed=1.0,
    layer_overhead_s=0.0,
)
