"""Racks and floor space against the DGX SuperPOD RAs (RA-11333-001 V11 Table 7; B200 and GB200 RAs)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_compiler.errors import InputError
from workload_compiler.facility import (
    SystemUnit,
    facility_data,
    fat_tree,
    floor_area,
    racks_in_area,
    reference_equipment,
    size_facility,
    units_per_rack,
)

DATA = facility_data()
AIR = DATA.cooling_type("air")
DGX_H100 = SystemUnit(id="dgx-h100", name="DGX H100", gpus=8, nodes=1, power_w=10_200.0,
                      power_basis="node max power", rack_units=8, liquid_fraction=0.0, compute_ports=8)
NVL72 = SystemUnit(id="gb200-nvl72", name="GB200 NVL72", gpus=72, nodes=18, power_w=132_000.0,
                   power_basis="rack power", rack_scale=True, liquid_fraction=0.85, compute_ports=72)


def test_dgx_h100_4su_is_38_racks():
    # Table 7: 38 racks; 96 + 12 rack PDUs = 3 per compute rack x 32 + 2 per other rack x 6.
    f = size_facility(DGX_H100, 127)
    r = f.breakdown.racks
    assert r.compute_racks == 32
    assert r.racks == 38
    assert f.racks == r.compute_racks + r.network_racks + r.storage_racks


def test_fat_tree_reproduces_ra_tables_3_and_4():
    # (ports, leaves, spines, cores): Table 4 (4 SU, 1,016 ports), Table 3 (8, 16 and 64 SU)
    for ports, expected in ((1016, (32, 16, 0)), (2048, (64, 32, 0)), (4096, (128, 128, 64)),
                            (16384, (512, 512, 256))):
        t = fat_tree(ports)
        assert (t.leaves, t.spines, t.cores) == expected
    with pytest.raises(InputError):
        fat_tree(10, radix=63)


def test_rack_limit_below_one_node_names_the_binding():
    fit = units_per_rack(DGX_H100, rack_power_limit_w=8_000.0, cooling=AIR, usable_rack_units=42)
    assert fit.units == 0 and fit.binding == "rack power"
    assert fit.detail == "infeasible: rack limit 8 kW < node 10.2 kW"


def test_nvl72_is_one_system_per_rack_and_never_air_cooled():
    dlc = DATA.cooling_type("liquid")
    assert units_per_rack(NVL72, rack_power_limit_w=250e3, cooling=dlc, usable_rack_units=42).units == 1
    fit = units_per_rack(NVL72, rack_power_limit_w=200e3, cooling=AIR, usable_rack_units=42)
    assert fit.units == 0 and fit.binding == "cooling type" and "direct liquid" in fit.detail


def test_rack_units_bind_for_short_limits_of_height():
    fit = units_per_rack(DGX_H100, rack_power_limit_w=1e6, cooling=DATA.cooling_type("immersion"),
                         usable_rack_units=24)
    assert fit.units == 3 and fit.binding == "rack units"


def test_floor_area_and_its_inverse():
    f = floor_area(38, DATA.floor.m2_per_rack, DATA.floor.support_space_multiplier)
    assert f.floor_area_m2 == pytest.approx(38 * 3.25)
    assert f.gross_area_m2 == pytest.approx(f.floor_area_m2 * 1.9)
    assert racks_in_area(f.floor_area_m2, DATA.floor.m2_per_rack) == 38
    with pytest.raises(InputError):
        racks_in_area(0.0, 3.25)


def test_storage_rack_split_when_above_rack_limit():
    f = size_facility(DGX_H100, 64, rack_power_limit_w=11_000.0)     # 512 GPUs: one whole storage rack
    assert f.breakdown.racks.units_per_rack == 1
    assert f.breakdown.racks.storage_racks == 2  # one 15 kW storage rack needs two 11 kW positions


def test_one_node_has_no_compute_fabric_and_a_share_of_storage():
    """One DGX H100 (8 GPUs): no compute-fabric switch and no UFM (its GPUs meet over NVLink, as the
    fabric layer sizes no fabric for one node), storage 8/1,024 of the assumed 15 kW rack (a 2U
    server's worth): 52 kW of facility power for one node's service had been a whole storage rack
    and a two-switch fat tree."""
    lines = reference_equipment(gpus=8, compute_ports=8, data=DATA, units=1)
    by_label = {line.name.split("[")[-1].rstrip("]"): line for line in lines}
    assert by_label["compute fabric"].count == 0 and "fabric manager" not in by_label
    storage = by_label["storage"]
    assert storage.power_w == pytest.approx(15_000.0 * 8 / 1024) and storage.rack_units_each == 2
    assert not storage.whole_rack
    f = size_facility(DGX_H100, 1)
    assert f.breakdown.racks.storage_racks == 0
    assert f.it_power_w < 2 * DGX_H100.power_w


def test_a_fabric_within_one_switch_has_no_spines():
    """Up to the radix every port lands on one non-blocking switch (two nodes' 16 ports: 1 switch)."""
    assert (fat_tree(16).leaves, fat_tree(16).spines, fat_tree(16).cores) == (1, 0, 0)
    assert (fat_tree(64).leaves, fat_tree(64).spines) == (1, 0)
    assert fat_tree(65).leaves == 3 and fat_tree(65).spines == 2


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3000))
def test_racks_and_overheads_grow_with_gpus(n: int):
    a = reference_equipment(gpus=8 * n, compute_ports=8 * n, data=DATA)
    b = reference_equipment(gpus=8 * (n + 1), compute_ports=8 * (n + 1), data=DATA)
    assert sum(e.power_w for e in a) <= sum(e.power_w for e in b)


def test_a_one_node_training_job_bills_no_compute_fabric_as_serving_does() -> None:
    """A LoRA run on one H100 of a DGX H100: the fabric layer builds no compute fabric (it had shown a
    'single switch') and the facility bills no compute-fabric switch nor UFM appliance (16.9 kW of IT
    power before, 14.5 kW now: the node, storage fabric, management and a share of a storage rack)."""
    from workload_compiler import compile_workload
    spec = compile_workload({"kind": "training", "model": {"preset": "llama3.1-8b"},
                             "training": {"tokens": "100M", "seq_len": 2048, "lora": {"rank": 16}},
                             "compute": {"accelerator": "h100-sxm", "gpus": 1}})
    out = spec.fabric.scale_out
    assert out.switches == 0 and out.tiers == 0 and out.cables.total == 0
    lines = spec.facility.breakdown.power.lines
    by_label = {line.name.split("[")[-1].rstrip("]"): line for line in lines}
    assert by_label["compute fabric"].count == 0 and "fabric manager" not in by_label
    assert spec.facility.it_power_w < DGX_H100.power_w + 5_000.0


def test_one_node_serving_and_training_build_the_same_fabric_layer() -> None:
    """One H100 serving Llama 3 8B had no fabric layer at all (a six-layer spec with five), while one
    H100 training had its scale-up domain and a switchless scale-out: both now build the latter, and
    bill the same node, storage fabric and management."""
    from workload_compiler import compile_workload
    serve = compile_workload({"kind": "inference", "model": {"preset": "llama3-8b"},
                              "serving": {"input_tokens": 1000, "output_tokens": 200, "request_rate": "2/s"},
                              "compute": {"accelerator": "h100-sxm"}})
    train = compile_workload({"kind": "training", "model": {"preset": "llama3.1-8b"},
                              "training": {"tokens": "100M", "seq_len": 2048, "lora": {"rank": 16}},
                              "compute": {"accelerator": "h100-sxm", "gpus": 1}})
    assert serve.compute["gpus"] == 1
    for spec in (serve, train):
        assert spec.fabric["scale_out"]["tiers"] == 0 and spec.fabric["scale_out"]["switches"] == 0
    assert serve.facility["it_power_w"] == pytest.approx(train.facility["it_power_w"], rel=0.01)
