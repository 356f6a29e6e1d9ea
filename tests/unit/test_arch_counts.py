"""Parameter and FLOP counts: invariants over random architectures, and Narayanan et al. Eq. 3."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workload_compiler.arch.counts import (
    attention_flops_per_token,
    forward_flops_per_token,
    matmul_flops_per_token,
    param_counts,
    training_flops_per_token,
)
from workload_compiler.arch.model import ModelArch
from workload_compiler.arch.presets import preset_arch


@st.composite
def archs(draw: st.DrawFn) -> ModelArch:
    layers = draw(st.integers(1, 48))
    kv = draw(st.sampled_from([1, 2, 4, 8]))
    heads = kv * draw(st.integers(1, 8))
    head_dim = draw(st.sampled_from([32, 64, 128]))
    fields: dict[str, Any] = dict(
        name="t", layers=layers, hidden_size=heads * head_dim, attention_heads=heads, kv_heads=kv,
        head_dim=head_dim, ffn_hidden_size=draw(st.integers(1, 8192)),
        vocab_size=draw(st.integers(100, 200_000)),
        mlp=draw(st.sampled_from(["gelu", "relu", "squared_relu", "swiglu", "geglu"])),
        tied_embeddings=draw(st.booleans()))
    if draw(st.booleans()):
        experts = draw(st.integers(2, 64))
        fields.update(moe_experts=experts, moe_top_k=draw(st.integers(1, experts)),
                      moe_ffn_hidden_size=draw(st.integers(1, 4096)),
                      moe_shared_experts=draw(st.integers(0, 2)),
                      moe_dense_layers=draw(st.integers(0, layers - 1)),
                      moe_layer_interval=draw(st.integers(1, 3)),
                      mtp_layers=draw(st.integers(0, 1)))
    if draw(st.booleans()):
        fields.update(mla_q_lora_rank=draw(st.sampled_from([0, 512])), mla_kv_lora_rank=512,
                      mla_qk_nope_head_dim=128, mla_qk_rope_head_dim=64, mla_v_head_dim=128)
    if draw(st.booleans()):
        fields.update(sliding_window=draw(st.integers(1, 4096)),
                      sliding_window_layers=draw(st.integers(0, layers)))
    return ModelArch(**fields)


@settings(max_examples=60, deadline=None)
@given(archs())
def test_total_at_least_active_and_expert_split_adds_up(a: ModelArch) -> None:
    c = param_counts(a)
    assert c.total >= c.active > 0
    assert c.expert_params + c.non_expert_params == c.total
    assert (c.total == c.active) == (not a.is_moe or a.moe_top_k == a.moe_experts)


@settings(max_examples=40, deadline=None)
@given(archs(), st.integers(1, 8))
def test_more_layers_never_fewer_params(a: ModelArch, extra: int) -> None:
    deeper = a.model_copy(update={"layers": a.layers + extra,
                                  "sliding_window_layers": min(a.sliding_window_layers, a.layers)})
    assert param_counts(deeper).total >= param_counts(a).total
    assert param_counts(deeper).active >= param_counts(a).active


@settings(max_examples=60, deadline=None)
@given(archs(), st.integers(1, 32768), st.booleans())
def test_training_flops_are_six_n_plus_three_attention(a: ModelArch, seq: int, causal: bool) -> None:
    """Training = 3 x forward; forward = 2 x active matmul weights (no embedding lookup, no norms;
    a tied head is still a matmul) + attention (Kaplan et al. 2020 Table 1)."""
    c = param_counts(a)
    head = c.embedding if a.tied_embeddings else 0.0
    want = 6 * (c.active - c.embedding - c.norms + head) + 3 * attention_flops_per_token(a, seq, causal)
    got = training_flops_per_token(a, seq, causal)
    assert abs(got - want) <= 1e-9 * want
    assert forward_flops_per_token(a, seq, causal) * 3 == got


@settings(max_examples=40, deadline=None)
@given(archs(), st.integers(2, 32768))
def test_causal_attention_is_at_most_non_causal(a: ModelArch, seq: int) -> None:
    causal, full = attention_flops_per_token(a, seq, True), attention_flops_per_token(a, seq, False)
    assert 0 < causal <= full
    if not a.sliding_window or not a.sliding_window_layers or a.sliding_window >= seq:
        assert abs(causal - full / 2) <= 1e-9 * full   # seq/2 mean keys per query


def test_megatron_1t_matches_narayanan_eq3() -> None:
    """Narayanan et al. 2021 (arXiv:2104.04473) Eq. 3 without the recompute pass (x 3/4 on the
    layer term): 72 B s l h^2 (1 + s/(6h)) + 6 B s V h FLOPs per batch, so per token
    72 l h^2 (1 + s/(6h)) + 6 V h, attention counted non-causal, as the paper does."""
    a = preset_arch("megatron-1t")
    s, n_layers, h, v = 2048, a.layers, a.hidden_size, a.vocab_size
    want = 72 * n_layers * h**2 * (1 + s / (6 * h)) + 6 * v * h
    got = training_flops_per_token(a, s, causal=False)
    assert abs(got - want) <= 1e-9 * want


def test_sliding_window_caps_attention() -> None:
    """gpt-oss-120b: half the layers attend to 128 keys, so at 32k context attention FLOPs are
    close to half of an all-full-attention model's."""
    a = preset_arch("gpt-oss-120b")
    full = a.model_copy(update={"sliding_window": 0, "sliding_window_layers": 0})
    ratio = attention_flops_per_token(a, 32768) / attention_flops_per_token(full, 32768)
    assert 0.5 < ratio < 0.51


def test_matmul_flops_are_two_per_active_weight() -> None:
    a = preset_arch("mixtral-8x7b")
    c = param_counts(a)
    assert matmul_flops_per_token(a) == 2 * (c.active - c.embedding - c.norms)
