"""Storage sizing: RA storage tiers (DGX H100 RA Tables 5-6), dataset bytes and read rate,
checkpoint size per the ZeRO state layout (arXiv 1910.02054), write time, capacity."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_compiler.catalog.loader import package_yaml
from workload_compiler.errors import InputError
from workload_compiler.storage import (
    TIER_ORDER,
    bytes_per_token,
    checkpoint_state,
    checkpoint_write,
    plan_storage_and_reliability,
    required_tier,
    sample_demand,
    tier_bandwidth,
)

TIERS = package_yaml("storage_tiers.yaml")["tiers"]
_DEFAULTS = package_yaml("storage_tiers.yaml")["defaults"]
D2H = _DEFAULTS["device_to_host_bytes_per_s_per_gpu"]["value"]     # PCIe Gen5 x16, ~80% achievable
HOST_PATH = {"host_path_bytes_per_s_per_node": _DEFAULTS["host_path_bytes_per_s_per_node"]["value"],
             "device_to_host_bytes_per_s_per_gpu": D2H}


@pytest.mark.parametrize("tier", TIER_ORDER)
def test_table6_four_su_row_is_four_one_su_rows(tier: str) -> None:
    """DGX H100 RA Table 6: the per-GPU scaling of the 1-SU row reproduces the 4-SU row within 7%."""
    bw = tier_bandwidth(tier, gpus=4 * 256, gpus_per_node=8)
    assert bw.read_bytes_per_s == pytest.approx(TIERS[tier]["four_su_read_bytes_per_s"], rel=0.07)
    assert bw.write_bytes_per_s == pytest.approx(TIERS[tier]["four_su_write_bytes_per_s"], rel=0.07)
    assert bw.node_read_bytes_per_s == TIERS[tier]["single_node_read_bytes_per_s"]


def test_llm_text_needs_the_good_tier() -> None:
    """RA Table 5: NLP is a Good-tier workload. Llama 3 405B at 16,384 GPUs x 400 TFLOP/s
    (arXiv 2407.21783 Table 4) reads ~11 MB/s of int32 tokens (6 x 405e9 FLOPs per token)."""
    tokens_per_s = 16_384 * 400e12 / (6 * 405e9)
    storage, _ = plan_storage_and_reliability(gpus=16_384, gpus_per_node=8, params=405e9, tp=8, pp=16, dp=128,
                                              dataset_tokens=15.6e12, tokens_per_s=tokens_per_s,
                                              vocab_size=128_256)
    assert storage.tier == "good"
    assert storage.read_bytes_per_s == pytest.approx(tokens_per_s * 4)
    assert storage.dataset_bytes == pytest.approx(15.6e12 * 4)   # 62.4 TB of int32 token ids


def test_1080p_vision_exceeds_the_best_aggregate() -> None:
    """RA: 1080p vision needs 4 GB/s per GPU; a node's 32 GB/s is within Best's 40 GB/s single-node
    read, but 256 GPUs x 4 GB/s = 1 TB/s is 8x Best's 125 GB/s per SU -> custom storage."""
    assert tier_bandwidth("best", gpus=8, gpus_per_node=8).node_read_bytes_per_s >= 32e9
    assert required_tier(256 * 4e9, gpus=256, gpus_per_node=8) is None
    storage, _ = plan_storage_and_reliability(
        gpus=256, gpus_per_node=8, params=1e9, tp=1, pp=1, dp=256, dataset_samples=1e7, sample_bytes=4e6,
        samples_per_s=256 * 1000)
    assert storage.tier == "custom (> best)" and storage.warnings


@settings(max_examples=40, deadline=None)
@given(a=st.floats(0, 2e11), b=st.floats(0, 2e11))
def test_more_read_demand_never_needs_a_lower_tier(a: float, b: float) -> None:
    rank = {None: len(TIER_ORDER)} | {t: i for i, t in enumerate(TIER_ORDER)}
    lo, hi = sorted((a, b))
    t_lo, t_hi = (required_tier(x, gpus=256, gpus_per_node=8) for x in (lo, hi))
    assert rank[t_lo.tier if t_lo else None] <= rank[t_hi.tier if t_hi else None]


@pytest.mark.parametrize(("vocab", "size"), [(32_000, 2), (65_499, 2), (65_500, 4), (128_256, 4), (None, 4)])
def test_bytes_per_token_follows_megatron_dtype(vocab: int | None, size: int) -> None:
    """Megatron-LM indexed_dataset DType.optimal_dtype: uint16 below 65,500 entries, else int32."""
    got, why = bytes_per_token(vocab)
    assert got == size and why.field == "storage.bytes_per_token"


def test_samples_demand() -> None:
    """MLPerf Storage: required bandwidth = samples/s x sample size (ResNet-50 mean 114,660 B)."""
    d = sample_demand(samples=1_281_167, sample_bytes=114_660, samples_per_s=8 * 3000, gpus=8)
    assert d.read_bytes_per_s == pytest.approx(8 * 3000 * 114_660)
    assert d.read_bytes_per_s_per_gpu == pytest.approx(3000 * 114_660)


@pytest.mark.parametrize(("params", "tb"), [(70e9, 0.98), (405e9, 5.67)])
def test_checkpoint_bytes_are_14_per_param(params: float, tb: float) -> None:
    """infrastructure.md §4.1: weights + optimizer (no grads) = 2 + 12 = 14 B/param."""
    assert checkpoint_state(params=params).checkpoint_bytes == pytest.approx(tb * 1e12, rel=1e-3)


@pytest.mark.parametrize(("zero", "paper_gb"), [(0, 120.0), (1, 31.4), (3, 1.9)])
def test_zero_paper_per_gpu_state(zero: int, paper_gb: float) -> None:
    """ZeRO (arXiv 1910.02054) Figure 1: 7.5B params on 64 DP ranks hold 120 GB (DDP), 31.4 GB
    (ZeRO-1), 1.9 GB (ZeRO-3) of model state; that state = our checkpoint shard + 16-bit grads
    (2 B/param, sharded only with ZeRO >= 2)."""
    shard = checkpoint_state(params=7.5e9, dp=64, zero=zero).shard_bytes_per_gpu
    grads = 2 * 7.5e9 / (64 if zero >= 2 else 1)
    assert (shard + grads) / 1e9 == pytest.approx(paper_gb, rel=0.02)


def test_expert_shards() -> None:
    """Experts split over EP, dense over TP: 8 experts of 1B on EP8 leave 1B per GPU."""
    s = checkpoint_state(params=9e9, expert_params=8e9, tp=1, dp=8, ep=8, zero=0)
    assert s.shard_bytes_per_gpu == pytest.approx((1e9 + 1e9) * 14)
    with pytest.raises(InputError):
        checkpoint_state(params=1e9, expert_params=2e9)
    # Megatron-Core MoE parallel folding: ep x etp must divide tp x cp x dp (the fabric's rule too)
    with pytest.raises(InputError) as err:
        checkpoint_state(params=9e9, expert_params=8e9, tp=1, dp=6, ep=4)
    assert err.value.field == "compute.parallelism.ep" and "(6)" in err.value.allowed


def test_write_time_takes_the_tightest_limit() -> None:
    """write_s = bytes / min(aggregate, writers x per-node); Llama 3's Tectonic sustains 2 TB/s
    (arXiv 2407.21783 §3.3.1) -> a 5.67 TB checkpoint in 2.8 s."""
    w = checkpoint_write(checkpoint_bytes=5.67e12, gpus=16_384, writer_nodes=2048,
                         aggregate_write_bytes_per_s=2e12, node_write_bytes_per_s=2e9, **HOST_PATH)
    assert w.write_s == pytest.approx(2.835) and w.binding == "storage aggregate write"
    few = checkpoint_write(checkpoint_bytes=5.67e12, gpus=64, writer_nodes=8,
                           aggregate_write_bytes_per_s=2e12, node_write_bytes_per_s=2e9, **HOST_PATH)
    assert few.write_s == pytest.approx(5.67e12 / 16e9) and few.binding == "per-node storage write"


def test_async_stall_and_gds() -> None:
    """Two-phase checkpoint: the stall is each GPU's share over PCIe; GDS lifts the host-path cap."""
    kw: dict[str, Any] = {"checkpoint_bytes": 1e12, "gpus": 64, "writer_nodes": 8,
                          "aggregate_write_bytes_per_s": 1e13, "node_write_bytes_per_s": 1e12,
                          "node_network_bytes_per_s": 100e9, **HOST_PATH}
    a = checkpoint_write(mode="async", **kw)
    assert a.stall_s == pytest.approx(1e12 / 64 / D2H) and a.persist_s == a.write_s > a.stall_s
    assert checkpoint_write(**kw).binding == "host-memory bounce path (no GDS)"
    g = checkpoint_write(gds=True, **kw)
    assert g.binding == "per-node storage network" and g.write_s < checkpoint_write(**kw).write_s


def test_capacity_and_assumptions() -> None:
    base: dict[str, Any] = {"gpus": 64, "gpus_per_node": 8, "params": 7e9, "tp": 1, "pp": 1, "dp": 64,
                            "dataset_tokens": 1e12, "tokens_per_s": 1e6, "vocab_size": 32_000}
    s, _ = plan_storage_and_reliability(**base)
    assert s.capacity_bytes == pytest.approx((2e12 + 4 * 7e9 * 14) / 0.8)
    fields = {a.field for a in s.assumptions}
    assert {"storage.bytes_per_token", "storage.retained_checkpoints", "storage.fill_fraction",
            "storage.checkpoint_mode", "storage.write_bytes_per_s"} <= fields
    s2, _ = plan_storage_and_reliability(**base, retained_checkpoints=1, fill_fraction=1.0)
    assert s2.capacity_bytes == pytest.approx(2e12 + 7e9 * 14)
    assert "storage.retained_checkpoints" not in {a.field for a in s2.assumptions}
    keys = set(s.model_dump())
    assert {"dataset_bytes", "read_bytes_per_s", "checkpoint_bytes", "checkpoint_write_s",
            "checkpoint_interval_s", "capacity_bytes"} <= keys


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"tier": "platinum"}, "storage.tier"), ({"dataset_tokens": None}, "storage.dataset"),
    ({"fill_fraction": 1.5}, "storage.fill_fraction"),
    ({"checkpoint_mode": "lazy"}, "storage.checkpoint_mode"),
    ({"gpus": 0}, "compute.gpus"),
])
def test_bad_input(kwargs: dict[str, Any], field: str) -> None:
    args: dict[str, Any] = {"gpus": 64, "gpus_per_node": 8, "params": 7e9, "tp": 1, "pp": 1, "dp": 64,
                            "dataset_tokens": 1e12, "tokens_per_s": 1e6, **kwargs}
    with pytest.raises(InputError) as err:
        plan_storage_and_reliability(**args)
    assert err.value.field == field
