"""What each framework profile changes in the memory model (perf/memory.py, perf/model_states.py),
term by term, and the MoE activation terms (perf/activations.py), each against its source."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from workload_compiler.arch.counts import param_counts
from workload_compiler.arch.model import ModelArch
from workload_compiler.catalog.frameworks import framework_profile
from workload_compiler.perf.activations import moe_dispatch_bytes_per_pair
from workload_compiler.perf.layout import Layout, TrainingSetup
from workload_compiler.perf.memory import training_memory_detail

LLAMA8 = ModelArch(name="llama3-8b", layers=32, hidden_size=4096, attention_heads=32, kv_heads=8, head_dim=128,
                   ffn_hidden_size=14336, vocab_size=128256, mlp="swiglu")
MOE = ModelArch(name="moe", layers=8, hidden_size=2048, attention_heads=16, kv_heads=4, head_dim=128,
                ffn_hidden_size=8192, vocab_size=32000, mlp="swiglu", moe_experts=64, moe_top_k=8,
                moe_ffn_hidden_size=1024)
BASE: dict[str, Any] = dict(tp=1, pp=1, dp=8, cp=1, ep=1, etp=1, vp=1, mbs=1, recompute=0, sp=False, zero=1)


def setup(fw: str, precision: str = "bf16", seq: int = 4096) -> TrainingSetup:
    return TrainingSetup(seq_len=seq, global_batch_size=64, precision=precision, framework=framework_profile(fw))


def run(arch: ModelArch, s: TrainingSetup, **kw: Any) -> dict[str, float]:
    d = training_memory_detail(arch, s, Layout.of(**{**BASE, **kw}))
    return {k: float(v) for k, v in d.items()}


def test_loss_peak_bytes_per_logit_by_framework() -> None:
    """tokens x vocab / tp logits at the profile's bytes: torchtitan 12 (fp32 F.cross_entropy),
    llm-foundry 4 (flash-attn fused CE: bf16 logits + bf16 dlogits), megatron 6 (vocab-parallel CE:
    fp32 softmax in place + the bf16 logits)."""
    logits = 4096 * LLAMA8.vocab_size
    for fw, per in (("torchtitan", 12), ("llm-foundry", 4), ("megatron", 6), ("fsdp", 14)):
        assert run(LLAMA8, setup(fw))["loss_peak"] == pytest.approx(per * logits)
    assert run(LLAMA8, setup("torchtitan"), tp=8, sp=True)["loss_peak"] == pytest.approx(16 * logits / 8)


def test_fsdp_states_are_fp32_master_params() -> None:
    """PyTorch FSDP / FSDP2: fp32 parameter (the master) 4 + fp32 gradient 4 + Adam moments 8 =
    16 B/param sharded at ZeRO-3, plus two gathered bf16 layers (current + prefetch)."""
    c = param_counts(LLAMA8)
    r = run(LLAMA8, setup("torchtitan"), zero=3, dp=8)
    states = r["weights"] + r["gradients"] + r["optimizer"]
    layer = c.attention_per_layer + c.dense_mlp_per_layer + 2 * LLAMA8.hidden_size
    assert states == pytest.approx(16 * c.total / 8 + 2 * 2 * layer + 4 * layer, rel=1e-6)


def test_fsdp_shard_grad_op_shards_storage_and_keeps_the_gathered_model() -> None:
    """FSDP SHARD_GRAD_OP (ZeRO-2 here): 'parameters are not resharded after forward' - the fp32
    storage is sharded, the bf16 copy of every layer is kept from forward to backward. Megatron-style
    ZeRO-2 instead replicates the bf16 parameters."""
    c = param_counts(LLAMA8)
    fsdp = run(LLAMA8, setup("fsdp"), zero=2, dp=8)["weights"]
    assert fsdp == pytest.approx((4 / 8 + 2) * c.total, rel=1e-6)
    mega = run(LLAMA8, setup("megatron"), zero=2, dp=8)["weights"]
    assert mega == pytest.approx(2 * c.total, rel=1e-6)


def test_nemo_fp8_param_gather_replaces_the_bf16_copy() -> None:
    """Megatron-Bridge / NeMo bf16_with_fp8_mixed: fp8_param_gather = True, the FP8 weight (and its
    cached transpose) is the parameter: 2 B per GEMM weight instead of 2 + 2."""
    c = param_counts(LLAMA8)
    gemm = c.total - 2 * LLAMA8.hidden_size * LLAMA8.layers - LLAMA8.hidden_size - 2 * c.embedding
    mega = run(LLAMA8, setup("megatron", "fp8"))["weights"]
    nemo = run(LLAMA8, setup("nemo", "fp8"))["weights"]
    assert mega - nemo == pytest.approx(2 * gemm, rel=1e-3)


def test_step_gradient_copy_never_adds_to_the_activation_peak() -> None:
    """The distributed optimizer's fp32 copy of the bf16 gradient shard (nemo) exists only at the
    optimizer step, after the activations are freed: the larger of the two counts."""
    c = param_counts(LLAMA8)
    big_act = run(LLAMA8, setup("nemo"), dp=8, mbs=4)
    small_act = run(LLAMA8, setup("nemo"), dp=1, recompute=2, mbs=1)
    copy_dp8, copy_dp1 = 4 * c.total / 8, 4 * c.total
    assert big_act["activations"] > copy_dp8
    assert big_act["optimizer"] == pytest.approx(12 * c.total / 8, rel=1e-6)
    assert small_act["optimizer"] == pytest.approx(12 * c.total + copy_dp1 - small_act["activations"], rel=1e-6)


def test_deepspeed_zero3_gathers_in_buckets() -> None:
    """DeepSpeed stage3_max_live_parameters (1e9) bounds the gathered parameters, reduce_bucket_size
    (5e8) the unsharded gradient: a 175B layer (1.8e9 parameters) is not gathered whole."""
    gpt = ModelArch(name="gpt3-175b", layers=96, hidden_size=12288, attention_heads=96, kv_heads=96, head_dim=128,
                    ffn_hidden_size=4 * 12288, vocab_size=51200, mlp="gelu")
    c = param_counts(gpt)
    s = dataclasses.replace(setup("deepspeed", seq=2048))
    r = run(gpt, s, dp=384, zero=3, recompute=2)
    assert r["weights"] == pytest.approx(2 * c.total / 384 + 2 * 1e9, rel=1e-6)
    assert r["gradients"] == pytest.approx(2 * c.total / 384 + 2 * 5e8, rel=1e-6)


def test_activation_offload_and_optimizer_offload_fractions() -> None:
    s = setup("megatron")
    off = dataclasses.replace(s, framework=dataclasses.replace(s.framework, activation_offload_fraction=0.5,
                                                               optimizer_offload_fraction=1.0))
    a, b = run(LLAMA8, s), run(LLAMA8, off)
    assert b["activations_stored_first"] == pytest.approx(0.5 * a["activations_stored_first"])
    assert b["optimizer"] == 0.0


def test_dropout_masks_and_unfused_attention_follow_the_setup() -> None:
    """Korthikanti et al. 2022: dropout masks are 1 B per element; without FlashAttention the s x s
    softmax (2 B) is kept. Both reach the memory model through TrainingSetup / the profile."""
    s = setup("megatron", seq=2048)
    drop = dataclasses.replace(s, framework=dataclasses.replace(s.framework, dropout=True))
    unfused = dataclasses.replace(s, flash_attention=False)
    base = run(LLAMA8, s)["activations_stored_first"]
    h, tokens = LLAMA8.hidden_size, 2048
    assert run(LLAMA8, drop)["activations_stored_first"] - base == pytest.approx(LLAMA8.layers * tokens * 2 * h)
    extra = run(LLAMA8, unfused)["activations_stored_first"] - base
    assert extra == pytest.approx(LLAMA8.layers * tokens * (2 * LLAMA8.attention_heads * 2048
                                                           - 4 * LLAMA8.attention_heads))


def test_transformer_engine_keeps_fp8_gemm_inputs_at_one_byte() -> None:
    """Transformer Engine's Linear / LayerNormLinear / LayerNormMLP save the quantized input of an
    FP8 GEMM for its weight gradient: per layer and token the QKV and fc1 inputs (h each) and the
    fc2 input (ffn) drop from 2 B to 1 B, and the out-projection keeps a 1 B copy of the attention
    output (q_dim) beside the 2 B one the attention backward reads. torchao (torchtitan) saves the
    16-bit inputs: FP8 changes nothing there. MXFP8 adds one 1-byte scale per 32 elements."""
    h, f, q = LLAMA8.hidden_size, LLAMA8.ffn_hidden_size, LLAMA8.attention_heads * LLAMA8.head_dim
    per_token = (2 * h + f) * (2.0 - 1.0) - q * 1.0
    tokens = 4096
    for fw in ("megatron", "nemo", "deepspeed"):
        bf16 = run(LLAMA8, setup(fw, "bf16"))["activations_stored_first"]
        fp8 = run(LLAMA8, setup(fw, "fp8"))["activations_stored_first"]
        assert bf16 - fp8 == pytest.approx(LLAMA8.layers * tokens * per_token), fw
    mx = run(LLAMA8, setup("megatron", "mxfp8"))["activations_stored_first"]
    fp8 = run(LLAMA8, setup("megatron", "fp8"))["activations_stored_first"]
    assert mx - fp8 == pytest.approx(LLAMA8.layers * tokens * (2 * h + f + q) / 32)
    tt = [run(LLAMA8, setup("torchtitan", p))["activations_stored_first"] for p in ("bf16", "fp8")]
    assert tt[0] == tt[1]


# ---------------------------------------------------------------- MoE activations by term

def test_moe_dispatch_buffers_join_the_working_set() -> None:
    """Megatron-Core's all-to-all dispatcher (token_dispatcher.py: permute, all_to_all,
    sort_chunks_by_idxs): a permuted copy of the routed tokens always; with EP the send and the
    receive buffers of the all-to-all at once. Per GPU: tokens x top_k x etp / tp pairs."""
    always, with_ep = moe_dispatch_bytes_per_pair(MOE)
    assert (always, with_ep) == (2 * MOE.hidden_size, 4 * MOE.hidden_size)
    s = setup("megatron", seq=4096)
    no_ep = run(MOE, s, dp=8, ep=1)["activations_working_set"]
    ep8 = run(MOE, s, dp=8, ep=8)["activations_working_set"]
    pairs = 4096 * MOE.moe_top_k
    assert ep8 - no_ep == pytest.approx(pairs * with_ep)


@pytest.mark.parametrize(("framework", "kept_per_pair"), [
    ("megatron", 2),   # the grouped-GEMM input; the probs weigh act(fc1) inside the experts
    ("generic", 4),    # + the expert output the probability-weighted combine keeps
])
def test_moe_routed_activations_scale_with_etp_over_tp(framework: str, kept_per_pair: int) -> None:
    """Balanced routing: a GPU handles tokens x top_k x etp / tp (token, expert) pairs, each with
    1/etp of the expert hidden; EP re-distributes pairs without changing their count."""
    s = setup(framework, seq=4096)
    a = run(MOE, s, tp=2, sp=True, dp=4, ep=2, etp=1)
    b = run(MOE, s, tp=2, sp=True, dp=4, ep=2, etp=2)
    c = run(MOE, s, tp=2, sp=True, dp=4, ep=8, etp=1)
    h, f, k = MOE.hidden_size, MOE.moe_ffn_hidden_size, MOE.moe_top_k
    per_pair_in = kept_per_pair * h
    tokens = 4096
    delta = b["activations_stored_first"] - a["activations_stored_first"]
    assert delta == pytest.approx(MOE.layers * tokens * k * per_pair_in * (2 - 1) / 2)
    assert c["activations_stored_first"] == pytest.approx(a["activations_stored_first"])
    assert f > 0


def test_router_terms_are_per_expert_on_the_layer_s_tokens() -> None:
    """Router probs fp32 (4 B) and the bool routing map (1 B) per expert per token (Megatron-Core
    router.py / moe_utils.permute), divided by tp with sequence parallelism."""
    from workload_compiler.perf.activations import coefficients, policy_tensors
    t = {x.name: x for x in policy_tensors(MOE, "none", moe_layer=True)}
    assert t["router_probs"].bytes_per_token == 4 * MOE.moe_experts
    assert t["routing_map"].bytes_per_token == 1 * MOE.moe_experts
    assert t["router_probs"].sharding == "replicated"
    assert coefficients([t["expert_in"], t["expert_out"]]).expert_in == 4 * MOE.hidden_size
    assert np.isfinite(t["router_probs"].bytes_per_token)


@pytest.mark.parametrize("intake", [
    # Megatron-Bridge deepseek_workload_base_configs.py DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_CS_V1
    {"model": {"preset": "deepseek-v3"}, "training": {"global_batch_size": 2048, "precision": "fp8"},
     "compute": {"accelerator": "gb300", "gpus": 256, "parallelism": {
         "tp": 1, "pp": 2, "dp": 128, "ep": 32, "vp": 8, "micro_batch_size": 2, "recompute": "mla_up_proj",
         "ep_dispatcher": "hybridep", "pipeline_layout": "Et*4|(t*4|)*14tmL"}}},
    # DEEPSEEK_V3_PRETRAIN_CONFIG_B300_NVFP4_V1
    {"model": {"preset": "deepseek-v3"}, "training": {"global_batch_size": 2048, "precision": "nvfp4"},
     "compute": {"accelerator": "b300", "gpus": 256, "parallelism": {
         "tp": 1, "pp": 8, "dp": 32, "ep": 8, "vp": 2, "micro_batch_size": 2, "recompute": "mla_up_proj",
         "ep_dispatcher": "hybridep"}}},
    # kimi_workload_base_configs.py KIMI_K2_PRETRAIN_CONFIG_B300_BF16
    {"model": {"preset": "kimi-k2"}, "training": {"global_batch_size": 4096, "precision": "bf16"},
     "compute": {"accelerator": "b300", "gpus": 256, "parallelism": {
         "tp": 1, "pp": 16, "dp": 16, "ep": 16, "vp": 1, "micro_batch_size": 2, "recompute": "mla_up_proj"}}},
], ids=["deepseek-v3-gb300-fp8", "deepseek-v3-b300-nvfp4", "kimi-k2-b300-bf16"])
def test_megatron_bridge_moe_configs_that_ran_fit_as_stated(intake: dict[str, Any]) -> None:
    """Published Blackwell Ultra MoE configs, as their files state them: each was 'does not fit'
    while the experts' outputs were counted as kept for the combine (26-39% of a MoE layer's
    stored activations), which Megatron-Core's probability-weighted activation does not keep."""
    from workload_compiler import compile_workload
    doc = {"kind": "training", **intake}
    doc["training"] |= {"tokens": "1T", "seq_len": 4096, "framework": "nemo"}
    spec = compile_workload(doc)
    assert spec.feasible, spec.binding_constraint
