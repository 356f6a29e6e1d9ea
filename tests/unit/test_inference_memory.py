"""Serving memory: weights per GPU, KV bytes per token, KV capacity, against published numbers.

Sources: ../shared/calibration/inference_public.yaml `kv_cache_per_token` (bytes per token from
the models' config.json) and `memory_measurements` (vLLM / SGLang start-up logs).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared_data import calibration_dir, require
from workload_compiler.arch.kv_cache import kv_bytes_per_sequence
from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.inference.device import serving_device
from workload_compiler.inference.engines import engine, engine_ids
from workload_compiler.inference.layout import ServingLayout
from workload_compiler.inference.memory import (
    kv_bytes_per_token_per_gpu,
    max_sequences,
    memory_plan,
    weight_bytes_per_gpu,
)
from workload_compiler.inference.model import KV_DTYPE_BYTES, served_model
from workload_compiler.units import GIB

CALIBRATION = calibration_dir()


@pytest.mark.parametrize(("preset", "bf16_bytes"), [
    # inference_public.yaml kv_cache_per_token: 2 * layers * kv_heads * head_dim * bytes
    ("llama3.1-8b", 131072), ("llama3.3-70b", 327680), ("llama3.1-405b", 516096),
    ("qwen3-32b", 262144), ("qwen3-235b-a22b", 192512), ("mixtral-8x7b", 131072),
    # MLA: layers * (kv_lora_rank + qk_rope_head_dim) * bytes, not 2 * L * heads * head_dim
    ("deepseek-r1", 70272),
])
def test_kv_bytes_per_token_match_the_calibration_table(preset: str, bf16_bytes: int) -> None:
    assert served_model(preset_arch(preset), "bf16", "bf16").kv_bytes_per_token == bf16_bytes
    assert served_model(preset_arch(preset), "fp8", "fp8").kv_bytes_per_token == bf16_bytes / 2


def test_kv_per_gpu_at_tp4_matches_vllm_issue_21348() -> None:
    """vllm-issue-21348: Qwen3-235B-A22B at TP4, BF16 KV: 2*94*1*128*2 = 48,128 B per GPU."""
    m = served_model(preset_arch("qwen3-235b-a22b"), "fp8", "bf16")
    assert float(kv_bytes_per_token_per_gpu(m, ServingLayout.of(tp=4))) == 48128


def test_tp_beyond_kv_heads_replicates_heads() -> None:
    """Llama 3.1 405B has 8 KV heads: TP16 cannot shard them further than TP8."""
    m = served_model(preset_arch("llama3.1-405b"), "fp8", "fp8")
    per = kv_bytes_per_token_per_gpu(m, ServingLayout.of(tp=np.array([8, 16])))
    assert per[0] == per[1] == m.kv_bytes_per_token / 8


def test_weights_of_llama3_8b_match_vllm_issue_12330() -> None:
    """vLLM log: 'Loading model weights took 14.9595 GB' (GiB) for Meta-Llama-3-8B in BF16."""
    m = served_model(preset_arch("llama3-8b"), "bf16", "bf16")
    w = float(weight_bytes_per_gpu(m, ServingLayout.of()))
    assert w / GIB == pytest.approx(14.96, rel=0.01)


def test_kv_tokens_of_llama3_8b_match_vllm_issue_12330_within_10_percent() -> None:
    """vllm-issue-12330 (A100-40GB, gpu_memory_utilization 0.9, max_model_len 8192): 5,691
    blocks x 16 = 91,056 KV tokens; total 39.5 GiB seen by torch, non-torch 0.1 GiB."""
    m = served_model(preset_arch("llama3-8b"), "bf16", "bf16")
    from dataclasses import replace
    eng = replace(engine("vllm"), memory_fraction=0.9, runtime_reserve_bytes=0.1 * GIB)
    a100 = load_catalog().accelerator("a100-sxm-40gb").process_memory_bytes
    plan = memory_plan(m, ServingLayout.of(), a100, eng, step_tokens=8192, logit_rows=8192)
    assert plan.device_bytes / GIB == pytest.approx(39.5, abs=0.05)
    assert float(plan.kv_capacity_tokens) == pytest.approx(91056, rel=0.10)


def test_memory_records_within_10_percent_where_the_setup_is_known() -> None:
    """Every memory_measurements record whose GPU and engine settings are stated."""
    from workload_compiler.validation.inference_records import load_inference, memory_rows
    require(CALIBRATION)
    rows, skipped = memory_rows(load_inference(CALIBRATION))
    assert not skipped
    known = [r for r in rows if not r.id.startswith("vllm-pr-12569/") or r.quantity == "weights_gib"]
    assert len(known) >= 4
    for r in known:
        assert abs(r.error) <= 0.10, (r.id, r.published, r.predicted)


def test_training_and_serving_see_one_capacity() -> None:
    """One figure per accelerator for both views: the measured CUDA total where the catalog has it
    (H100: 79.11 GiB, vllm-project/vllm#27508), which the serving memory plan sizes KV from."""
    catalog = load_catalog()
    h100 = catalog.accelerator("h100-sxm")
    dev = serving_device(catalog, "h100-sxm", None, "bf16", "bf16").device
    assert dev.hw.hbm_bytes == catalog.hardware("h100-sxm").hbm_bytes == h100.process_memory_bytes
    assert h100.process_memory_bytes / GIB == pytest.approx(79.11, abs=0.01)


_PRESETS = ["llama3.1-8b", "llama3.3-70b", "llama3.1-405b", "qwen3-235b-a22b", "mixtral-8x7b",
            "deepseek-r1", "gpt-oss-120b"]


@settings(max_examples=25, deadline=None)
@given(preset=st.sampled_from(_PRESETS), weights=st.sampled_from(["bf16", "fp8", "int4"]),
       tp=st.sampled_from([1, 2, 4]), pp=st.sampled_from([1, 2]))
def test_more_tp_never_raises_weight_bytes_per_gpu(preset: str, weights: str, tp: int, pp: int) -> None:
    m = served_model(preset_arch(preset), weights, "bf16")
    small = float(weight_bytes_per_gpu(m, ServingLayout.of(tp=tp, pp=pp, ep=1)))
    large = float(weight_bytes_per_gpu(m, ServingLayout.of(tp=2 * tp, pp=pp, ep=1)))
    assert large <= small


def test_moe_memory_counts_every_expert_and_ep_shards_them() -> None:
    """MoE memory uses total experts (not the active ones): Qwen3-235B-A22B in FP8 at TP8 holds
    ~235/8 GB per GPU, far above its 22B active parameters."""
    m = served_model(preset_arch("qwen3-235b-a22b"), "fp8", "fp8")
    w8 = float(weight_bytes_per_gpu(m, ServingLayout.of(tp=8, ep=8)))
    assert w8 * 8 >= 0.98 * m.total_params * 1.0
    wide = float(weight_bytes_per_gpu(m, ServingLayout.of(tp=1, ep=8)))
    assert w8 < wide < m.weight_bytes   # attention replicated under attention DP, experts sharded


@settings(max_examples=20, deadline=None)
@given(preset=st.sampled_from(_PRESETS), short=st.integers(256, 8192), factor=st.integers(2, 16))
def test_kv_capacity_in_sequences_falls_with_longer_context(preset: str, short: int, factor: int) -> None:
    m = served_model(preset_arch(preset), "fp8", "bf16")
    lay = ServingLayout.of(tp=8)
    plan = memory_plan(m, lay, 140.0 * GIB, engine("vllm"))
    a = float(max_sequences(m, plan, lay, short, 16))
    b = float(max_sequences(m, plan, lay, short * factor, 16))
    assert b <= a


def test_sliding_window_caps_gpt_oss_kv_growth() -> None:
    """gpt-oss-120b: 18 of 36 layers slide over 128 tokens, so 64k tokens cost about half of
    36-layer full attention (inference_public.yaml: 36,864 B/token over the full layers, BF16)."""
    m = served_model(preset_arch("gpt-oss-120b"), "mxfp4", "bf16")
    per_seq = float(m.kv_bytes_per_sequence(65536))
    assert per_seq == pytest.approx(36864 * 65536 + 36864 * 128, rel=1e-9)


@settings(max_examples=20, deadline=None)
@given(preset=st.sampled_from(_PRESETS), tokens=st.integers(1, 200_000), kv=st.sampled_from(["bf16", "fp8"]))
def test_vectorized_kv_per_sequence_is_arch_kv_cache(preset: str, tokens: int, kv: str) -> None:
    """ServedModel.kv_bytes_per_sequence (NumPy) equals arch/kv_cache.kv_bytes_per_sequence, the
    scalar formula, sliding windows (gpt-oss) and MLA (deepseek-r1) included."""
    arch = preset_arch(preset)
    m = served_model(arch, "bf16", kv)
    vec = m.kv_bytes_per_sequence(np.array([tokens, 2 * tokens], dtype=np.float64))
    assert vec[0] == kv_bytes_per_sequence(arch, tokens, KV_DTYPE_BYTES[kv])
    assert vec[1] == kv_bytes_per_sequence(arch, 2 * tokens, KV_DTYPE_BYTES[kv])


@pytest.mark.parametrize("engine_id", engine_ids())
def test_every_serving_engine_entry_has_a_source_and_sane_limits(engine_id: str) -> None:
    """catalog/data/serving_engines.yaml: every default names where it comes from."""
    e = engine(engine_id)
    assert len(e.source.strip()) > 40
    assert 0.5 < e.memory_fraction <= 1.0 and e.memory_fraction_of in ("total", "free")
    assert e.max_num_tokens >= e.block_size_tokens >= 1 and e.max_batch_size >= 1
    assert 0 < e.runtime_reserve_bytes < 8 * GIB
