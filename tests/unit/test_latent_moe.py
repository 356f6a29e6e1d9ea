"""Latent MoE (Nemotron 3 Super): routed experts on a latent width, the tokens projected down before
dispatch and back up after (arch/model.py moe_latent_size), and a hybrid's MTP module.

Sources of the numbers checked:
- the shape: nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16 config.json (hidden 4096, 88 layers of
  hybrid_override_pattern, Mamba 128 heads of 64, 8 groups, state 128; 32 heads of 128, 2 KV heads;
  512 routed experts, top 22, of 2,688 on moe_latent_size 1,024; a shared expert of 5,376; relu2;
  mtp_hybrid_override_pattern "*E", num_nextn_predict_layers 1; vocabulary 131,072, untied);
- the counts: its safetensors headers, BF16 weights 123,611,012,096, of them the MTP module
  2,942,324,736 and the backbone's inactive experts 107,898,470,400 (so 12,770,216,960 active), as a
  public test suite quotes them (modelsheet_cli tests, test_nemotron_super_latent_experts_and_mtp).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workload_compiler import compile_workload
from workload_compiler.arch.counts import param_counts
from workload_compiler.arch.hf_config import load_hf_config
from workload_compiler.arch.presets import preset_arch
from workload_compiler.perf.activations import moe_dispatch_bytes_per_pair

SUPER_PATTERN = "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME"
SUPER_CONFIG = {
    "architectures": ["NemotronHForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 88, "vocab_size": 131072,
    "hybrid_override_pattern": SUPER_PATTERN, "mamba_num_heads": 128, "mamba_head_dim": 64, "n_groups": 8,
    "ssm_state_size": 128, "conv_kernel": 4, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
    "n_routed_experts": 512, "n_shared_experts": 1, "num_experts_per_tok": 22, "moe_latent_size": 1024,
    "moe_intermediate_size": 2688, "moe_shared_expert_intermediate_size": 5376, "mlp_hidden_act": "relu2",
    "mtp_hybrid_override_pattern": "*E", "num_nextn_predict_layers": 1, "tie_word_embeddings": False,
    "intermediate_size": 2688, "chunk_size": 128,
}


def test_nemotron_3_super_counts_as_its_checkpoint() -> None:
    a = preset_arch("nemotron-3-super-120b-a12b")
    c = param_counts(a)
    inactive = (a.moe_experts - a.moe_top_k) * 2 * 1024 * 2688          # per MoE block (relu2: two matrices)
    assert c.total - c.mtp == 123_611_012_096 - 2_942_324_736
    assert c.total - c.mtp - a.moe_blocks * inactive == 12_770_216_960
    assert c.total - c.mtp - a.moe_blocks * inactive == c.active - (c.mtp - inactive)
    assert c.mtp == 2_942_324_736 - 4096          # the checkpoint's MTP module has one more norm


def test_its_config_reads_as_the_preset(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(SUPER_CONFIG))
    ours = load_hf_config(path).model_dump(exclude={"name", "source"})
    assert ours == preset_arch("nemotron-3-super-120b-a12b").model_dump(exclude={"name", "source"})


def test_tokens_travel_and_experts_multiply_at_the_latent_width() -> None:
    a = preset_arch("nemotron-3-super-120b-a12b")
    full = a.model_copy(update={"moe_latent_size": 0})
    assert moe_dispatch_bytes_per_pair(a) == pytest.approx(tuple(x / 4 for x in moe_dispatch_bytes_per_pair(full)))

    def step(model: dict[str, object]) -> object:
        return compile_workload({"kind": "training", "model": model,
                                 "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 512,
                                              "precision": "bf16"},
                                 "compute": {"accelerator": "h100-sxm", "gpus": 512,
                                             "parallelism": {"tp": 1, "pp": 8, "dp": 64, "ep": 64,
                                                             "micro_batch_size": 1, "recompute": "full",
                                                             "ep_comm_overlap": False}}}).compute
    latent = step({"preset": "nemotron-3-super-120b-a12b"})
    hidden = step({"preset": "nemotron-3-super-120b-a12b", "moe": {"experts": 512, "top_k": 22,
                   "expert_ffn_hidden_size": 2688, "shared_experts": 1, "shared_expert_ffn_hidden_size": 5376,
                   "latent_size": 0}})
    # the all-to-alls move a quarter of the bytes (1,024 of 4,096 channels), the experts a quarter of the FLOPs
    assert latent.step_breakdown_s["ep_comm"] < 0.3 * hidden.step_breakdown_s["ep_comm"]
    assert latent.step_time_s < hidden.step_time_s


def test_nemotron_3_super_trains_and_serves() -> None:
    train = compile_workload({"kind": "training", "model": {"preset": "nemotron-3-super-120b-a12b"},
                              "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 512,
                                           "precision": "fp8"},
                              "compute": {"accelerator": "gb200", "gpus": 256}})
    assert train.feasible and 0.05 < train.compute.mfu < 0.6
    serve = compile_workload({"kind": "inference", "model": {"preset": "nemotron-3-super-120b-a12b"},
                              "serving": {"weights": "fp8", "input_tokens": 8000, "output_tokens": 4000},
                              "compute": {"accelerator": "b200"}})
    assert serve.feasible and serve.inference.ssm_state_bytes_per_sequence > 0
