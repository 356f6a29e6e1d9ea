"""How fast a GPU runs the fused attention core (FlashAttention) of training, relative to the fitted
attention efficiency: the measured gap between GPUs, and the softmax exponentials where they bind."""

from __future__ import annotations

from ..arch.counts import attention_flops_per_token, head_dims, indexer_flops_per_token, ssm_scan_flops_per_token
from ..arch.model import ModelArch
from ..catalog.kernel_ceilings import fraction
from .fitted import TrainingConstants
from .gemm_precision import gemm_ceiling_precision, relative_ceiling
from .layout import FloatArray, Hardware, TrainingSetup

# The kernel ceilings were measured on attention of head dim 128 (catalog/data/kernel_ceilings.yaml):
# QK^T and AV together do 4 x 128 FLOPs per score, one exponential each.
REFERENCE_FLOPS_PER_EXP = 512.0
# FlashAttention's backward recomputes each score's exponential once and does 2.5x the forward's
# FLOPs (S again, dP, dV, dQ, dK: five products of the two the forward has).
BACKWARD_FLOPS_RATIO = 2.5


def attention_speed(hw: Hardware) -> float:
    """The GPU's fused-attention ceiling at BF16 over the median GPU's (GB300 0.532, H100 0.490,
    GB200 0.438 of the BF16 peak; median 0.472): the fitted attention_eff is one number for every
    GPU; the measured gap rides on it (Blackwell's tensor cores outrun its exponential units;
    Blackwell Ultra doubles their rate). Fitted with it, the held-out Blackwell runs 15.1 -> 14.2%
    at an unchanged in-sample error."""
    return relative_ceiling(hw.accelerator_id, "attention_compute", "bf16")


def unmeasured_kernels(hw: Hardware, setup: TrainingSetup) -> list[str]:
    """The kernels ('GEMM', 'attention') without a measured ceiling on this GPU: `gemm_speed` and
    `attention_speed` take the median GPU's for them (1.0)."""
    parts = {"GEMM": ("gemm_compute", gemm_ceiling_precision(setup)), "attention": ("attention_compute", "bf16")}
    return [name for name, (part, precision) in parts.items() if not fraction(hw.accelerator_id, part, precision)[1]]


def flops_per_exp(a: ModelArch) -> float:
    """FLOPs of QK^T and AV per attention score (each score one softmax exponential): 2 (d_qk + d_v),
    4 x head_dim in plain attention, 640 in DeepSeek's MLA (192 + 128)."""
    return 2.0 * sum(head_dims(a))


def softmax_bound(hw: Hardware, flops_per_score: float) -> float:
    """How much longer than its FLOPs say an attention pass takes because the exponentials bind,
    relative to head dim 128 where the ceilings were measured: max(1, E / F) / max(1, E / 512), with
    E the tensor FLOPs an SM issues per exponential (catalog tensor_flops_per_exp: A100 128, Hopper
    256, Blackwell 512, Blackwell Ultra 256) and F the pass's FLOPs per score. A pass whose tensor
    work per score is below E waits on the special-function units (FlashAttention-4's analysis of
    Blackwell). Hopper and Blackwell Ultra are never bound at head dim 64 or more; Blackwell's
    forward at head dim 64 (GPT-OSS) takes twice its FLOP time. 1.0 where E is not known."""
    e = hw.tensor_flops_per_exp
    if e is None:
        return 1.0
    return max(1.0, e / flops_per_score) / max(1.0, e / REFERENCE_FLOPS_PER_EXP)


def fused_core_s(a: ModelArch, setup: TrainingSetup, hw: Hardware, k: TrainingConstants,
                 rows: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(forward, backward) seconds of one layer's fused cores for `rows` tokens per GPU (a micro-batch
    over cp and tp): the causal scores at the fitted efficiency x the GPU's gap to the median, each
    pass stretched where the exponentials bind; over a packed document's span where documents share
    a sequence (varlen kernels skip the other documents' keys). The Mamba-2 scans (Megatron-LM's
    7 d_inner d_state per token) and the DSA indexer run as fused kernels like it and are timed
    with it: an assumption, no hybrid run is in the calibration set."""
    rate = hw.peak_flops_bf16 * k.attention_eff * attention_speed(hw) * setup.attention_relative_speed
    per_layer = rows / a.layers / rate
    span = setup.document_tokens or setup.seq_len
    softmax = attention_flops_per_token(a, span, causal=True) * per_layer
    fused = (ssm_scan_flops_per_token(a) + indexer_flops_per_token(a, span)) * per_layer
    fpe = flops_per_exp(a) or REFERENCE_FLOPS_PER_EXP
    forward = softmax * softmax_bound(hw, fpe) + fused
    backward = BACKWARD_FLOPS_RATIO * (softmax * softmax_bound(hw, BACKWARD_FLOPS_RATIO * fpe) + fused)
    return forward, backward


__all__ = ["BACKWARD_FLOPS_RATIO", "REFERENCE_FLOPS_PER_EXP", "attention_speed", "flops_per_exp", "fused_core_s",
           "softmax_bound", "unmeasured_kernels"]
