"""The measured TensorRT-LLM MoE op in the serving step model.

Source of the numbers: AIConfigurator 0.12.0 (PyPI aiconfigurator-core, Apache-2.0),
systems/data/b200_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet, kernel_source moe_torch_flow_cutlass,
distribution balanced, moe_dtype nvfp4, hidden 2048, inter 768, 128 experts, top-8 (Qwen3-30B-A3B's
expert shape), moe_tp 1, moe_ep 1: 0.0562 ms at 1 token, 0.182 ms at 16 tokens, 1.817 ms at 16,384
tokens (the parquet's latency column, in ms)
(reduced by tools/moe_op_table.py into catalog/data/moe_op_latency.json.gz, three digits).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog import moe_latency
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.inference import performance
from workload_compiler.inference.compile import compile_inference
from workload_compiler.inference.device import serving_device
from workload_compiler.inference.layout import ServingLayout
from workload_compiler.inference.memory import stage_fraction
from workload_compiler.inference.model import served_model
from workload_compiler.inference.performance import measured_experts_s, step_time
from workload_compiler.intake.inference import InferenceWorkload
from workload_compiler.intake.load import parse_workload
from workload_compiler.provenance import Source, Trace

QWEN3_30B = ("b200", "nvfp4", 2048, 768, 128, 8)


def test_the_table_holds_the_measured_op_and_interpolates_between_counts() -> None:
    at = moe_latency.moe_op_seconds(*QWEN3_30B, 1, 1, np.array([1.0, 16.0, 16384.0]))
    assert at is not None
    assert at[0] == pytest.approx(56.2e-6, rel=0.01)
    assert at[1] == pytest.approx(182e-6, rel=0.01)
    assert at[2] == pytest.approx(1.817e-3, rel=0.01)
    # log-log between measured counts: 12 tokens lies between 8 and 16, on the straight line
    t8, t12, t16 = moe_latency.moe_op_seconds(*QWEN3_30B, 1, 1, np.array([8.0, 12.0, 16.0]))
    assert t8 < t12 < t16
    assert math.log(t12) == pytest.approx(math.log(t8) + (math.log(t16) - math.log(t8)) * math.log(1.5) / math.log(2))
    # past the largest count the op is throughput-bound: twice the tokens, twice the time
    big = moe_latency.moe_op_seconds(*QWEN3_30B, 1, 1, np.array([16384.0, 32768.0]))
    assert big[1] == pytest.approx(2 * big[0])
    assert moe_latency.moe_op_seconds("mi300x", "nvfp4", 2048, 768, 128, 8, 1, 1, 16.0) is None
    assert not moe_latency.measured("b200", "nvfp4", 2880, 2880, 128, 4, 1, 1)     # GPT-OSS: not measured
    # DeepSeek-V3's 128x128-block FP8 experts (7168, 2048, 256 experts, top-8) at EP 8: measured with
    # CUTLASS on H200 (h200_sxm moe_perf.parquet, moe_dtype fp8_block); on B200 only with DeepGEMM,
    # a kernel source the table does not keep
    assert moe_latency.measured("h200-sxm", "fp8-block128", 7168, 2048, 256, 8, 1, 8)
    assert not moe_latency.measured("b200", "fp8-block128", 7168, 2048, 256, 8, 1, 8)


def _qwen3_30b_on_b200():  # type: ignore[no-untyped-def]
    m = served_model(preset_arch("qwen3-30b-a3b"), "nvfp4", "fp8")
    dev = serving_device(load_catalog(), "b200", None, "nvfp4", "fp8").device
    return m, dev


def test_a_stage_runs_its_moe_layers_at_the_measured_op() -> None:
    m, dev = _qwen3_30b_on_b200()
    tokens = np.array([512.0, 4096.0])
    for pp in (1, 2):
        lay = ServingLayout.of(tp=1, pp=pp, ep=1)
        per_op = moe_latency.moe_op_seconds(*QWEN3_30B, 1, 1, tokens)
        expected = per_op * m.arch.moe_layers * stage_fraction(m.arch.layers, pp)
        assert np.allclose(measured_experts_s(m, dev, lay, tokens), expected)
    # a grid of layouts: the measured degrees get the op, the others NaN (their modelled GEMMs stand);
    # tp 8 at ep 1 is expert TP 8, which AIConfigurator did not measure for this shape on B200
    grid = ServingLayout.of(tp=np.array([[1], [2], [8], [8]]), ep=np.array([[1], [2], [8], [1]]))
    out = measured_experts_s(m, dev, grid, tokens[None, :])
    assert out is not None and out.shape == (4, 2)
    degrees = [(1, 1), (1, 2), (1, 8), (8, 1)]
    assert [moe_latency.measured(*QWEN3_30B, etp, ep) for etp, ep in degrees] == [True, True, True, False]
    for row, (etp, ep) in enumerate(degrees):
        assert np.all(np.isfinite(out[row])) == moe_latency.measured(*QWEN3_30B, etp, ep)
    assert np.all(np.isnan(out[3]))


def test_the_measured_op_replaces_the_modelled_expert_gemms(monkeypatch: pytest.MonkeyPatch) -> None:
    # On a B200 the CUTLASS NVFP4 op of this shape sustains ~0.08 of the 9 PFLOP/s peak at 16k tokens
    # (2 x 16384 x 8 x 3 x 2048 x 768 FLOP / 1.82 ms / 9e15), where the modelled GEMMs assume more:
    # the measured step is the longer one, and only the GEMM part moves.
    m, dev = _qwen3_30b_on_b200()
    lay = ServingLayout.of(tp=1, pp=1, ep=1)
    kw = {"decode_seqs": 1500.0, "prefill_tokens": 1500.0 * 128 / 2048, "decode_context": 1152.0,
          "prefill_context": 128.0}
    measured = step_time(m, dev, lay, **kw)
    monkeypatch.setattr(performance.moe_latency, "moe_op_seconds", lambda *a, **k: None)
    modelled = step_time(m, dev, lay, **kw)
    assert float(measured.total_s) > float(modelled.total_s)
    assert float(measured.attention_s) == float(modelled.attention_s)
    assert float(measured.total_s - modelled.total_s) == pytest.approx(float(measured.gemm_s - modelled.gemm_s))


def _compile(preset: str, weights: str) -> Trace:
    w = parse_workload({"kind": "inference", "model": {"preset": preset},
                        "serving": {"weights": weights, "kv_cache_dtype": "fp8", "input_tokens": 1000,
                                    "output_tokens": 1000, "scenario": "offline"},
                        "compute": {"accelerator": "b200", "gpus": 1}})
    assert isinstance(w, InferenceWorkload)
    trace = Trace()
    assert compile_inference(w, load_catalog(), trace)["feasible"]
    return trace


def test_the_compile_says_how_the_routed_experts_were_timed() -> None:
    measured = _compile("qwen3-30b-a3b", "nvfp4").provenance["compute.moe_kernel"]
    assert measured.source == Source.MEASURED and "AIConfigurator 0.12.0" in str(measured.machine)
    trace = _compile("gpt-oss-120b", "fp8")         # an expert shape AIConfigurator did not measure
    assert trace.provenance["compute.moe_kernel"].source == Source.ASSUMED
    assert any(a.field == "compute.moe_kernel" and "modelled" in str(a.value) for a in trace.assumptions)
