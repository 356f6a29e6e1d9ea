"""The serving engine's host work per running request: a floor under the step where it was measured.

Source: NVIDIA/TensorRT-LLM pull request #10273 (2025-12-24), GB200 (Grace host), GPT-OSS-120B,
attention DP 2, max_batch_size 1536 per rank, 3,072 concurrent 1k/1k requests: "the average per
iteration host_step_time is 45.11 ms" -> (45.11 - 1 ms) / 1,536 = 28.7 us per request
(catalog/data/serving_engines.yaml trtllm host_s_per_request; the 1 ms is inference/fitted.py
STEP_OVERHEAD_S). catalog/data/systems.yaml: gb200-nvl72 cpu '2x Grace (72 Arm cores each) per
tray', dgx-b200 cpu '2x Xeon Platinum 8570 (56 cores each)'.
"""

from __future__ import annotations

import dataclasses

import pytest

from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.inference import fitted
from workload_compiler.inference.compile import compile_inference
from workload_compiler.inference.device import serving_device
from workload_compiler.inference.engines import engine
from workload_compiler.inference.layout import ServingLayout
from workload_compiler.inference.model import served_model
from workload_compiler.inference.performance import step_time
from workload_compiler.intake.inference import InferenceWorkload
from workload_compiler.intake.load import parse_workload
from workload_compiler.provenance import Source, Trace


def test_the_host_cost_is_the_measured_one_on_grace_and_none_elsewhere() -> None:
    trt = engine("trtllm")
    assert trt.host_s_per_request == pytest.approx((45.11e-3 - fitted.STEP_OVERHEAD_S) / 1536, rel=0.01)
    catalog = load_catalog()
    assert trt.host_cost(catalog.default_system("gb200").cpu) == trt.host_s_per_request
    assert trt.host_cost(catalog.default_system("b200").cpu) == 0.0          # x86: not measured
    assert engine("vllm").host_cost(catalog.default_system("gb200").cpu) == 0.0


def test_the_host_floors_a_short_gpu_step_and_leaves_a_long_one() -> None:
    m = served_model(preset_arch("qwen3-30b-a3b"), "nvfp4", "fp8")
    dev = serving_device(load_catalog(), "gb200", None, "nvfp4", "fp8").device
    host = dataclasses.replace(dev, host_s_per_request=28.7e-6)
    lay = ServingLayout.of(tp=1)
    # 4,000 decoding sequences of 128/128 requests: 4,000 + 4,000 x (128/128) / 128 requests in a step
    kw = {"decode_seqs": 4000.0, "prefill_tokens": 4000.0, "decode_context": 192.0, "prefill_context": 128.0}
    gpu, floored = step_time(m, dev, lay, **kw), step_time(m, host, lay, **kw)
    requests = 4000.0 + 4000.0 / 128.0
    assert float(gpu.total_s) < 28.7e-6 * requests
    assert float(floored.total_s) == pytest.approx(28.7e-6 * requests + fitted.STEP_OVERHEAD_S)
    # a long step (a 20,000-token prompt per request) hides the host's work entirely
    long_kw = {"decode_seqs": 100.0, "prefill_tokens": 1000.0, "decode_context": 21000.0, "prefill_context": 20000.0}
    assert float(step_time(m, host, lay, **long_kw).total_s) == float(step_time(m, dev, lay, **long_kw).total_s)


def _trace(accelerator: str) -> Trace:
    w = parse_workload({"kind": "inference", "model": {"preset": "qwen3-30b-a3b"},
                        "serving": {"engine": "trtllm", "weights": "nvfp4", "kv_cache_dtype": "fp8",
                                    "input_tokens": 128, "output_tokens": 128, "scenario": "offline"},
                        "compute": {"accelerator": accelerator, "gpus": 1}})
    assert isinstance(w, InferenceWorkload)
    trace = Trace()
    assert compile_inference(w, load_catalog(), trace)["feasible"]
    return trace


def test_the_compile_says_where_the_host_cost_applies() -> None:
    grace = _trace("gb200").provenance["compute.host_s_per_request"]
    assert grace.source == Source.MEASURED and "#10273" in str(grace.machine)
    x86 = _trace("b200")
    assert x86.provenance["compute.host_s_per_request"].source == Source.ASSUMED
    assert any(a.field == "compute.host_s_per_request" and "Grace hosts only" in a.why for a in x86.assumptions)


def test_a_disaggregated_answer_says_how_each_pool_times_its_experts_and_its_host() -> None:
    # Qwen3-30B-A3B's NVFP4 experts on GB200: measured by AIConfigurator (catalog/data/moe_op_latency.json.gz)
    # at expert TP 1; the Grace host floor applies to both pools' steps.
    w = parse_workload({"kind": "inference", "model": {"preset": "qwen3-30b-a3b"},
                        "serving": {"engine": "trtllm", "weights": "nvfp4", "kv_cache_dtype": "fp8",
                                    "input_tokens": 8192, "output_tokens": 512, "request_rate": "4/s",
                                    "ttft": {"p99": "3s"}, "tpot": {"p99": "20ms"}, "availability": "none",
                                    "mode": "disaggregated"},
                        "compute": {"accelerator": "gb200"}})
    assert isinstance(w, InferenceWorkload)
    trace = Trace()
    out = compile_inference(w, load_catalog(), trace)
    assert out["inference"]["mode"] == "disaggregated"
    for key in ("compute.moe_kernel", "compute.prefill_moe_kernel", "compute.host_s_per_request"):
        assert trace.provenance[key].source == Source.MEASURED, key


@pytest.mark.parametrize(("system", "gpus_per_node"), [("gh200-4", 4), ("hgx-h100", 8)])
def test_the_compute_section_names_the_system_the_intake_gave(system: str, gpus_per_node: int) -> None:
    # catalog/data/systems.yaml: gh200-4 (4 superchips a node) is not GH200's default system (gh200-1),
    # hgx-h100 not H100's (dgx-h100)
    w = parse_workload({"kind": "inference", "model": {"preset": "llama3.1-8b"},
                        "serving": {"weights": "fp8", "input_tokens": 1024, "output_tokens": 256,
                                    "scenario": "offline"},
                        "compute": {"system": system, "gpus": 8}})
    assert isinstance(w, InferenceWorkload)
    compute = compile_inference(w, load_catalog(), Trace())["compute"]
    got = (compute["system"], compute["gpus_per_node"], compute["nodes"])
    assert got == (system, gpus_per_node, 8 // gpus_per_node)


def test_the_fleet_price_bills_the_nodes_of_the_system_the_intake_gave() -> None:
    # a node-hour rate for gh200-4 only: 8 GPUs are 2 of its nodes (it was priced as gh200-1, which has no rate)
    w = parse_workload({"kind": "inference", "model": {"preset": "llama3.1-8b"},
                        "serving": {"weights": "fp8", "input_tokens": 1024, "output_tokens": 256,
                                    "scenario": "offline"},
                        "compute": {"system": "gh200-4", "gpus": 8},
                        "cost": {"node_hour_usd": {"gh200-4": 40.0}}})
    assert isinstance(w, InferenceWorkload)
    inference = compile_inference(w, load_catalog(), Trace())["inference"]
    assert inference["cost_usd_per_hour"] == pytest.approx(2 * 40.0)
