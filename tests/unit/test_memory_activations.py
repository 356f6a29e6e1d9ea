"""Per-layer activation bytes, derived tensor by tensor (perf/activations.py).

The GPT checks reproduce Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
Transformer Models" (arXiv:2205.05198), §4.1 and Table 2, exactly; the other architectures are
checked against the same tensor list written out by hand from their dimensions.
"""

from __future__ import annotations

import pytest

from workload_compiler.arch.model import ModelArch
from workload_compiler.perf.activations import POLICIES, coefficients, layer_activations, layer_bytes, policy_tensors
from workload_compiler.perf.saved_tensors import ActivationCoefficients

# GPT-3 175B (Brown et al. 2020, Table 2.1): h = 12288, a = 96, ffn = 4h, GeLU, dropout.
GPT3 = ModelArch(name="gpt3-175b", layers=96, hidden_size=12288, attention_heads=96, kv_heads=96,
                 head_dim=128, ffn_hidden_size=4 * 12288, vocab_size=51200, mlp="gelu")
LLAMA3_8B = ModelArch(name="llama3-8b", layers=32, hidden_size=4096, attention_heads=32, kv_heads=8,
                      head_dim=128, ffn_hidden_size=14336, vocab_size=128256, mlp="swiglu")
MOE = ModelArch(name="moe", layers=8, hidden_size=2048, attention_heads=16, kv_heads=16, head_dim=128,
                ffn_hidden_size=8192, vocab_size=32000, mlp="swiglu", moe_experts=64, moe_top_k=6,
                moe_ffn_hidden_size=1024, moe_shared_experts=2, moe_dense_layers=1,
                mla_q_lora_rank=768, mla_kv_lora_rank=256, mla_qk_nope_head_dim=64,
                mla_qk_rope_head_dim=32, mla_v_head_dim=64)


def _gpt(policy: str, flash: bool = False) -> ActivationCoefficients:
    return coefficients(policy_tensors(GPT3, policy, moe_layer=False, flash=flash, dropout=True))  # type: ignore[arg-type]


def test_gpt_layer_reproduces_korthikanti_34_and_5as() -> None:
    """Table 2 split: 10sbh replicated + 24sbh/t + 5as^2b/t (no recompute, no FlashAttention)."""
    h, a = GPT3.hidden_size, GPT3.attention_heads
    c = _gpt("none")
    assert c.replicated == 10 * h
    assert c.tp == 24 * h
    assert c.score == 5 * a
    assert c.replicated + c.tp == 34 * h


def test_gpt_breakdown_matches_korthikanti_section_4_1() -> None:
    """§4.1: attention 11sbh + 5as^2b, MLP 19sbh, two LayerNorms 4sbh."""
    h, a = GPT3.hidden_size, GPT3.attention_heads
    tensors = policy_tensors(GPT3, "none", moe_layer=False, flash=False, dropout=True)
    norms = sum(t.bytes_per_token for t in tensors if t.name in ("norm1_in", "norm2_in"))
    mlp = sum(t.bytes_per_token for t in tensors
              if t.name in ("mlp_linear_in", "fc1_out", "act_out", "mlp_dropout_mask"))
    attn = [t for t in tensors if t.name not in (
        "norm1_in", "norm2_in", "mlp_linear_in", "fc1_out", "act_out", "mlp_dropout_mask")]
    assert norms == 4 * h
    assert mlp == 19 * h
    assert sum(t.bytes_per_token for t in attn if t.sharding != "score") == 11 * h
    assert sum(t.bytes_per_token for t in attn if t.sharding == "score") == 5 * a


@pytest.mark.parametrize("t", [1, 2, 8])
def test_gpt_table_2_rows(t: int) -> None:
    """Every row of Korthikanti Table 2 (bytes per layer), s = 2048, b = 1."""
    s, b, h, a = 2048, 1, GPT3.hidden_size, GPT3.attention_heads
    sbh = s * b * h

    def per_layer(policy: str, sp: bool) -> float:
        return layer_bytes(_gpt(policy), tokens=s * b, ctx=s, tp=t, sp=sp)

    assert per_layer("none", False) == pytest.approx(sbh * (10 + 24 / t + 5 * a * s / (h * t)))
    assert per_layer("none", True) == pytest.approx(sbh / t * (34 + 5 * a * s / h))
    assert per_layer("attention_core", False) == pytest.approx(sbh * (10 + 24 / t))
    assert per_layer("attention_core", True) == pytest.approx(34 * sbh / t)
    assert per_layer("full", False) == pytest.approx(2 * sbh)
    assert per_layer("full", True) == pytest.approx(2 * sbh / t)


def test_flash_attention_removes_the_5as_term() -> None:
    """FlashAttention stores O(s) statistics (fp32 log-sum-exp per head), not the s x s softmax."""
    h, a = GPT3.hidden_size, GPT3.attention_heads
    c = _gpt("none", flash=True)
    assert c.score == 0
    assert c.replicated + c.tp == 34 * h + 4 * a


def test_llama_gqa_swiglu_tensors_written_out() -> None:
    """GQA (K, V of kv_heads x head_dim) and fused SwiGLU (fc1 = gate + up, then its output)."""
    m = LLAMA3_8B
    h, a, f = m.hidden_size, m.attention_heads, m.ffn_hidden_size
    q, kv = m.attention_heads * m.head_dim, m.kv_heads * m.head_dim
    none = coefficients(policy_tensors(m, "none", moe_layer=False))
    assert none.replicated == 2 * h + 2 * h + 2 * h + 2 * h      # two norm inputs, two linear inputs
    assert none.tp == 2 * q + 2 * kv + 2 * kv + 4 * a + 2 * q + 2 * 2 * f + 2 * f
    assert none.score == 0
    # torchtitan op-SAC: matmuls in order wq wk wv wo w1 w3 w2, every second one recomputed;
    # keeps the layer input and the attention kernel's output + log-sum-exp.
    sac = coefficients(policy_tensors(m, "op_sac", moe_layer=False))
    assert sac.replicated == 2 * h + 2 * h                           # layer input, w2 output
    assert sac.tp == 2 * q + 2 * kv + 2 * f + 2 * q + 4 * a          # wq, wv, w1, attention out + lse
    full = coefficients(policy_tensors(m, "full", moe_layer=False))
    assert (full.replicated, full.tp) == (2 * h, 0)


def test_moe_mla_layer_tensors_written_out() -> None:
    m = MOE
    h, a, e, fe = m.hidden_size, m.attention_heads, m.moe_experts, m.moe_ffn_hidden_size
    qk, v = m.mla_qk_nope_head_dim + m.mla_qk_rope_head_dim, m.mla_v_head_dim
    f_shared = m.moe_shared_experts * m.moe_ffn_hidden_size
    c = coefficients(policy_tensors(m, "none", moe_layer=True))
    # per routed (token, expert) pair: dispatched input, fc1 (gate + up), act out, expert output
    assert c.expert_in == 2 * h + 2 * h
    assert c.expert_hidden == 2 * 2 * fe + 2 * fe
    # low-rank q/kv paths (norm input and up-projection input each) + router probs (fp32) and the
    # bool routing map (Megatron-Core router.py / moe_utils.permute), replicated
    assert c.replicated == 8 * h + 4 * m.mla_q_lora_rank + 4 * m.mla_kv_lora_rank + 4 * e + 1 * e
    assert c.tp == 2 * a * qk * 2 + 2 * a * v + 4 * a + 2 * a * v + 6 * f_shared


@pytest.mark.parametrize(("arch", "moe_layer"),
                         [(GPT3, False), (LLAMA3_8B, False), (MOE, False), (MOE, True)])
def test_policies_are_ordered(arch: ModelArch, moe_layer: bool) -> None:
    """none >= attention_core >= op_sac >= full, per GPU, for any tp / sp."""
    la = layer_activations(arch, moe_layer=moe_layer)
    for t, sp in ((1, False), (8, False), (8, True)):
        b = {p: layer_bytes(la.stored[p], tokens=4096, ctx=4096, tp=t, sp=sp, etp=1,
                            top_k=arch.moe_top_k) for p in POLICIES}
        assert b["none"] >= b["attention_core"] >= b["op_sac"] >= b["full"] > 0


def test_mla_up_proj_drops_the_up_projection_outputs_only() -> None:
    """Megatron-Core --recompute-modules mla_up_proj (multi_latent_attention.py recompute_up_proj):
    Q (heads x (nope + rope)), K (the same) and V (heads x v) at 2 bytes leave the stored set and
    come back in backward's working set; everything else stays. Without MLA it is `none`."""
    m = MOE
    a, qk, v = m.attention_heads, m.mla_qk_nope_head_dim + m.mla_qk_rope_head_dim, m.mla_v_head_dim
    for moe_layer in (False, True):
        la = layer_activations(m, moe_layer=moe_layer)
        none, up = la.stored["none"], la.stored["mla_up_proj"]
        assert none.tp - up.tp == 2 * a * qk * 2 + 2 * a * v
        assert (none.replicated, none.expert_in, none.expert_hidden) == (up.replicated, up.expert_in, up.expert_hidden)
        assert la.recomputed["mla_up_proj"].tp == 2 * a * qk * 2 + 2 * a * v
    plain = layer_activations(LLAMA3_8B, moe_layer=False)
    assert plain.stored["mla_up_proj"] == plain.stored["none"]
    assert plain.recomputed["mla_up_proj"] == ActivationCoefficients()
