"""DeepSeek Sparse Attention (DeepSeek-V3.2): a lightning indexer scores every earlier token and each
query attends to its top-k (arch/model.py sparse_attention_topk, indexer_heads, indexer_head_dim).

Sources of the numbers checked:
- the shape: deepseek-ai/DeepSeek-V3.2 config.json (DeepseekV32ForCausalLM): DeepSeek-V3's, with
  index_topk 2048, index_n_heads 64, index_head_dim 128;
- the indexer's weights: DeepSeek-V3.2-Exp inference/model.py Indexer (wq_b q_lora_rank -> heads x
  head_dim, wk dim -> head_dim, k_norm a LayerNorm of head_dim, weights_proj dim -> heads);
- its cache: vLLM's indexer key cache, index_head_dim FP8 values and an FP32 scale per 128 per token
  and layer.
"""

from __future__ import annotations

import pytest

from workload_compiler import compile_workload
from workload_compiler.arch.counts import attention_flops_per_token, indexer_params, param_counts
from workload_compiler.arch.hf_config import arch_from_hf_dict
from workload_compiler.arch.kv_cache import kv_bytes_per_token
from workload_compiler.arch.presets import preset_arch

V32_CONFIG = {
    "architectures": ["DeepseekV32ForCausalLM"], "hidden_size": 7168, "intermediate_size": 18432,
    "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
    "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
    "moe_layer_freq": 1, "n_group": 8, "topk_group": 4, "num_nextn_predict_layers": 1, "vocab_size": 129280,
    "index_topk": 2048, "index_n_heads": 64, "index_head_dim": 128, "tie_word_embeddings": False,
    "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
}


def test_the_indexer_is_counted_module_by_module() -> None:
    a = preset_arch("deepseek-v3.2")
    assert indexer_params(a) == 1536 * 64 * 128 + 7168 * 128 + 2 * 128 + 7168 * 64
    # every attention block carries one: 61 layers and the MTP module's
    assert param_counts(a).total - param_counts(preset_arch("deepseek-v3")).total == 62 * indexer_params(a)


def test_its_config_reads_as_the_preset() -> None:
    assert arch_from_hf_dict(V32_CONFIG).model_dump(exclude={"name", "source"}) == \
        preset_arch("deepseek-v3.2").model_dump(exclude={"name", "source"})


def test_the_cache_adds_the_indexer_keys() -> None:
    assert kv_bytes_per_token(preset_arch("deepseek-v3.2"), 2.0) == 61 * ((512 + 64) * 2 + 128 + 4)


def test_a_query_attends_to_its_top_k_keys() -> None:
    a, dense = preset_arch("deepseek-v3.2"), preset_arch("deepseek-v3")
    assert attention_flops_per_token(a, 2048) == attention_flops_per_token(dense, 2048)   # all keys are the top-k
    long = 131072
    kept = 2048 - 2048**2 / (2 * long)            # min(position, 2,048) keys, averaged over the sequence
    dense_flops = attention_flops_per_token(dense, long)
    assert attention_flops_per_token(a, long) == pytest.approx(dense_flops * kept / (long / 2))


def test_long_context_decoding_reads_and_multiplies_far_less() -> None:
    def serve(preset: str) -> object:
        return compile_workload({"kind": "inference", "model": {"preset": preset},
                                 "serving": {"weights": "fp8", "kv_cache_dtype": "fp8", "input_tokens": 100000,
                                             "output_tokens": 4000, "scenario": "offline"},
                                 "compute": {"accelerator": "b200", "gpus": 8,
                                             "parallelism": {"tp": 8, "pp": 1, "ep": 8}}}).inference
    sparse, dense = serve("deepseek-v3.2"), serve("deepseek-v3")
    per_seq = {k: s.step_breakdown_s["attention"] / s.batch_size for k, s in (("sparse", sparse), ("dense", dense))}
    assert per_seq["sparse"] < 0.3 * per_seq["dense"]
    assert sparse.kv_bytes_per_token > dense.kv_bytes_per_token      # the indexer keys are cached too


def test_the_intake_adds_sparse_attention_to_any_model() -> None:
    sparse = {"topk": 2048, "indexer_heads": 64, "indexer_head_dim": 128}
    spec = compile_workload({"kind": "inference", "model": {"preset": "deepseek-v3", "sparse_attention": sparse},
                             "serving": {"input_tokens": 8000, "output_tokens": 1000},
                             "compute": {"accelerator": "b200", "gpus": 8}})
    assert spec.inference.kv_bytes_per_token == kv_bytes_per_token(preset_arch("deepseek-v3.2"), 2.0)
    assert spec.provenance["model.sparse_attention_topk"].source == "given"


def test_no_published_sparse_attention_run_was_validated_so_no_band() -> None:
    spec = compile_workload({"kind": "training", "model": {"preset": "deepseek-v3.2"},
                             "training": {"tokens": "1T", "seq_len": 4096, "global_batch_size": 8192,
                                          "precision": "fp8"},
                             "compute": {"accelerator": "h100-sxm", "gpus": 1024}})
    band = spec.uncertainty["compute.step_time_s"]
    assert band.low is None and "sparse" in band.basis
