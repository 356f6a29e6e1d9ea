"""How each source counts the FLOPs behind its TFLOP/s figure, to turn that figure into a step time.

A source's "TFLOP/s per GPU" X means: FLOPs it counts per iteration / (step time x GPUs), so
step = F_source(batch) / (X x GPUs). Each function returns F_source for one optimizer step.
"""

from __future__ import annotations

from ..arch.counts import matmul_flops_per_token
from ..arch.model import ModelArch


def narayanan_eq3(a: ModelArch, batch: int, seq: int) -> float:
    """Narayanan et al. 2021 (arXiv:2104.04473) Eq. 3, GEMMs incl. the full-recompute forward:
    F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h))."""
    b, s, n_l, h, v = batch, seq, a.layers, a.hidden_size, a.vocab_size
    return 96.0 * b * s * n_l * h**2 * (1 + s / (6 * h) + v / (16 * n_l * h))


def megatron_model_flops(a: ModelArch, batch: int, seq: int) -> float:
    """Megatron-LM `num_floating_point_operations` (training.py, core r0.8, 2024): non-causal
    attention, no recompute: 12 B s L h^2 [(1 + G/A + s/h) q/h + (F/h) k g + V/(2 L h)], with
    q = heads x head_dim, G/A = kv/attention heads, k = experts routed to, g = 3/2 if gated."""
    b, s, n_l, h, v = batch, seq, a.layers, a.hidden_size, a.vocab_size
    q_ratio = a.attention_heads * a.head_dim / h
    attn = (1 + a.kv_heads / a.attention_heads + s / h) * q_ratio
    ffn = (a.moe_ffn_hidden_size * a.moe_top_k) if a.is_moe else a.ffn_hidden_size
    mlp = ffn / h * (1.5 if a.gated else 1.0)
    return 12.0 * b * s * n_l * h**2 * (attn + mlp + v / (2 * n_l * h))


def nemo_model_flops_noncausal(a: ModelArch, batch: int, seq: int) -> float:
    """NVIDIA NeMo 24.x 'Model TFLOP/sec' for Llama 2 (nemo/utils/flops_formulas.py `llama2`):
    B s L h^2 (12 + 12 G/A + 18 F/h + 12 s/h + 6 V/(L h)), attention counted non-causal. The
    NeMo 24.07 Llama 2 7B row confirms it: 780 TFLOP/s / 16,934 tokens/s = 4.61e10 FLOP/token,
    this formula 4.62e10 (the causal variant would give 4.3e10)."""
    b, s, n_l, h, v = batch, seq, a.layers, a.hidden_size, a.vocab_size
    g = a.kv_heads / a.attention_heads
    return b * s * n_l * h**2 * (12 + 12 * g + 18 * a.ffn_hidden_size / h + 12 * s / h + 6 * v / (n_l * h))


def chowdhery_model_flops(a: ModelArch, batch: int, seq: int) -> float:
    """PaLM (Chowdhery et al. 2022, App. B) model FLOPs: (6 N + 12 L H Q T) per token, attention
    non-causal; N = the matmul parameters (the input embedding is a lookup)."""
    n = matmul_flops_per_token(a) / 2.0
    per_token = 6.0 * n + 12.0 * a.layers * a.attention_heads * a.head_dim * seq
    return batch * seq * per_token


DEFINITIONS = {
    "narayanan_eq3": narayanan_eq3,
    "megatron_model": megatron_model_flops,
    "nemo_noncausal": nemo_model_flops_noncausal,
    "chowdhery": chowdhery_model_flops,
}
