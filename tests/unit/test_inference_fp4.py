"""Blackwell NVFP4 serving physics, each number against its source.

Sources:
  ../shared/reference/hardware.yaml `b200_hgx` (NVIDIA HGX page, dense split per
    glennklockwood.com): fp4 9,000 / fp8 4,500 / bf16 2,250 TFLOP/s dense, 7.7 TB/s, 180 GB.
  NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference" (2025): E2M1
    values with one FP8 E4M3 scale per 16 elements -> 0.5 B + 1/16 B per weight.
  ModelOpt checkpoints nvidia/*-FP4 (perf-overview.md "FP4 Models"): linear layers NVFP4, lm_head
    and embedding BF16, hf_quant_config kv_cache_quant_algo FP8.
  tensorrt_llm/bench/build/tuning.py BYTES_PER_ELEM: NVFP4 0.5 B per parameter for the engine size.
  catalog/data/kernel_ceilings.yaml: AIConfigurator 0.12.0 measured TensorRT-LLM kernel database.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from typing import Any

import pytest
import yaml

from shared_data import reference_dir, require
from workload_compiler.arch.counts import param_counts
from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.loader import load_catalog, package_yaml
from workload_compiler.inference.compile import compile_inference
from workload_compiler.inference.device import serving_device
from workload_compiler.inference.kernels import kernel_ceilings
from workload_compiler.inference.layout import ServingLayout
from workload_compiler.inference.model import served_model
from workload_compiler.inference.performance import step_time
from workload_compiler.intake.inference import InferenceWorkload
from workload_compiler.intake.load import parse_workload
from workload_compiler.provenance import Source, Trace
from workload_compiler.validation.inference_records import case_kind, generation_of
from workload_compiler.validation.trtllm_bench import trtllm_bench_caps


def _b200_reference() -> dict[str, Any]:
    path = require(reference_dir() / "hardware.yaml")
    with path.open(encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    entries = doc if isinstance(doc, list) else next(v for v in doc.values() if isinstance(v, list))
    return next(e for e in entries if isinstance(e, dict) and e.get("id") == "b200_hgx")


def test_nvfp4_weights_are_half_a_byte_plus_a_sixteenth_and_keep_16_bit_ends() -> None:
    arch = preset_arch("llama3.3-70b")
    m = served_model(arch, "nvfp4", "fp8")
    assert m.linear_bytes_per_param == 0.5 + 1 / 16          # E2M1 + one E4M3 scale per 16
    assert m.embedding_bytes_per_param == 2.0                # embedding and lm_head stay BF16
    c = param_counts(arch)
    ends = c.embedding + (0 if arch.tied_embeddings else c.output_head)
    assert m.weight_bytes == pytest.approx((c.total - ends) * 0.5625 + ends * 2.0)
    # Llama 3.3 70B: 68.5e9 linear x 0.5625 B + 2 x 1.05e9 BF16 ends x 2 B = about 42.7 GB.
    assert 42e9 < m.weight_bytes < 43.5e9
    assert m.kv_bytes_per_token == 163840                    # FP8 KV: 80 x 8 x 128 x 2 x 1 B


def test_b200_runs_nvfp4_gemms_at_its_dense_fp4_peak_from_the_reference() -> None:
    ref = _b200_reference()
    dev = serving_device(load_catalog(), "b200", None, "nvfp4", "fp8").device
    assert dev.gemm_precision == "fp4"
    assert dev.gemm_peak_flops == ref["fp4_tflops_dense"] * 1e12 == 9.0e15
    assert dev.attention_peak_flops == ref["bf16_tflops_dense"] * 1e12 == 2.25e15
    assert dev.hw.hbm_bandwidth_bytes_per_s == ref["memory_bw_tbps"] * 1e12
    assert load_catalog().accelerator("b200").memory_bytes == ref["memory_gb"] * 1e9
    # what a process sees of it: 178.35 GiB (catalog memory_visible_bytes, pytorch/ao#4002)
    assert dev.hw.hbm_bytes / 2**30 == pytest.approx(178.35, abs=0.01)
    # The catalog's FP8 entry is the reference's too (4,500 dense).
    fp8 = serving_device(load_catalog(), "b200", None, "fp8", "fp8").device
    assert fp8.gemm_peak_flops == ref["fp8_tflops_dense"] * 1e12


def test_fp4_weights_on_hopper_run_weight_only_at_the_bf16_peak_and_say_so() -> None:
    choice = serving_device(load_catalog(), "h100-sxm", None, "nvfp4", "fp8")
    assert choice.device.gemm_precision == "bf16" and choice.note and "fp4" in choice.note


def test_kernel_ceilings_are_the_measured_medians_and_a_missing_gpu_is_an_assumption() -> None:
    table = {e["accelerator"]: e for e in package_yaml("kernel_ceilings.yaml")["ceilings"]}
    c = kernel_ceilings("b200", "fp4", "fp8")
    # kernel_ceilings.yaml b200: NVFP4 GEMMs 0.392 of 9 PFLOP/s, NVFP4 weight streaming 0.53 of
    # 7.7 TB/s, FP8 KV reads 0.68; the 16-bit head at the BF16 ceilings.
    assert (c.gemm_compute, c.gemm_stream, c.kv_stream) == (0.392, 0.53, table["b200"]["kv_stream"]["fp8"])
    assert (c.head_compute, c.head_stream) == (table["b200"]["gemm_compute"]["bf16"],
                                               table["b200"]["gemm_stream"]["bf16"])
    # Prefill attention over an FP8 cache runs as FP8 FMHA: 0.53 of the BF16 peak on a B200.
    assert c.attention_compute == table["b200"]["attention_compute"]["fp8"] == 0.53
    assert kernel_ceilings("b200", "fp4", "bf16").attention_compute == table["b200"]["attention_compute"]["bf16"]
    assert c.note is None
    h100 = kernel_ceilings("h100-sxm", "fp8", "fp8")
    assert h100.gemm_compute == 0.616 and h100.gemm_compute > c.gemm_compute
    other = kernel_ceilings("mi300x", "fp8", "fp8")      # not in AIConfigurator's database
    assert other.note and "mi300x" in other.note
    measured = [float(e["gemm_compute"]["fp8"]) for e in table.values() if "fp8" in e.get("gemm_compute", {})]
    assert other.gemm_compute == pytest.approx(statistics.median(measured))
    catalog = load_catalog()
    for acc, e in table.items():
        catalog.accelerator(acc)                            # every entry names a catalog GPU
        for part in ("gemm_compute", "gemm_stream", "kv_stream", "attention_compute"):
            assert all(0 < v <= 1 for v in e.get(part, {}).values()), (acc, part)


def test_the_16_bit_head_runs_at_the_bf16_peak_not_the_fp4_one() -> None:
    m = served_model(preset_arch("llama3.3-70b"), "nvfp4", "fp8")
    dev = serving_device(load_catalog(), "b200", None, "nvfp4", "fp8").device
    as_fp4 = replace(dev, attention_peak_flops=dev.gemm_peak_flops,
                     ceilings=replace(dev.ceilings, head_compute=dev.ceilings.gemm_compute))
    kw = dict(decode_seqs=512, prefill_tokens=0, decode_context=0, prefill_context=0)
    real = step_time(m, dev, ServingLayout.of(), **kw)
    fake = step_time(m, as_fp4, ServingLayout.of(), **kw)
    assert float(real.compute_s) > float(fake.compute_s)


def test_decode_on_b200_is_bound_by_streaming_at_its_hbm_bandwidth() -> None:
    """Batch-1 decode of Llama 3.3 70B NVFP4: ~42.7 GB of weights over 7.7 TB/s is >= 5.5 ms
    whatever the efficiency, and the memory time dwarfs the FLOP time."""
    m = served_model(preset_arch("llama3.3-70b"), "nvfp4", "fp8")
    dev = serving_device(load_catalog(), "b200", None, "nvfp4", "fp8").device
    st = step_time(m, dev, ServingLayout.of(), decode_seqs=1, prefill_tokens=0, decode_context=1024,
                   prefill_context=0)
    assert float(st.total_s) >= m.weight_bytes / dev.hw.hbm_bandwidth_bytes_per_s
    assert float(st.memory_s) > 20 * float(st.compute_s)


def test_trtllm_bench_counts_half_a_byte_per_nvfp4_parameter() -> None:
    """tuning.py: engine = params x BYTES_PER_ELEM[NVFP4] (0.5); requests = 0.95 x (memory - engine)
    / (KV bytes/token x (ISL + OSL)); batch rounded up to 128 between 256 and 1024."""
    m = served_model(preset_arch("llama3.3-70b"), "nvfp4", "fp8")
    memory = load_catalog().accelerator("b200").process_memory_bytes
    bs, tokens = trtllm_bench_caps(m, 1, 1, 128, 2048, memory)
    kv_per_token = 2 * 80 * 8 * 128 * 1.0
    requests = 0.95 * (memory - m.total_params * 0.5) / (kv_per_token * 2176)
    assert bs == 128 * math.ceil(requests / 128)
    assert tokens == max(2048, 256 * math.ceil(requests * (1 + 128 / 2048) / 256))


def test_kind_names_generation_moe_and_precision_class() -> None:
    assert generation_of("Blackwell Ultra") == "Blackwell" and generation_of("Hopper (+ Grace CPU)") == "Hopper"
    assert case_kind("Blackwell", True, "fp4") == "Blackwell moe fp4"
    assert case_kind("Ampere", False, "bf16") == "Ampere dense bf16"


def _compile(accelerator: str, weights: str) -> Trace:
    data = {"kind": "inference", "model": {"preset": "llama3.3-70b"},
            "serving": {"weights": weights, "kv_cache_dtype": "fp8", "input_tokens": 1024, "output_tokens": 256,
                        "request_rate": "2/s", "tpot": {"p99": "100ms"}},
            "compute": {"accelerator": accelerator, "max_gpus": 8}}
    w = parse_workload(data)
    assert isinstance(w, InferenceWorkload)
    trace = Trace()
    compile_inference(w, load_catalog(), trace)
    return trace


def test_a_gpu_measured_only_for_kv_reads_streams_weights_at_its_own_rate() -> None:
    # AIConfigurator 0.12.0 holds attention data only for rtx_pro_6000_server (kernel_ceilings.yaml
    # header): its weight stream is its own kv_stream[fp8] 0.801 times the median gemm_stream[fp4] /
    # kv_stream[fp8] of b200, gb200, b300, gb300 (0.53/0.68, 0.516/0.668, 0.51/0.685, 0.501/0.663),
    # not the median of their weight streams (0.513).
    table = {e["accelerator"]: e for e in package_yaml("kernel_ceilings.yaml")["ceilings"]}
    ratios = [table[g]["gemm_stream"]["fp4"] / table[g]["kv_stream"]["fp8"] for g in ("b200", "gb200", "b300", "gb300")]
    kv = table["rtx-pro-6000-blackwell-server"]["kv_stream"]
    assert kv == {"bf16": 0.791, "fp8": 0.801}
    rtx = kernel_ceilings("rtx-pro-6000-blackwell-server", "fp4", "fp8")
    assert rtx.gemm_stream == pytest.approx(kv["fp8"] * statistics.median(ratios)) == pytest.approx(0.612, abs=1e-3)
    assert rtx.head_stream == pytest.approx(kv["bf16"] * statistics.median(
        table[g]["gemm_stream"]["bf16"] / table[g]["kv_stream"]["bf16"]
        for g in table if "bf16" in table[g].get("gemm_stream", {}) and "bf16" in table[g].get("kv_stream", {})))
    assert rtx.note and "own measured kv_stream" in rtx.note and "gemm_stream[fp4]" in rtx.note
    # its GEMM math has no such proxy: the median of the measured GPUs, and the note says which
    assert rtx.gemm_compute == pytest.approx(statistics.median(
        e["gemm_compute"]["fp4"] for e in table.values() if "fp4" in e.get("gemm_compute", {})))
    assert "gemm_compute[fp4] the median" in rtx.note
    # a GPU measured for nothing keeps the medians for its streams too
    assert kernel_ceilings("mi300x", "fp8", "fp8").gemm_stream == pytest.approx(statistics.median(
        e["gemm_stream"]["fp8"] for e in table.values() if "fp8" in e.get("gemm_stream", {})))


def test_compile_records_where_the_kernel_ceilings_come_from() -> None:
    measured = _compile("b200", "nvfp4").provenance["compute.kernel_ceilings"]
    assert measured.source == Source.MEASURED and "AIConfigurator" in str(measured.machine)
    trace = _compile("mi300x", "fp8")              # FP8 tensor cores, no TensorRT-LLM measurement
    assert trace.provenance["compute.kernel_ceilings"].source == Source.ASSUMED
    assert any(a.field == "compute.kernel_ceilings" and "mi300x" in a.why for a in trace.assumptions)
