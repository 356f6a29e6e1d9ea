"""KV-cache bytes per token against ../shared/calibration/inference_public.yaml.

`kv_cache_per_token` rows are derived from the models' config.json files (aiconfigurator-core
0.12.0 model_configs); `memory_measurements` are start-up logs of vLLM. Our presets must give
exactly the same bytes, and the preset fields must be the ones the row lists.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from shared_data import calibration_dir, require
from workload_compiler.arch.kv_cache import (
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    kv_bytes_per_token_full_layers,
)
from workload_compiler.arch.model import ModelArch
from workload_compiler.arch.presets import preset_arch

CALIBRATION = calibration_dir() / "inference_public.yaml"


@pytest.fixture(autouse=True)
def _needs_shared_data() -> None:
    require(CALIBRATION)

# Row `model` -> the presets it stands for (None: no preset, use the fields the row gives).
PRESETS_FOR_ROW: dict[str, list[str] | None] = {
    "meta-llama/Llama-3.1-8B": ["llama3.1-8b", "llama3-8b"],
    "meta-llama/Llama-3.1-70B (also Llama-2-70B, Llama-3.3-70B)": [
        "llama3-70b", "llama2-70b", "llama3.3-70b"],
    "meta-llama/Llama-3.1-405B": ["llama3.1-405b"],
    "Qwen/Qwen3-8B": None,
    "Qwen/Qwen3-32B": ["qwen3-32b"],
    "Qwen/Qwen3-30B-A3B": ["qwen3-30b-a3b"],
    "Qwen/Qwen3-235B-A22B": ["qwen3-235b-a22b"],
    "mistralai/Mixtral-8x7B-v0.1": ["mixtral-8x7b"],
    "mistralai/Mixtral-8x22B-v0.1": ["mixtral-8x22b"],
    "deepseek-ai/DeepSeek-V3 / DeepSeek-R1 (MLA)": ["deepseek-v3", "deepseek-r1"],
    "openai/gpt-oss-120b": ["gpt-oss-120b"],
}
BLOG_ROW = "Llama 3.1 8B / 70B / 405B"


def _data() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CALIBRATION.read_text())
    return data


def _rows() -> list[dict[str, Any]]:
    return [r for r in _data()["kv_cache_per_token"] if r["model"] != BLOG_ROW]


def _from_row_fields(row: dict[str, Any]) -> ModelArch:
    heads = row["num_kv_heads"] * 4   # query heads do not enter the KV cache
    return ModelArch(name=row["model"], layers=row["num_layers"], hidden_size=heads * row["head_dim"],
                     attention_heads=heads, kv_heads=row["num_kv_heads"], head_dim=row["head_dim"],
                     ffn_hidden_size=1, vocab_size=1)


def test_every_row_is_mapped() -> None:
    assert {r["model"] for r in _rows()} == set(PRESETS_FOR_ROW)


@pytest.mark.parametrize("model", sorted(PRESETS_FOR_ROW))
def test_kv_bytes_per_token_equals_table(model: str) -> None:
    row = next(r for r in _rows() if r["model"] == model)
    presets = PRESETS_FOR_ROW[model]
    archs = [preset_arch(p) for p in presets] if presets else [_from_row_fields(row)]
    for arch in archs:
        assert arch.layers == row["num_layers"]
        if "kv_lora_rank" in row:
            assert (arch.mla_kv_lora_rank, arch.mla_qk_rope_head_dim) == (row["kv_lora_rank"],
                                                                        row["qk_rope_head_dim"])
        else:
            assert (arch.kv_heads, arch.head_dim) == (row["num_kv_heads"], row["head_dim"])
        if "sliding_window" in row:   # gpt-oss: only the full-attention layers grow with context
            assert arch.sliding_window == row["sliding_window"]
            assert arch.sliding_window_layers == row["sliding_attention_layers"]
            assert kv_bytes_per_token_full_layers(arch, 2) == row["kv_bytes_per_token_bf16_full_layers_only"]
            continue
        assert kv_bytes_per_token(arch, 2) == row["kv_bytes_per_token_bf16"]
        assert kv_bytes_per_token(arch, 1) == row["kv_bytes_per_token_fp8"]


def test_hf_blog_table_per_1k_and_128k_tokens() -> None:
    """HF blog "llama31" table (quoted in huggingface/blog#2345; GiB, 1k = 1024 tokens, 128k =
    128,000): 8B and 70B agree to the printed rounding. The quoted 405B row is exactly twice the
    config formula 2 * 126 * 8 * 128 * 2 B (the record is marked unverified), so it is checked as such."""
    row = next(r for r in _data()["kv_cache_per_token"] if r["model"] == BLOG_ROW)
    per_1k, per_128k = row["kv_gb_fp16_per_1k_tokens"], row["kv_gb_fp16_per_128k_tokens"]
    for key, pid in (("8B", "llama3.1-8b"), ("70B", "llama3-70b")):
        per_token = kv_bytes_per_token(preset_arch(pid), 2)
        # within half a unit of the printed last digit (0.3125 is printed 0.313)
        assert abs(per_token * 1024 / 2**30 - per_1k[key]) <= 0.0005 + 1e-12
        assert abs(per_token * 128_000 / 2**30 - per_128k[key]) <= 0.005 + 1e-12
    per_token_405b = kv_bytes_per_token(preset_arch("llama3.1-405b"), 2)
    assert abs(2 * per_token_405b * 128_000 / 2**30 - per_128k["405B"]) <= 0.005 + 1e-12


def test_vllm_memory_logs() -> None:
    """vLLM #12330: 11.12 GiB for 91,056 KV tokens of Llama 3 8B (bf16); vLLM #21348: Qwen3-235B
    at TP4 holds 48,128 B per token per GPU (4 KV heads split over 4 GPUs)."""
    logs = {m["id"]: m for m in _data()["memory_measurements"]}
    llama = logs["vllm-issue-12330/llama3-8b/A100-40GB"]["measured"]
    kv_gib = kv_bytes_per_token(preset_arch("llama3-8b"), 2) * llama["kv_tokens"] / 2**30
    assert kv_gib == pytest.approx(llama["kv_cache_gib"], abs=0.005)
    assert kv_bytes_per_token(preset_arch("qwen3-235b-a22b"), 2) / 4 == 48_128


@settings(max_examples=25, deadline=None)
@given(seq=st.integers(1, 4096), window=st.integers(1, 512), swa=st.integers(0, 8))
def test_sequence_cache_bounds(seq: int, window: int, swa: int) -> None:
    """Windows never grow the cache past the all-layers figure, and add nothing past the window."""
    arch = ModelArch(name="t", layers=8, hidden_size=512, attention_heads=8, kv_heads=2, head_dim=64,
                     ffn_hidden_size=1024, vocab_size=1000, sliding_window=window if swa else 0,
                     sliding_window_layers=swa)
    total = kv_bytes_per_sequence(arch, seq, 2)
    assert total <= kv_bytes_per_token(arch, 2) * seq
    if seq <= window or not swa:
        assert total == kv_bytes_per_token(arch, 2) * seq
    if seq > window:
        growth = kv_bytes_per_sequence(arch, seq + 1, 2) - total
        assert growth == kv_bytes_per_token_full_layers(arch, 2)
