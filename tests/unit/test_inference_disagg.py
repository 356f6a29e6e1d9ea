"""Disaggregated serving (prefill pool + decode pool, KV cache sent between them) in the search.

DistServe (Zhong et al. 2024, arXiv:2401.09670) §2: prefill chunks batched with decodes inflate the
time per output token; a decode-only instance runs a larger batch within the same TPOT, and the KV
transfer adds to TTFT. Splitwise (arXiv:2311.18677) and NVIDIA Dynamo size the two pools apart.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.inference.compile import compile_inference
from workload_compiler.inference.device import serving_device
from workload_compiler.inference.disagg import (
    decode_pool,
    kv_transfer_s,
    max_prefill_utilization,
    prefill_pool,
)
from workload_compiler.inference.disagg_search import disaggregated
from workload_compiler.inference.engines import engine
from workload_compiler.inference.fitted import SLOT_CEILING
from workload_compiler.inference.layout import ServingLayout
from workload_compiler.inference.model import served_model
from workload_compiler.inference.online import Traffic
from workload_compiler.inference.queueing import md1_wait_quantile
from workload_compiler.inference.search import Requirement, _front
from workload_compiler.intake.inference import InferenceWorkload
from workload_compiler.intake.load import parse_workload
from workload_compiler.provenance import Trace

CAT = load_catalog()
M70 = served_model(preset_arch("llama3.3-70b"), "fp8", "fp8")
H200 = serving_device(CAT, "h200-sxm", None, "fp8", "fp8").device
VLLM = engine("vllm")
# Long prompts, tight TPOT: the DistServe regime.
LONG = {"weights": "fp8", "kv_cache_dtype": "fp8", "input_tokens": 8192, "output_tokens": 512,
        "request_rate": "4/s", "ttft": {"p99": "3s"}, "tpot": {"p99": "20ms"}, "availability": "none"}
CHAT = {"weights": "fp8", "kv_cache_dtype": "fp8", "input_tokens": 2048, "output_tokens": 512,
        "request_rate": "1/s", "ttft": {"p99": "1s"}, "tpot": {"p99": "50ms"}, "availability": "none"}


def _run(serving: dict[str, Any], compute: dict[str, Any] | None = None,
         trace: Trace | None = None) -> dict[str, Any]:
    w = parse_workload({"kind": "inference", "model": {"preset": "llama3.3-70b"}, "serving": serving,
                        "compute": compute or {"accelerator": "h200-sxm"}})
    assert isinstance(w, InferenceWorkload)
    return compile_inference(w, CAT, trace or Trace())


def _lay(tp: int, pp: int = 1, shape: tuple[int, ...] = (1, 1)) -> ServingLayout:
    return ServingLayout.of(tp=np.full(shape, tp), pp=np.full(shape, pp), ep=np.ones(shape, dtype=np.int64))


def test_tight_tpot_and_long_prompts_make_disaggregated_win() -> None:
    out = _run(LONG)
    agg = _run({**LONG, "mode": "aggregated"})
    assert out["feasible"] and agg["feasible"]
    inf, c = out["inference"], out["compute"]
    assert inf["mode"] == "disaggregated"
    assert c["gpus"] < agg["compute"]["gpus"]
    assert c["gpus"] == inf["prefill_pool"]["gpus"] + inf["decode_pool"]["gpus"]
    assert inf["ttft_s"] <= 3.0 and inf["tpot_s"] <= 0.020
    # The decode pool runs no prefill chunks: a larger batch within the same TPOT (DistServe §2).
    assert inf["batch_size_at_capacity"] > agg["inference"]["batch_size_at_capacity"]
    assert inf["explanation"][0].startswith("disaggregated: fewer GPUs")
    for key in ("replicas", "batch_size", "kv_bytes_per_token", "kv_capacity_tokens", "output_tokens_per_s_per_gpu",
                "ttft_s", "tpot_s", "binding", "pareto_front", "explanation", "active_replicas", "spare_replicas"):
        assert key in inf, key
    assert inf["replicas"] == inf["prefill_pool"]["replicas"] + inf["decode_pool"]["replicas"]
    # Tokens/s per GPU counts both pools: served tokens over every active GPU.
    active = sum(p["active_replicas"] * p["gpus_per_replica"] for p in (inf["prefill_pool"], inf["decode_pool"]))
    assert inf["served_output_tokens_per_s_per_gpu"] == pytest.approx(4.0 * 512 / active)
    assert out["search"]["seconds"] < 1.0


def test_light_load_keeps_aggregated_cheaper() -> None:
    out = _run(CHAT)
    dis = _run({**CHAT, "mode": "disaggregated"})
    assert out["inference"]["mode"] == "aggregated" and "prefill_pool" not in out["inference"]
    # Two pools need at least two replicas; one aggregated replica carries 1 req/s.
    assert out["compute"]["gpus"] < dis["compute"]["gpus"]
    assert out["inference"]["explanation"][0].startswith("aggregated: fewer GPUs")


def test_rate_balance_of_the_chosen_pools_with_a_utilization_ceiling() -> None:
    """Each pool, rebuilt here from its layout, carries the rate at <= the 0.8 ceiling."""
    out = _run({**LONG, "availability": 0.8, "mode": "disaggregated"})
    inf = out["inference"]
    pre, dec = inf["prefill_pool"], inf["decode_pool"]
    traffic = Traffic(isl=8192, osl=512, reserve_tokens=8192 + 512, isl_tail=8192)
    mu_p = float(prefill_pool(M70, H200, _lay(pre["tp"], pre["pp"]), VLLM, traffic, None).requests_per_s.item())
    d = decode_pool(M70, H200, _lay(dec["tp"], dec["pp"]), VLLM, traffic, None)
    col = int(np.argmin(np.abs(d.decode_seqs[0] - inf["batch_size_at_capacity"])))
    mu_d = float(d.decode_seqs[0, col] / (512 * d.tpot_mean_s[0, col]))
    assert pre["active_replicas"] * mu_p * 0.8 >= 4.0
    assert dec["active_replicas"] * mu_d * 0.8 >= 4.0 * (1 - 1e-9)
    assert inf["prefill_utilization"] <= 0.8 + 1e-9 and inf["decode_utilization"] <= 0.8 + 1e-9
    # and none of the pools is larger than the rate needs (one replica fewer would not do)
    assert (pre["active_replicas"] - 1) * mu_p * 0.8 < 4.0 or (dec["active_replicas"] - 1) * mu_d * 0.8 < 4.0


def test_kv_transfer_time_is_the_shard_over_the_link() -> None:
    """KV of 8192 tokens of Llama 3.3 70B in FP8: 80 x 8 x 128 x 2 x 1 B = 163,840 B/token; a TP1
    prefill GPU sends all of it, a TP2 decode GPU receives half. NVLink 450 GB/s x 0.80 inside an
    H200 node (one prefill + one decode replica in 8 GPUs), the 400G NIC (50 GB/s x 0.92) outside."""
    kv = 8192 * 163840.0
    t, nvlink, _ = kv_transfer_s(M70, H200.hw, _lay(1), _lay(2), 8192.0)
    assert bool(nvlink.item()) and t.item() == pytest.approx(kv / (450e9 * 0.80), rel=0.01)
    t2, nv2, _ = kv_transfer_s(M70, H200.hw, _lay(8), _lay(2), 8192.0)   # 10 GPUs > the 8-GPU domain
    assert not bool(nv2.item()) and t2.item() == pytest.approx(kv / 2 / (50e9 * 0.92), rel=0.01)


def _req(**kw: Any) -> Requirement:
    base: dict[str, Any] = {"traffic": Traffic(isl=8192, osl=512, reserve_tokens=8704, isl_tail=8192),
                            "scenario": "online", "ttft_target_s": 5.0, "tpot_target_s": 0.05,
                            "request_rate": 0.5, "concurrency": None, "utilization_ceiling": 1.0,
                            "spare_replicas": 0, "max_gpus": None, "gpus": None, "mode": "disaggregated"}
    return Requirement(**{**base, **kw})


def test_a_slower_kv_link_raises_ttft_by_the_transfer_time() -> None:
    """Same pools, KV over NVLink vs over a 5 GB/s NIC: TTFT grows by the transfer time."""
    rows = _lay(1, 1, (1, 1))
    fast = disaggregated(M70, H200, "h200-sxm", VLLM, _req(), rows).choices[0]
    hw = dataclasses.replace(H200.hw, scale_up_domain_gpus=1, scale_out_bandwidth_bytes_per_s=5e9)
    slow = disaggregated(M70, dataclasses.replace(H200, hw=hw), "h200-sxm", VLLM, _req(), rows).choices[0]
    assert fast.kv_link == "nvlink" and slow.kv_link == "scale-out"
    assert (slow.prefill.replicas, slow.decode.replicas) == (fast.prefill.replicas, fast.decode.replicas)
    assert slow.kv_transfer_s > 50 * fast.kv_transfer_s
    assert slow.ttft_s - fast.ttft_s == pytest.approx(slow.kv_transfer_s - fast.kv_transfer_s, rel=1e-6)
    assert fast.ttft_s == pytest.approx(fast.prefill_wait_s + fast.prefill_latency_s + fast.kv_transfer_s
                                        + fast.slot_wait_s)


def test_mode_pins_and_offline_disaggregated_is_bad_input() -> None:
    agg = _run({**LONG, "mode": "aggregated"})
    assert agg["inference"]["mode"] == "aggregated"
    assert agg["inference"]["explanation"][0] == "aggregated: pinned by serving.mode"
    assert all(p["mode"] == "aggregated" for p in agg["inference"]["pareto_front"])
    dis = _run({**CHAT, "mode": "disaggregated"})
    assert dis["inference"]["mode"] == "disaggregated"
    with pytest.raises(InputError, match="offline"):
        _run({"weights": "fp8", "scenario": "offline", "mode": "disaggregated"})


def test_pareto_front_labels_the_modes_and_stays_non_dominated() -> None:
    front = _run(LONG)["inference"]["pareto_front"]
    assert {p["mode"] for p in front} <= {"aggregated", "disaggregated"}
    assert any(p["mode"] == "disaggregated" for p in front)
    users = [p["tokens_per_s_per_user"] for p in front]
    gpus = [p["tokens_per_s_per_gpu"] for p in front]
    assert users == sorted(users, reverse=True) and gpus == sorted(gpus)


def test_pinned_gpus_fill_both_pools() -> None:
    out = _run({**LONG, "request_rate": "2/s"}, {"accelerator": "h200-sxm", "gpus": 16})
    inf = out["inference"]
    assert inf["mode"] == "disaggregated" and 16 - 4 < out["compute"]["gpus"] <= 16
    assert inf["ttft_s"] <= 3.0 and inf["tpot_s"] <= 0.020


@settings(max_examples=25, deadline=None)
@given(s=st.floats(0.01, 2.0), budget=st.floats(0.0, 20.0), q=st.sampled_from([0.9, 0.99]))
def test_max_prefill_utilization_is_the_largest_load_within_the_budget(s: float, budget: float, q: float) -> None:
    rho = float(max_prefill_utilization(s, budget, q, 0.97))
    assert 0.0 < rho <= 0.97
    assert float(md1_wait_quantile(rho / s, s, q)) <= budget + 1e-9
    if rho < 0.97 - 1e-6:   # a little more load breaks the budget
        assert float(md1_wait_quantile((rho + 1e-4) / s, s, q)) > budget


def test_without_a_ttft_target_both_pools_record_the_one_slot_ceiling() -> None:
    """No TTFT target: the decode slots and the prefill replicas are capped at the same
    SLOT_CEILING (inference/fitted.py), and the trace says so with that value."""
    trace = Trace()
    no_ttft = {k: v for k, v in LONG.items() if k != "ttft"}
    out = _run({**no_ttft, "mode": "disaggregated"}, trace=trace)
    assert out["feasible"] and out["inference"]["mode"] == "disaggregated"
    assumed = {a.field: a.value for a in trace.assumptions}
    assert assumed["serving.slot_utilization_ceiling"] == SLOT_CEILING
    assert assumed["serving.prefill_utilization_ceiling"] == SLOT_CEILING
    assert out["inference"]["prefill_utilization"] <= SLOT_CEILING + 1e-9


def test_gpu_cap_is_the_tighter_of_the_pin_and_the_cap() -> None:
    assert _req(max_gpus=16, gpus=8).gpu_cap == 8
    assert _req(max_gpus=4, gpus=8).gpu_cap == 4
    assert _req().gpu_cap >= 10**9


@settings(max_examples=30, deadline=None)
@given(pts=st.lists(st.tuples(st.integers(1, 12), st.integers(1, 12)), min_size=1, max_size=25))
def test_front_keeps_exactly_the_non_dominated_points(pts: list[tuple[int, int]]) -> None:
    """search._front (both modes' Pareto front, via disagg_search.non_dominated): no kept point is
    dominated, every non-dominated (tokens/s per GPU, per user) pair is kept once, sorted."""
    points = [{"tokens_per_s_per_gpu": float(g), "tokens_per_s_per_user": float(u)} for g, u in pts]

    def dominated(g: float, u: float) -> bool:
        return any(h >= g and v >= u and (h > g or v > u) for h, v in pts)
    front = [(p["tokens_per_s_per_gpu"], p["tokens_per_s_per_user"]) for p in _front(points)]
    assert all(not dominated(g, u) for g, u in front)
    assert sorted(front) == sorted({(float(g), float(u)) for g, u in pts if not dominated(g, u)})
    assert [u for _, u in front] == sorted((u for _, u in front), reverse=True)
