"""Gated DeltaNet hybrids (Qwen3-Next, Qwen3.5): the G block of a hybrid pattern, read through the
Mamba-2 mixer's fields (arch/model.py), from HF configs and the qwen3-next-80b-a3b preset.

Sources of the numbers checked:
- Qwen3-Next's shape: Qwen/Qwen3-Next-80B-A3B and Qwen/Qwen3-Coder-Next config.json (Qwen3NextConfig):
  hidden 2048, 48 layers, 16 heads of 256 with 2 KV heads, every 4th layer attention, Gated DeltaNet
  16 key heads and 32 value heads of 128, conv 4; 512 experts (top 10) of 512 and a shared one of
  512; vocabulary 151,936, untied;
- its size: the checkpoint's safetensors hold 79,674,391,296 parameters, 3,874,929,408 of them active
  per token (Hugging Face Hub metadata of Qwen/Qwen3-Coder-Next; Qwen's model card: "80B in total
  and 3B activated");
- the modules: HF transformers models/qwen3_next/modeling_qwen3_next.py (Qwen3NextGatedDeltaNet:
  in_proj_qkvz, in_proj_ba, conv1d without bias, dt_bias, A_log, a gated RMSNorm over one head,
  out_proj; Qwen3NextAttention's q_proj twice the heads: queries and the output gate);
- the state: vLLM mamba_utils.py MambaStateShapeCalculator.gated_delta_net_state_shape;
- Qwen3.5-9B's text config (Qwen/Qwen3.5-9B config.json text_config: hidden 4096, 32 layers,
  intermediate 12288, 16 heads of 256, 4 KV heads, attn_output_gate, vocabulary 248,320).
"""

from __future__ import annotations

import pytest

from workload_compiler import compile_workload
from workload_compiler.arch.counts import param_counts
from workload_compiler.arch.hf_config import arch_from_hf_dict
from workload_compiler.arch.kv_cache import kv_bytes_per_token, ssm_state_bytes_per_sequence
from workload_compiler.arch.presets import preset_arch
from workload_compiler.errors import InputError

QWEN3_NEXT = {
    "architectures": ["Qwen3NextForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 48,
    "vocab_size": 151936, "head_dim": 256, "num_attention_heads": 16, "num_key_value_heads": 2,
    "num_experts": 512, "num_experts_per_tok": 10, "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512, "decoder_sparse_step": 1, "mlp_only_layers": [],
    "intermediate_size": 5120, "linear_num_key_heads": 16, "linear_key_head_dim": 128,
    "linear_num_value_heads": 32, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
    "full_attention_interval": 4, "tie_word_embeddings": False,
}
QWEN35_9B = {
    "architectures": ["Qwen3_5ForConditionalGeneration"], "tie_word_embeddings": False,
    "text_config": {"hidden_size": 4096, "num_hidden_layers": 32, "intermediate_size": 12288,
                    "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "vocab_size": 248320,
                    "attn_output_gate": True, "full_attention_interval": 4,
                    "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 8,
                    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_num_key_heads": 16,
                    "linear_num_value_heads": 32, "linear_value_head_dim": 128, "tie_word_embeddings": False},
}
# The weights the counts leave out: the q and k norms (2 x 256 per attention layer) and the shared
# expert's sigmoid gate (2,048 per layer).
UNCOUNTED = 12 * 2 * 256 + 48 * 2048


def test_qwen3_next_counts_as_its_checkpoint() -> None:
    a = arch_from_hf_dict(QWEN3_NEXT)
    assert a.hybrid_pattern == "GEGEGE*E" * 12 and a.gated_delta and a.attention_output_gate
    c = param_counts(a)
    assert c.total + UNCOUNTED == 79_674_391_296
    assert c.active + UNCOUNTED == 3_874_929_408
    assert preset_arch("qwen3-next-80b-a3b").model_dump(exclude={"name", "source"}) == \
        a.model_dump(exclude={"name", "source"})


def test_the_gated_deltanet_mixer_is_counted_module_by_module() -> None:
    a = arch_from_hf_dict(QWEN3_NEXT)
    h, key, value, heads = 2048, 16 * 128, 32 * 128, 32
    qkvz, ba, conv = h * (2 * key + 2 * value), h * 2 * heads, (2 * key + value) * 4
    gdn = qkvz + ba + conv + 2 * heads + 128 + value * h
    attention = h * 16 * 256 * 2 + 2 * h * 2 * 256 + 16 * 256 * h
    moe = 512 * 3 * h * 512 + h * 512 + 3 * h * 512
    assert param_counts(a).total == 36 * gdn + 12 * attention + 48 * moe + 48 * 2 * h + h + 2 * 151936 * h


def test_its_state_has_vllms_gated_delta_net_shape() -> None:
    a = preset_arch("qwen3-next-80b-a3b")
    conv, temporal = (2 * 16 * 128 + 32 * 128) * 3 * 2, 32 * 128 * 128
    assert float(ssm_state_bytes_per_sequence(a, 4.0)) == 36 * (conv + 4 * temporal)     # fp32 state
    assert float(ssm_state_bytes_per_sequence(a, 2.0, tp=4)) == 36 * (conv + 2 * temporal) / 4
    assert kv_bytes_per_token(a, 2.0) == 12 * 2 * 2 * 256 * 2


def test_a_qwen35_dense_config_reads_from_its_text_config() -> None:
    a = arch_from_hf_dict(QWEN35_9B)
    assert a.hybrid_pattern == "G-G-G-*-" * 8 and not a.is_moe and a.ffn_hidden_size == 12288
    # the text decoder of the model Qwen names 9B (its vision tower is not read)
    assert 8.5e9 < param_counts(a).total < 9.5e9


def test_one_kind_of_linear_mixer_per_model() -> None:
    model = {"name": "mixed", "layers": 4, "hidden_size": 1024, "attention_heads": 8, "kv_heads": 8,
             "ffn_hidden_size": 4096, "vocab_size": 32000, "hybrid": {"pattern": "MG*-", "mamba_heads": 16}}
    with pytest.raises(InputError, match="one kind of linear mixer"):
        compile_workload({"kind": "inference", "model": model, "compute": {"accelerator": "h100-sxm"}})


def test_qwen3_next_trains_and_serves() -> None:
    serve = compile_workload({"kind": "inference", "model": {"preset": "qwen3-next-80b-a3b"},
                              "serving": {"weights": "fp8", "input_tokens": 8000, "output_tokens": 4000},
                              "compute": {"accelerator": "b200"}})
    assert serve.feasible and serve.inference.ssm_state_bytes_per_sequence == pytest.approx(
        float(ssm_state_bytes_per_sequence(preset_arch("qwen3-next-80b-a3b"), 2.0)))
    train = compile_workload({"kind": "training", "model": {"preset": "qwen3-next-80b-a3b"},
                              "training": {"tokens": "1T", "seq_len": 4096, "global_batch_size": 1024,
                                           "precision": "bf16"},
                              "compute": {"accelerator": "h100-sxm", "gpus": 128}})
    assert train.feasible and 0.05 < train.compute.mfu < 0.6
    assert "hybrid" in train.uncertainty["compute.step_time_s"].basis        # unchecked: no run validated


def test_serving_tp_divides_the_gated_deltanet_key_and_value_heads() -> None:
    intake = {"kind": "inference", "model": {"preset": "qwen3-next-80b-a3b"},
              "serving": {"input_tokens": 1000, "output_tokens": 200},
              "compute": {"accelerator": "gb200", "parallelism": {"tp": 32}}}
    with pytest.raises(InputError, match="divisor of 16"):      # 16 key heads, 32 value heads
        compile_workload(intake)


def test_the_attention_interval_and_dense_layers_come_from_the_config() -> None:
    """Without layer_types, every full_attention_interval-th layer attends (Qwen3NextConfig); the layers
    of mlp_only_layers keep a dense MLP of intermediate_size between the MoE ones."""
    cfg = {**QWEN3_NEXT, "num_hidden_layers": 6, "full_attention_interval": 3, "mlp_only_layers": [0]}
    a = arch_from_hf_dict(cfg)
    assert a.hybrid_pattern == "G-GE*EGEGE*E"
    assert a.mlp_blocks == 1 and a.ffn_hidden_size == 5120 and a.moe_blocks == 5
