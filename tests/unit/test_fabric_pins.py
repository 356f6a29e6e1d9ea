"""Fabric pins reach the step-time model (spine/fabric_pins.py): each pin moves the per-GPU
scale-out bandwidth the model sees, and through it the exposed data-parallel communication and the
step time, in the physical direction and by the formula's size."""

from __future__ import annotations

from typing import Any

import pytest

from workload_compiler import compile_workload
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.intake.infrastructure import FabricIntake
from workload_compiler.spine.fabric_pins import compute_switch, fabric_hardware
from workload_compiler.spine.result import ComputeLayer

# Llama 3 8B data parallel over 1,024 H100 (128 DGX H100 nodes, 4 SUs): the gradient reduction
# crosses the spine tier, so the fabric shows in the step.
BASE: dict[str, Any] = {
    "kind": "training", "model": {"preset": "llama3-8b"},
    "training": {"tokens": "100B", "seq_len": 4096, "global_batch_size": 1024},
    "compute": {"accelerator": "h100-sxm", "gpus": 1024,
                "parallelism": {"tp": 1, "pp": 1, "dp": 1024, "micro_batch_size": 1, "recompute": "full",
                                "zero_stage": 1}}}


def _compute(fabric: dict[str, Any], gpus: int = 1024) -> ComputeLayer:
    data = {**BASE, "fabric": fabric, "compute": {**BASE["compute"], "gpus": gpus,
                                                  "parallelism": {**BASE["compute"]["parallelism"], "dp": gpus}}}
    spec = compile_workload(data)
    assert isinstance(spec.compute, ComputeLayer), spec.binding_constraint
    return spec.compute


@pytest.fixture(scope="module")
def base() -> ComputeLayer:
    return _compute({})


def test_no_pins_leave_the_catalog_bandwidth_exactly(base: ComputeLayer) -> None:
    cat = load_catalog()
    hw = cat.hardware("h100-sxm", "dgx-h100")
    got, effect = fabric_hardware(hw, FabricIntake(), cat.system("dgx-h100"),
                                  compute_switch(FabricIntake(), cat.system("dgx-h100"), cat), 1024)
    assert got == hw and effect.effective_bytes_per_s == 50e9    # 8 x 400 Gb/s / 8 GPUs
    assert base.scale_out_bytes_per_s_per_gpu == 50e9


def test_oversubscription_slows_the_step_by_the_formula(base: ComputeLayer) -> None:
    # 1,024 GPUs, a rail-optimized leaf domain of 32 nodes (256 GPUs): f = 0.75 leaves the leaf.
    # B_eff = 50 GB/s / (0.25 + 0.75 x 4) = 15.4 GB/s at 4:1.
    c4 = _compute({"oversubscription": 4})
    assert c4.scale_out_bytes_per_s_per_gpu == pytest.approx(50e9 / (0.25 + 0.75 * 4))
    c2 = _compute({"oversubscription": 2})
    assert base.step_time_s < c2.step_time_s < c4.step_time_s
    assert base.step_breakdown_s["dp_comm_exposed"] < c2.step_breakdown_s["dp_comm_exposed"] \
        < c4.step_breakdown_s["dp_comm_exposed"]
    assert c4.step_time_s / base.step_time_s > 1.1          # a tenth or more of a step at 4:1
    # only communication moved: the compute share is the same
    assert c4.step_breakdown_s["compute"] == pytest.approx(base.step_breakdown_s["compute"])


def test_nic_speed_moves_the_step_both_ways(base: ComputeLayer) -> None:
    slow, fast = _compute({"nic_bandwidth": "200Gb/s"}), _compute({"nic_bandwidth": "800Gb/s"})
    assert slow.scale_out_bytes_per_s_per_gpu == 25e9 and fast.scale_out_bytes_per_s_per_gpu == 100e9
    assert fast.step_time_s < base.step_time_s < slow.step_time_s


def test_rail_optimization_matters_where_the_leaf_is_oversubscribed() -> None:
    # 256 GPUs = one SU: rail-optimized, every same-rail peer is one hop away (no spine traffic);
    # top of rack, a 2:1 leaf holds 42 down ports = 5 nodes, so most traffic crosses the spine.
    rail = _compute({"oversubscription": 2}, gpus=256)
    tor = _compute({"oversubscription": 2, "rail_optimized": False}, gpus=256)
    assert rail.scale_out_bytes_per_s_per_gpu == 50e9
    assert tor.scale_out_bytes_per_s_per_gpu < 30e9 and tor.step_time_s > rail.step_time_s
    # without oversubscription, rail optimization does not change bandwidth (only hops)
    assert _compute({"rail_optimized": False}, gpus=256).step_time_s == pytest.approx(rail.step_time_s)


def test_roce_with_ecmp_is_slower_than_adaptive_routing(base: ComputeLayer) -> None:
    adaptive = _compute({"transport": "roce"})          # Spectrum-X, per-packet adaptive routing
    ecmp = _compute({"transport": "roce", "adaptive_routing": False})
    assert adaptive.step_time_s == pytest.approx(base.step_time_s)
    assert ecmp.step_time_s > base.step_time_s
    # cross-leaf traffic at 0.625 of the line rate (catalog/data/fabric_transport.yaml)
    assert ecmp.scale_out_bytes_per_s_per_gpu == pytest.approx(50e9 / (0.25 + 0.75 / 0.625))


def test_a_transport_that_contradicts_the_switch_is_an_error() -> None:
    with pytest.raises(InputError, match=r"fabric\.transport"):
        compile_workload({**BASE, "fabric": {"transport": "roce", "switch": "quantum2-qm9700"}})


def test_one_node_has_no_scale_out_traffic() -> None:
    cat = load_catalog()
    hw = cat.hardware("h100-sxm", "dgx-h100")
    got, effect = fabric_hardware(hw, FabricIntake(oversubscription=8), cat.system("dgx-h100"),
                                  cat.switch("quantum2-qm9700"), 8)
    assert got == hw and effect.cross_leaf_share == 0.0


def test_hpc_all_to_all_feels_the_fabric() -> None:
    # a spectral (all-to-all bound) solve on 1,024 A100 spans 4 SUs: the spine tier carries most
    # of the transposes, so a 4:1 leaf and a slower NIC both lengthen the step
    from pathlib import Path

    from workload_compiler import recompile
    example = Path(__file__).parents[2] / "examples" / "hpc-fft-spectral.yaml"

    def step(**pins: object) -> float:
        spec = recompile(example, {"compute.gpus": 1024, **pins}, alternatives=False)
        return float((spec.hpc or {})["step_breakdown_s"]["network"])

    base = step()
    assert step(**{"fabric.oversubscription": 4}) > 1.5 * base
    assert step(**{"fabric.nic_bandwidth": "100Gb/s"}) > 1.5 * base
    assert step(**{"fabric.nic_bandwidth": "400Gb/s"}) < base
