"""Fabric generations match: the switches, the fabric manager and the transceivers of a cluster
follow its network generation (catalog/data/fabric_generations.yaml), one test per generation."""

from __future__ import annotations

from typing import Any

import pytest

from shared_data import REPO_ROOT
from workload_compiler import compile_workload
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.fabric.generations import generation_of_switch, generations, infiniband_for_nic
from workload_compiler.facility.data import facility_data
from workload_compiler.spine.result import SystemSpec


def _spec(accelerator: str, gpus: int, **fabric: Any) -> SystemSpec:
    intake: dict[str, Any] = {"kind": "training", "model": {"preset": "llama3-8b"},
                              "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 256},
                              "compute": {"accelerator": accelerator, "gpus": gpus}}
    if fabric:
        intake["fabric"] = fabric
    spec = compile_workload(intake)
    assert spec.feasible, spec.binding_constraint
    return spec


def _bill(spec: SystemSpec) -> list[str]:
    assert spec.facility is not None and spec.fabric is not None
    return [line.name for line in spec.facility.breakdown.power.lines]  # type: ignore[union-attr]


def test_every_generation_names_devices_the_catalog_and_the_power_data_hold() -> None:
    catalog, data = load_catalog(), facility_data()
    for g in generations():
        assert g.source
        for switch in (g.compute_switch, g.storage_switch):
            assert catalog.switch(switch).id == switch
        data.device(g.storage_switch)
        if g.id != "xdr":   # Q3400 power is not in the sources: the facility bill says so (test below)
            data.device(g.compute_switch)
        assert catalog.nic(g.nic).port_bits_per_s == pytest.approx(g.link_bits_per_s) or g.id == "spectrum-x"
        if g.fabric_manager is not None:
            data.device(g.fabric_manager)


def test_nic_speed_picks_the_infiniband_generation() -> None:
    assert [infiniband_for_nic(b).id for b in (100e9, 200e9, 400e9, 800e9, 1600e9)] == [
        "hdr", "hdr", "ndr", "xdr", "xdr"]
    catalog = load_catalog()
    assert generation_of_switch(catalog.switch("spectrum4-sn5400")).id == "spectrum-x"


def test_hdr_a100_cluster_is_hdr_throughout() -> None:
    spec = _spec("a100-sxm-80gb", 256)
    f = spec.fabric
    assert f is not None and f.generation == "InfiniBand HDR" and f.nic == "connectx6"
    assert f.scale_out.technology == "InfiniBand HDR" and f.scale_out.link_bits_per_s == 200e9
    assert f.networks.storage.switch == "quantum-qm8790" and "HDR" in f.networks.storage.name
    bill = " | ".join(_bill(spec))
    assert "QM8790" in bill and "UFM Appliance (HDR)" in bill
    assert "QM9700" not in bill and "NDR" not in bill
    # QSFP56: one switch port per transceiver (NDR's twin-port cages would halve the count)
    so = f.scale_out
    assert so.scalable_units == 2   # 32 nodes in SUs of 20 (the A100 RA), built whole
    built_ports = so.scalable_units * 20 * 8
    assert so.transceivers.switch == built_ports + 2 * so.cables.leaf_spine + 2 * so.cables.spine_core
    # the optics inside the switch power are HDR QSFP56 ones, not NDR twin-port OSFPs
    assert spec.facility is not None
    compute = next(line for line in spec.facility.breakdown.power.lines  # type: ignore[union-attr]
                   if "compute fabric" in line.name)
    optic = facility_data().transceivers["qsfp56-200g-mm"]
    assert compute.optics_w_included == pytest.approx(so.transceivers.switch * optic.power_w)


def test_hdr_radix_sets_the_tier_count() -> None:
    # 40-port HDR switches: two tiers hold at most 40^2 / 2 = 800 endpoints; 1,024 NIC ports need three.
    spec = compile_workload(REPO_ROOT / "examples" / "gpt3-175b-a100.yaml")
    assert spec.fabric is not None and spec.fabric.scale_out.tiers == 3
    assert spec.fabric.scale_out.max_endpoints_at_tiers > 1024


def test_ndr_h100_cluster_is_ndr_throughout() -> None:
    spec = _spec("h100-sxm", 256)
    assert spec.fabric is not None and spec.fabric.generation == "InfiniBand NDR"
    bill = " | ".join(_bill(spec))
    assert "QM9700" in bill and "UFM Enterprise Appliance (NDR)" in bill and "QM8790" not in bill
    so = spec.fabric.scale_out   # twin-port OSFP cages: two switch ports per transceiver
    assert so.transceivers.switch == -(-(so.scalable_units * 32 * 8 + 2 * so.cables.leaf_spine) // 2)


def test_xdr_cluster_uses_xdr_switches_and_says_where_power_is_a_stand_in() -> None:
    spec = _spec("gb300", 288)
    f = spec.fabric
    assert f is not None and f.generation == "InfiniBand XDR" and f.nic == "connectx8"
    assert "XDR" in f.scale_out.technology
    stand_in = [a for a in spec.assumptions if a.field == "facility.breakdown.power.stand_in"]
    assert stand_in and stand_in[0].value == "quantum-x800-q3400"


def test_spectrum_x_fabric_has_ethernet_storage_and_no_ufm() -> None:
    spec = _spec("h100-sxm", 256, switch="spectrum4-sn5600")
    f = spec.fabric
    assert f is not None and f.generation == "Ethernet (Spectrum-X)" and f.fabric_manager is None
    assert f.networks.storage.switch == "spectrum4-sn5600"
    assert not any("UFM" in line for line in _bill(spec))
