"""Hybrid Mamba-2 / attention models (Nemotron-H): counts, FLOPs, memory and step time, and the inputs
that describe them (arch/model.py hybrid_pattern, intake `model.hybrid`, HF NemotronHForCausalLM).

Sources of the numbers checked:
- the presets: Megatron-Bridge nemotron_h_provider.py (NemotronHModelProvider8B/47B/56B);
- the parameter counts the models are named by: Nemotron-H technical report (arXiv:2504.03624), 8B,
  47B and 56B;
- model FLOPs: Megatron-LM training.py num_floating_point_operations, hybrid_flops (attention,
  MLP and Mamba layers and the logits, x3 for forward and backward), and DGX Cloud Benchmarking's
  nemotron-h README ("The model flops for Nemotron-H 56b for GBS=1 is 2.816e15");
- a published step: the same README's 256 x H100 FP8 run (tp 8, pp 1, dp 32, mbs 1, GBS 768,
  seq 8192): 15.714 s mean over iterations 11-44, std 2.989 s;
- Nemotron 3 Nano 30B-A3B (MoE blocks): Megatron-Bridge's Nemotron3NanoProvider; NVIDIA's model card,
  31.6B parameters, about 3.2B active per token (3.6B with the embeddings).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workload_compiler import compile_workload
from workload_compiler.arch.counts import param_counts, training_flops_per_token
from workload_compiler.arch.hf_config import load_hf_config
from workload_compiler.arch.presets import preset_arch
from workload_compiler.errors import InputError
from workload_compiler.perf.activations import layer_activations

PATTERN_8B = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"
NEMOTRON_H_8B_CONFIG = {   # nvidia/Nemotron-H-8B-Base-8K config.json, the keys read
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "attention_head_dim": 128,
    "chunk_size": 128, "conv_kernel": 4, "hidden_act": "relu2", "hidden_size": 4096,
    "hybrid_override_pattern": PATTERN_8B, "intermediate_size": 21504, "mamba_head_dim": 64,
    "mamba_num_heads": 128, "n_groups": 8, "num_attention_heads": 32, "num_hidden_layers": 52,
    "num_key_value_heads": 8, "ssm_state_size": 128, "tie_word_embeddings": False, "vocab_size": 131072,
}


@pytest.mark.parametrize(("preset", "billions"), [("nemotron-h-8b", 8), ("nemotron-h-47b", 47), ("nemotron-h-56b", 56)])
def test_parameters_match_the_names_of_the_models(preset: str, billions: int) -> None:
    assert param_counts(preset_arch(preset, "model.preset")).total == pytest.approx(billions * 1e9, rel=0.02)


def megatron_hybrid_flops_per_token(preset: str, seq: int) -> float:
    """Megatron-LM's hybrid_flops for batch 1, divided by the sequence length."""
    a = preset_arch(preset, "model.preset")
    h = a.hidden_size
    p = a.head_dim * a.attention_heads / h
    attn = 4 * seq * h * p * (h + h * a.kv_heads / a.attention_heads + seq / 2)
    mlp = 4 * (a.ffn_hidden_size / h) * seq * h * h
    d_in = a.mamba_heads * a.mamba_head_dim
    mamba = (2 * seq * h * (2 * d_in + 2 * a.mamba_groups * a.mamba_state_dim + a.mamba_heads)
             + 7 * seq * d_in * a.mamba_state_dim + 2 * seq * d_in * h)
    logits = 2 * seq * h * a.vocab_size
    pattern = a.hybrid_pattern or ""
    fwd = pattern.count("*") * attn + pattern.count("-") * mlp + pattern.count("M") * mamba + logits
    return 3 * fwd / seq


@pytest.mark.parametrize("preset", ["nemotron-h-8b", "nemotron-h-56b"])
def test_model_flops_are_megatron_lm_hybrid_flops(preset: str) -> None:
    ours = training_flops_per_token(preset_arch(preset, "model.preset"), 8192)
    # the conv1d, SSM scalars and gated-norm weights count as parameters, not matmuls: < 0.1%
    assert ours == pytest.approx(megatron_hybrid_flops_per_token(preset, 8192), rel=1e-3)


def test_model_flops_of_a_56b_sequence_match_dgx_cloud() -> None:
    per_sequence = training_flops_per_token(preset_arch("nemotron-h-56b", "model.preset"), 8192) * 8192
    # DGX Cloud counts the scan by chunk terms instead of Megatron's 7 d_inner d_state: 1% apart
    assert per_sequence == pytest.approx(2.816e15, rel=0.02)


def test_the_hf_config_reads_as_the_preset(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(NEMOTRON_H_8B_CONFIG))
    ours = load_hf_config(path).model_dump(exclude={"name", "source"})
    assert ours == preset_arch("nemotron-h-8b", "model.preset").model_dump(exclude={"name", "source"})


NANO_PATTERN = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
NEMOTRON_3_NANO_CONFIG = {   # nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B config.json, the keys read
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "chunk_size": 128, "conv_kernel": 4,
    "head_dim": 128, "hidden_size": 2688, "hybrid_override_pattern": NANO_PATTERN, "intermediate_size": 1856,
    "mamba_head_dim": 64, "mamba_num_heads": 64, "mlp_hidden_act": "relu2", "hidden_act": "relu2",
    "moe_intermediate_size": 1856, "moe_shared_expert_intermediate_size": 3712, "n_group": 1, "n_groups": 8,
    "n_routed_experts": 128, "n_shared_experts": 1, "num_attention_heads": 32, "num_experts_per_tok": 6,
    "num_hidden_layers": 52, "num_key_value_heads": 2, "ssm_state_size": 128, "tie_word_embeddings": False,
    "topk_group": 1, "vocab_size": 131072,
}


def test_nemotron_3_nano_counts_total_and_active_parameters() -> None:
    c = param_counts(preset_arch("nemotron-3-nano-30b-a3b", "model.preset"))
    assert c.total == pytest.approx(31.6e9, rel=0.01)
    assert c.active == pytest.approx(3.6e9, rel=0.02)
    assert c.active - c.embedding == pytest.approx(3.2e9, rel=0.02)


@pytest.mark.parametrize("spelled", ["pattern", "block types"])
def test_a_nemotron_3_config_reads_as_the_preset(tmp_path: Path, spelled: str) -> None:
    cfg = dict(NEMOTRON_3_NANO_CONFIG)
    if spelled == "block types":     # newer configs list the blocks instead of the pattern
        kinds = {"M": "mamba", "E": "moe", "*": "attention"}
        cfg.pop("hybrid_override_pattern")
        cfg["layers_block_type"] = [kinds[c] for c in NANO_PATTERN]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    ours = load_hf_config(path).model_dump(exclude={"name", "source"})
    assert ours == preset_arch("nemotron-3-nano-30b-a3b", "model.preset").model_dump(exclude={"name", "source"})


def test_a_hybrid_mtp_module_other_than_attention_and_ffn_names_the_missing_feature(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(NEMOTRON_3_NANO_CONFIG | {"num_nextn_predict_layers": 1,
                                                         "mtp_hybrid_override_pattern": "M*E"}))
    with pytest.raises(InputError, match="missing feature: other multi-token-prediction modules"):
        load_hf_config(path)


def test_a_moe_hybrid_trains_and_expert_parallelism_shards_its_experts() -> None:
    """Nano on 8 B200 (Megatron-Bridge's recipe default: EP 8): 23 MoE blocks of 128 experts, ep 8 holds
    16 experts of each on a GPU; at ep 4, 32 of each: the experts' weights per GPU double."""
    weights = {}
    for ep in (4, 8):
        spec = compile_workload({"kind": "training", "model": {"preset": "nemotron-3-nano-30b-a3b"},
                                 "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 512,
                                              "precision": "fp8", "framework": "megatron"},
                                 "compute": {"accelerator": "b200", "gpus": 8,
                                             "parallelism": {"tp": 1, "pp": 1, "dp": 8, "ep": ep, "etp": 1,
                                                             "micro_batch_size": 1}}})
        assert spec.feasible and spec.compute.step_time_s > 0
        weights[ep] = spec.compute.memory_breakdown_bytes["weights"]
    c = param_counts(preset_arch("nemotron-3-nano-30b-a3b", "model.preset"))
    # the difference is half the routed experts at ep 4 minus an eighth at ep 8, in the weights' bytes
    per_param = (weights[4] - weights[8]) / (c.expert_params / 4 - c.expert_params / 8)
    assert 1.0 <= per_param <= 4.0       # 16-bit weights, FP8 copies: between 1 and 4 bytes a parameter


def _training(model: dict[str, object], **compute: object) -> dict[str, object]:
    return {"kind": "training", "model": model,
            "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 768, "precision": "fp8"},
            "compute": {"accelerator": "h100-sxm", **compute}}


def test_the_intake_takes_a_hybrid_by_its_fields() -> None:
    fields = {"layers": 52, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8, "head_dim": 128,
              "ffn_hidden_size": 21504, "vocab_size": 131072, "mlp": "squared_relu", "tied_embeddings": False,
              "hybrid": {"pattern": PATTERN_8B, "mamba_heads": 128}}
    pinned = {"gpus": 64, "parallelism": {"tp": 2, "pp": 1, "dp": 32, "micro_batch_size": 1}}
    by_fields = compile_workload(_training(fields, **pinned))
    by_preset = compile_workload(_training({"preset": "nemotron-h-8b"}, **pinned))
    assert by_fields.compute.step_time_s == pytest.approx(by_preset.compute.step_time_s, rel=1e-9)


@pytest.mark.parametrize(("hybrid", "field", "allowed"), [
    ({"pattern": PATTERN_8B[:-1], "mamba_heads": 128}, "model.hybrid.pattern", "one character per layer"),
    ({"pattern": "M-*E", "mamba_heads": 128}, "model.hybrid.pattern", ""),
    ({"pattern": "M-*X" * 13, "mamba_heads": 128}, "model.hybrid.pattern", ""),
])
def test_a_pattern_that_does_not_describe_the_layers_is_an_input_error(hybrid: dict[str, object], field: str,
                                                                      allowed: str) -> None:
    model = {"layers": 52, "hidden_size": 4096, "attention_heads": 32, "hybrid": hybrid}
    with pytest.raises(InputError) as exc:
        compile_workload(_training(model, gpus=8))
    assert exc.value.field == field and allowed in str(exc.value)


def test_full_recompute_keeps_one_block_input_per_layer() -> None:
    """Each layer of a hybrid is one block: full recompute keeps its 16-bit input, 2h bytes per token,
    where a transformer layer (attention + MLP, one checkpoint) keeps the same 2h."""
    a = preset_arch("nemotron-h-56b", "model.preset")
    kept = layer_activations(a, moe_layer=False).stored["full"]
    assert kept.replicated + kept.tp == pytest.approx(2.0 * a.hidden_size)


def test_the_published_dgx_cloud_layout_fits_and_lands_near_its_step_time() -> None:
    spec = compile_workload(_training({"preset": "nemotron-h-56b"}, gpus=256,
                                      parallelism={"tp": 8, "pp": 1, "dp": 32, "micro_batch_size": 1}))
    assert spec.feasible
    # Not fitted on it: 15.714 s published (std 2.989 s over iterations 11-44); we are ~19% fast
    assert spec.compute.step_time_s == pytest.approx(15.714, rel=0.25)


def test_the_planner_writes_no_transformer_layout_string_for_a_hybrid() -> None:
    spec = compile_workload(_training({"preset": "nemotron-h-56b"}, accelerator="b200", gpus=256,
                                      parallelism={"pp": 2}))
    lay = spec.compute.parallelism
    assert spec.feasible and lay.pp == 2 and lay.first_stage_layers and lay.pipeline_layout is None


def test_a_hybrid_has_no_band_borrowed_from_transformers() -> None:
    """Hybrids are a kind of their own: no published hybrid run is in the calibration set, so the
    headline numbers say they are unchecked instead of carrying the dense transformers' band."""
    spec = compile_workload(_training({"preset": "nemotron-h-8b"}, gpus=64,
                                      parallelism={"tp": 2, "pp": 1, "dp": 32, "micro_batch_size": 1}))
    band = spec.uncertainty["compute.tokens_per_s"]
    assert band.low is None and "no published Hopper hybrid fp8 run" in band.basis


def test_mamba_heads_split_over_tp_and_cp_or_the_layout_is_refused() -> None:
    """Megatron-Core's all-to-all context parallelism for Mamba asserts that each tp rank's heads
    divide over cp (mamba_context_parallel.py): 72 heads at tp 8 (9 a rank) cannot go over cp 2."""
    model = {"preset": "nemotron-h-8b", "hybrid": {"pattern": PATTERN_8B, "mamba_heads": 72}}
    def compiled(cp: int) -> object:
        return compile_workload({"kind": "training", "model": model,
                                 "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 64,
                                              "precision": "bf16"},
                                 "compute": {"accelerator": "h100-sxm", "gpus": 8 * cp,
                                             "parallelism": {"tp": 8, "cp": cp, "pp": 1, "dp": 1}}})
    assert compiled(1).feasible
    refused = compiled(2)
    assert not refused.feasible and "tp x cp does not divide mamba heads" in str(refused.model_dump())


def test_context_parallelism_costs_a_hybrid_its_mamba_all_to_alls() -> None:
    """At cp 2 a Mamba-2 layer exchanges its in_proj outputs and its scan output over the cp group:
    the step's cp term is several times that of the same model with MLPs in the Mamba layers' place,
    which has the same 4 attention layers and their K/V ring."""
    def cp_term(pattern: str) -> float:
        spec = compile_workload({"kind": "training",
                                 "model": {"preset": "nemotron-h-8b",
                                           "hybrid": {"pattern": pattern, "mamba_heads": 128}},
                                 "training": {"tokens": "1T", "seq_len": 16384, "global_batch_size": 64,
                                              "precision": "bf16"},
                                 "compute": {"accelerator": "h100-sxm", "gpus": 16,
                                             "parallelism": {"tp": 8, "cp": 2, "pp": 1, "dp": 1}}})
        return float(spec.compute.step_breakdown_s["cp_comm_exposed"])
    assert cp_term(PATTERN_8B) > 3.0 * cp_term(PATTERN_8B.replace("M", "-"))


# IBM Granite 4.0-H reads through HF's GraniteMoeHybridConfig (transformers models/granitemoehybrid/
# configuration_granitemoehybrid.py): each config layer is a mixer (layer_types) then the FFN, routed
# experts of intermediate_size beside one shared MLP of shared_intermediate_size
# (modeling_granitemoehybrid.py GraniteMoeHybridDecoderLayer). A small config, counted by hand below.
GRANITE_SMALL = {
    "architectures": ["GraniteMoeHybridForCausalLM"], "hidden_size": 1536, "num_hidden_layers": 4,
    "num_attention_heads": 12, "num_key_value_heads": 4, "intermediate_size": 512, "shared_intermediate_size": 1024,
    "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 1000, "tie_word_embeddings": True,
    "layer_types": ["mamba", "attention", "mamba", "mamba"], "mamba_n_heads": 48, "mamba_d_head": "auto",
    "mamba_d_state": 128, "mamba_n_groups": 1, "mamba_expand": 2,
}


def test_a_granite_hybrid_config_counts_as_its_modules_do() -> None:
    from workload_compiler.arch.hf_config import arch_from_hf_dict
    a = arch_from_hf_dict(GRANITE_SMALL)
    assert a.hybrid_pattern == "ME*EMEME" and a.mamba_head_dim == 2 * 1536 // 48
    h, inner, conv_dim = 1536, 3072, 3072 + 2 * 1 * 128
    # in_proj, conv (weights and bias), dt/A/D, the gated norm, out_proj
    mamba = h * (inner + conv_dim + 48) + conv_dim * (4 + 1) + 3 * 48 + inner + inner * h
    attention = 2 * h * h + 2 * h * 4 * 128                                                 # q, o; k, v of 4 KV heads
    experts, router, shared = 8 * 3 * h * 512, h * 8, 3 * h * 1024                          # gated MLPs
    norms = 2 * 4 * h + h
    total = 1000 * h + 3 * mamba + attention + 4 * (experts + router + shared) + norms     # tied head
    counts = param_counts(a)
    assert counts.total == total
    assert counts.active == total - 4 * experts * (1 - 2 / 8)


def test_a_dense_granite_hybrid_has_the_shared_mlp_alone() -> None:
    from workload_compiler.arch.hf_config import arch_from_hf_dict
    a = arch_from_hf_dict({**GRANITE_SMALL, "num_local_experts": 0})
    assert a.hybrid_pattern == "M-*-M-M-" and not a.is_moe and a.ffn_hidden_size == 1024
    with pytest.raises(InputError, match="layer_types"):
        arch_from_hf_dict({**GRANITE_SMALL, "layer_types": ["mamba", "conv", "mamba", "mamba"]})


def test_a_granite_hybrid_serves_from_its_config(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GRANITE_SMALL))
    spec = compile_workload({"kind": "inference", "model": {"hf_config": str(path)},
                             "serving": {"input_tokens": 2000, "output_tokens": 500},
                             "compute": {"accelerator": "l40s", "gpus": 1}})
    assert spec.feasible and spec.inference.ssm_state_bytes_per_sequence > 0
