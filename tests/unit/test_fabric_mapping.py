"""Parallelism -> fabric tiers, and the layout rules of seed 001 ("Mapping parallelism to the
fabric": TP <= NVLink domain, TP never crosses RDMA, EP spills at frontier scale, DP widest)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.fabric import map_parallelism, plan_fabric, plan_fabric_for_system

H100: dict[str, Any] = {"gpus_per_node": 8, "scale_up_domain_gpus": 8}
NVL72: dict[str, Any] = {"gpus_per_node": 4, "scale_up_domain_gpus": 72}


def _rules(**kw: Any) -> set[str]:
    return {v.rule for v in map_parallelism(**kw).violations}


def test_llama3_405b_layout_is_clean() -> None:
    """Llama 3 405B on 16,384 H100 (arXiv 2407.21783 Table 4): TP8 CP1 PP16 DP128, order
    [TP, CP, PP, DP]: TP on NVLink, PP and DP across nodes, no violation."""
    p = map_parallelism(tp=8, pp=16, dp=128, **H100)
    assert p.order == ["tp", "cp", "pp", "dp"]
    assert p.tiers["tp"] == "scale-up" and p.tiers["pp"] == p.tiers["dp"] == "scale-out"
    assert p.violations == []


def test_tp_larger_than_the_domain_is_an_error() -> None:
    p = map_parallelism(tp=16, pp=1, dp=8, **H100)
    assert [(v.rule, v.severity) for v in p.violations] == [("tp_exceeds_scale_up_domain", "error")]
    assert map_parallelism(tp=8, pp=1, dp=18, **NVL72).violations == []   # 8 divides a 72-GPU domain
    (v,) = map_parallelism(tp=16, pp=1, dp=9, **NVL72).violations       # 16 does not: ranks 64-79 straddle
    assert v.rule == "tp_crosses_rdma_boundary" and "leave 8 GPUs" in v.detail


def test_tp_that_straddles_nodes_is_an_error() -> None:
    """TP=6 on 8-GPU nodes: ranks 6-11 span two nodes, so TP all-reduces cross RDMA."""
    assert "tp_crosses_rdma_boundary" in _rules(tp=6, pp=1, dp=4, **H100)
    assert "tp_crosses_rdma_boundary" not in _rules(tp=4, pp=1, dp=4, **H100)


def test_ep_spill_is_flagged_with_its_cost() -> None:
    """DeepSeek-V3-like EP64 on 8-GPU nodes spills the all-to-all to RDMA; on NVL72 EP8 fits."""
    p = map_parallelism(tp=1, pp=16, dp=128, ep=64, ep_rdma_bytes_per_step=3e9,
                        per_gpu_scale_out_bytes_per_s=50e9, **H100)
    (v,) = [v for v in p.violations if v.rule == "ep_spills_to_scale_out"]
    assert v.severity == "warning" and v.bytes_per_step == 3e9
    assert v.seconds_per_step == pytest.approx(3e9 / 50e9)
    assert "ep_spills_to_scale_out" not in _rules(tp=1, pp=4, dp=72, ep=8, **NVL72)


def test_rank_order_decides_where_experts_land() -> None:
    """EP8 with PP inside DP (Llama 3 order) strides across nodes; Megatron's tp-cp-ep-dp-pp keeps it
    on one node, and is the default for MoE."""
    assert map_parallelism(tp=1, pp=16, dp=128, ep=8, order="tp-cp-pp-dp", **H100).tiers["ep"] == "scale-out"
    moe = map_parallelism(tp=1, pp=16, dp=128, ep=8, **H100)
    assert moe.order == ["tp", "cp", "dp", "pp"] and moe.tiers["ep"] == "scale-up"
    assert moe.assumptions[0].field == "fabric.rank_order"


def test_cp_and_dp_notes() -> None:
    """Llama 3 long context: TP8 x CP16 puts CP on RDMA (info); DP narrower than PP is noted."""
    assert "cp_crosses_scale_up" in _rules(tp=8, cp=16, pp=16, dp=8, **H100)
    assert "dp_not_widest" in _rules(tp=8, cp=1, pp=16, dp=2, **H100)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"tp": 0}, "compute.parallelism.tp"), ({"ep": 3}, "compute.parallelism.ep"),
    ({"scale_up_domain_gpus": 3}, "fabric.scale_up_domain.gpus"),
    ({"order": "dp-tp"}, "compute.parallelism.order"),
])
def test_bad_input(kwargs: dict[str, Any], field: str) -> None:
    args: dict[str, Any] = {"tp": 2, "pp": 2, "dp": 4, **H100, **kwargs}
    with pytest.raises(InputError) as err:
        map_parallelism(**args)
    assert err.value.field == field


@settings(max_examples=30, deadline=None)
@given(tp=st.sampled_from([1, 2, 4, 8]), pp=st.integers(1, 8), dp=st.integers(1, 16))
def test_tp_within_a_node_never_violates(tp: int, pp: int, dp: int) -> None:
    """Power-of-two TP <= 8 on 8-GPU nodes always stays on NVLink."""
    p = map_parallelism(tp=tp, pp=pp, dp=dp, **H100)
    assert not [v for v in p.violations if v.severity == "error"]
    assert p.tiers["tp"] in ("none", "scale-up")


def test_plan_fabric_layer_keys_and_catalog_adapter() -> None:
    """The layer carries the keys the issue names; the catalog adapter gives the same result."""
    cat = load_catalog()
    layer = plan_fabric_for_system(cat.system("dgx-h100"), cat.switch("quantum2-qm9700"), gpus=1024,
                                   tp=8, pp=4, dp=32, su_nodes=32)
    direct = plan_fabric(gpus=1024, gpus_per_node=8, scale_up_domain_gpus=8, nics_per_node=8,
                         nic_bits_per_s=400e9, switch_radix=64, switch_port_bits_per_s=400e9,
                         tp=8, pp=4, dp=32, su_nodes=32)
    dumped = layer.model_dump()
    assert dumped == direct.model_dump()
    assert {"scale_up_domain", "scale_out", "per_gpu_scale_out_bytes_per_s", "violations"} <= set(dumped)
    assert {"topology", "tiers", "leaf_switches", "spine_switches", "core_switches", "cables",
            "transceivers"} <= set(dumped["scale_out"])
    assert "assumptions" not in dumped and layer.formulas["fabric.scale_out.spine_switches"]
    with pytest.raises(InputError):
        plan_fabric(gpus=1000, gpus_per_node=8, scale_up_domain_gpus=8, nics_per_node=8, nic_bits_per_s=400e9,
                    switch_radix=64, switch_port_bits_per_s=400e9, tp=8, pp=4, dp=32)
