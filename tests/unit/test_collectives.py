"""Alpha-beta collectives against the NCCL bus-bandwidth definitions.

NVIDIA/nccl-tests doc/PERFORMANCE.md: busbw = algbw x factor with factor 2(n-1)/n for AllReduce
and (n-1)/n for ReduceScatter, AllGather and AlltoAll (algbw = S / t). With zero latency, a
collective at link bandwidth B must therefore report busbw == B exactly.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_compiler.perf import collectives as coll
from workload_compiler.perf.layout import Hardware

H100_NODE = Hardware(
    accelerator_id="h100-sxm", system_id="dgx-h100", peak_flops_bf16=989.4e12, peak_flops_fp8=1978.9e12,
    peak_flops_fp4=None, hbm_bytes=80e9, hbm_bandwidth_bytes_per_s=3.35e12,
    scale_up_bandwidth_bytes_per_s=450e9, scale_up_domain_gpus=8, gpus_per_node=8,
    scale_out_bandwidth_bytes_per_s=50e9, tdp_w=700.0)

S = 1e9          # 1 GB buffer
B = 100e9        # 100 GB/s per-rank link


@pytest.mark.parametrize("n", [2, 4, 8, 64, 1024])
def test_bus_bandwidth_factors_match_nccl_tests(n: int) -> None:
    algbw = {
        "all_reduce": S / coll.all_reduce_s(S, n, B, 0.0),
        "reduce_scatter": S / coll.reduce_scatter_s(S, n, B, 0.0),
        "all_gather": S / coll.all_gather_s(S, n, B, 0.0),
        "all_to_all": S / coll.all_to_all_s(S, n, B, 0.0),
    }
    factor = {"all_reduce": 2 * (n - 1) / n, "reduce_scatter": (n - 1) / n,
              "all_gather": (n - 1) / n, "all_to_all": (n - 1) / n}
    for name, bw in algbw.items():
        assert bw * factor[name] == pytest.approx(B, rel=1e-12), name


def test_latency_terms_of_the_ring_algorithms() -> None:
    """Thakur, Rabenseifner & Gropp 2005: ring all-reduce 2(p-1) alpha, reduce-scatter (p-1) alpha."""
    assert coll.all_reduce_s(0.0, 8, B, 1e-6) == pytest.approx(14e-6)
    assert coll.reduce_scatter_s(0.0, 8, B, 1e-6) == pytest.approx(7e-6)
    assert coll.p2p_s(0.0, B, 1e-6) == pytest.approx(1e-6)


def test_one_rank_costs_nothing() -> None:
    assert coll.all_reduce_s(S, 1, B, 1e-5) == 0.0
    assert coll.group_all_reduce_s(S, 1, 1, H100_NODE) == 0.0
    assert coll.group_all_to_all_s(S, 1, 1, H100_NODE) == 0.0


def test_inside_one_node_runs_on_nvlink_at_its_achievable_fraction() -> None:
    """8x H100 all-reduce busbw ~ 0.8 x 450 GB/s (infrastructure.md §3.4: NCCL ring ~370 GB/s)."""
    t = coll.group_all_reduce_s(8e9, 8, 1, H100_NODE)
    busbw = 8e9 / t * 2 * 7 / 8
    assert busbw == pytest.approx(0.8 * 450e9, rel=0.01)


def test_hierarchical_all_reduce_uses_every_nic_of_the_node() -> None:
    """64 ranks on 8 nodes (stride 1): NVLink inside, S/8 per GPU across the NICs, so the
    cross-node part is 8x cheaper than a flat ring over the NICs (stride 8: one rank per node)."""
    dense = coll.group_all_reduce_s(8e9, 64, 1, H100_NODE)
    one_per_node = coll.group_all_reduce_s(8e9, 8, 8, H100_NODE)
    flat_nic = coll.all_reduce_s(8e9, 8, coll.scale_out_bw(H100_NODE), coll.NIC_LATENCY_S)
    assert one_per_node == pytest.approx(flat_nic)
    assert dense < one_per_node / 3


def test_all_to_all_across_nodes_is_bound_by_the_nics() -> None:
    inside = coll.group_all_to_all_s(1e9, 8, 1, H100_NODE)
    across = coll.group_all_to_all_s(1e9, 16, 1, H100_NODE)
    # Half of a 16-rank exchange leaves the node at 46 GB/s instead of 360 GB/s of NVLink.
    assert across == pytest.approx(0.5 * 1e9 / coll.scale_out_bw(H100_NODE) + 8 * coll.NIC_LATENCY_S)
    assert across > 4 * inside


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 4096), stride=st.sampled_from([1, 2, 4, 8, 16]), size=st.floats(1e3, 1e11))
def test_grouped_collectives_are_finite_positive_and_grow_with_size(n: int, stride: int, size: float) -> None:
    for fn in (coll.group_all_reduce_s, coll.group_reduce_scatter_s, coll.group_all_to_all_s):
        t1, t2 = fn(size, n, stride, H100_NODE), fn(2 * size, n, stride, H100_NODE)
        assert np.isfinite(t1) and 0 < t1 < t2


def test_slower_nics_make_cross_node_collectives_slower() -> None:
    """IBM's H100 nodes: 800 Gb/s per node = 12.5 GB/s per GPU (calibration ibm_fsdp records).
    Hierarchical: NVLink reduce-scatter over 8, then S/8 across the 12 nodes over the NICs."""
    slow = dataclasses.replace(H100_NODE, scale_out_bandwidth_bytes_per_s=12.5e9)
    intra = coll.reduce_scatter_s(4e9, 8, coll.scale_up_bw(slow), coll.NVLINK_LATENCY_S)
    inter = coll.reduce_scatter_s(4e9 / 8, 12, 12.5e9 * coll.NIC_EFFICIENCY, coll.NIC_LATENCY_S)
    assert coll.group_reduce_scatter_s(4e9, 96, 1, slow) == pytest.approx(intra + inter)
    fast = coll.group_reduce_scatter_s(4e9, 96, 1, H100_NODE)
    assert coll.group_reduce_scatter_s(4e9, 96, 1, slow) > 2 * fast


def test_vectorized_over_group_sizes() -> None:
    n = np.array([1, 2, 8, 16, 64])
    t = coll.group_all_reduce_s(1e9, n, 1, H100_NODE)
    assert t.shape == (5,)
    assert np.all(np.diff(t) > 0)


def test_a_token_reaches_fewer_remote_nodes_than_it_has_expert_copies() -> None:
    """Balanced top-8 over ep 64 on 8-GPU nodes: 7 (1 - (7/8)^8) = 4.60 remote nodes per token, not
    the 7 copies an all-to-all sends off the node; DeepSeek-V3's group-limited routing (4 of 8
    groups, a group per node at ep 64) caps it at 4 x 7/8 = 3.5 (arXiv:2412.19437 Sec 2.1.2)."""
    free = float(coll.remote_domains_hit(64, 1, H100_NODE, 8.0))
    limited = float(coll.remote_domains_hit(64, 1, H100_NODE, 8.0, groups=8, group_top_k=4))
    assert free == pytest.approx(7.0 * (1.0 - (7.0 / 8.0) ** 8))
    assert limited == pytest.approx(3.5)
    assert float(coll.remote_domains_hit(8, 1, H100_NODE, 8.0)) == 0.0     # one node: none remote


def test_deduplicated_dispatch_sends_each_token_once_per_remote_node() -> None:
    """DeepEP / HybridEP against the all-to-all: across nodes the NIC bytes fall by copies off the
    node / remote nodes hit; inside one node both move the same NVLink bytes."""
    token = 7168 * 2.0 * 4096                                   # a micro-batch of tokens, bf16
    plain = float(coll.group_all_to_all_s(8.0 * token, 64, 1, H100_NODE))
    dedup = float(coll.group_dispatch_dedup_s(token, 8.0, 64, 1, H100_NODE, groups=8, group_top_k=4))
    # the NIC part binds both; the per-peer latency goes from 56 remote GPUs to 7 remote nodes
    nic = coll.NIC_LATENCY_S
    assert dedup - 7 * nic == pytest.approx((plain - 56 * nic) * 3.5 / 7.0)
    assert float(coll.group_dispatch_dedup_s(token, 8.0, 8, 1, H100_NODE)) == pytest.approx(
        float(coll.group_all_to_all_s(8.0 * token, 8, 1, H100_NODE)))
