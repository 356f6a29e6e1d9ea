"""The tensors a layer's ops save for their backward, as the activation memory model counts them: each a
number of bytes per token with its sharding (perf/activations.py states the formulas)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .model_states import LOWP_COPY_BYTES

Sharding = Literal["replicated", "tp", "score", "expert_in", "expert_hidden"]

ACT_BYTES = 2.0          # 16-bit activations; the GEMM inputs of FP8/FP4 runs: gemm_input_bytes
MASK_BYTES = 1.0         # dropout masks are uint8 (Korthikanti §4.1)
STAT_BYTES = 4.0         # fp32 softmax statistics and router logits


def gemm_input_bytes(precision: str, quantized_inputs: bool) -> float:
    """Bytes per element of the inputs a GEMM keeps for its weight-gradient GEMM: the 16-bit
    activation, or under FP8/MXFP8/NVFP4 training with `quantized_inputs` (the framework profile's
    `lowp_saved_gemm_inputs`: Transformer Engine's Linear, LayerNormLinear, LayerNormMLP and
    GroupedLinear save the quantized input they fed the forward GEMM) its low-precision copy,
    scales included (perf/model_states.py LOWP_COPY_BYTES). The norm inputs, the attention core's
    q, k, v and output, the MLP's fc1 output (the activation function's input) and the MoE
    combine's expert outputs stay 16-bit; the out-projection then keeps a quantized copy of the
    attention output beside the 16-bit one the attention kernel's backward reads."""
    low = LOWP_COPY_BYTES.get(precision, 0.0)
    return low if quantized_inputs and low > 0 else ACT_BYTES


@dataclass(frozen=True)
class SavedTensor:
    """One tensor an op saves for backward, in bytes per token of the micro-batch."""

    name: str
    bytes_per_token: float
    sharding: Sharding
    group: str               # layer_in, norm, linear_in, attn_qkv, attn_core, attn_out, mlp_hidden,
    #                          act, mask, moe_misc, mm_out (matmul outputs, for op_sac only)


@dataclass(frozen=True)
class ActivationCoefficients:
    """Bytes per token of one layer by sharding; per-GPU bytes of one layer and micro-batch are

        tokens * (replicated / (t if sp else 1) + tp / t + score * ctx / t
                  + top_k * (expert_in * etp / t + expert_hidden / t))

    with tokens = mbs * seq / cp on this GPU. The expert terms: a MoE layer sends each token to
    top_k experts; with experts split ep ways and each expert's hidden etp ways over the same
    t * cp * dp GPUs, a GPU receives tokens * top_k * etp / t (token, expert) pairs on average
    (balanced routing), holding 1/etp of each pair's hidden activations.
    """

    replicated: float = 0.0
    tp: float = 0.0
    score: float = 0.0
    expert_in: float = 0.0
    expert_hidden: float = 0.0

    def __add__(self, o: ActivationCoefficients) -> ActivationCoefficients:
        return ActivationCoefficients(
            replicated=self.replicated + o.replicated, tp=self.tp + o.tp, score=self.score + o.score,
            expert_in=self.expert_in + o.expert_in, expert_hidden=self.expert_hidden + o.expert_hidden)
