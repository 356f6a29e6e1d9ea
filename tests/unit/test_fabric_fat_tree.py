"""Compute-fabric sizing against NVIDIA's DGX SuperPOD tables, row by row, and fat-tree invariants.

Tables (catalog/data/superpod_tables.yaml, copied from the RAs):
- DGX H100 RA (RA-11333-001 V11) Table 4: 1-4 SU of 31 nodes + UFM, QM9700 64x400G.
- DGX H100 RA Table 3 and the DGX B200 RA: 2-64 SU of 32 nodes, third (core) tier above 8 SU.
- DGX H100 RA Tables 7-8: the 4-SU, 127-node bill of materials.
- B300-XDR RA (RA-11339-001) via infrastructure.md §3.1: 144-port Q3400, 72-node SU, 4 SU -> 18
  spines, 2 tiers up to k^2/2 = 10,368 GPUs (18 SU -> 144 leaf / 72 spine).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_compiler.catalog.loader import load_catalog, package_yaml
from workload_compiler.errors import Infeasible, InputError
from workload_compiler.fabric import ScaleOutFabric, size_scale_out

QM9700: dict[str, Any] = {"switch_radix": 64, "switch_port_bits_per_s": 400e9}
DGX: dict[str, Any] = {"gpus_per_node": 8, "nics_per_node": 8, "nic_bits_per_s": 400e9}


def _ra(ra_id: str) -> dict[str, Any]:
    tables = load_catalog().tables["superpod_scalable_units"]
    entry: dict[str, Any] = next(t for t in tables if t["id"] == ra_id)
    return entry


H100_TABLE4 = _ra("dgx_superpod_h100")["compute_fabric_table"]
LARGER = [(ra, row) for ra in ("dgx_superpod_h100", "dgx_superpod_b200") for row in _ra(ra)["larger_table"]]


@pytest.mark.parametrize("row", H100_TABLE4, ids=lambda r: f"table4-su{r['su']}")
def test_dgx_h100_table4_rows(row: dict[str, int]) -> None:
    """DGX H100 RA Table 4: 31 usable nodes per 32-node SU (one slot for UFM), 4 UFM ports."""
    ufm = package_yaml("fabric_networks.yaml")["compute"]["management_ports"]["value"]
    f = size_scale_out(gpus=row["gpus"], su_nodes=32, management_ports=ufm, **DGX, **QM9700)
    assert (f.nodes, f.scalable_units, f.tiers) == (row["nodes"], row["su"], 2)
    assert (f.leaf_switches, f.spine_switches, f.core_switches) == (row["leaf"], row["spine"], 0)
    assert f.cables.node_leaf == row["cables_node_leaf"]
    assert f.cables.leaf_spine == row["cables_leaf_spine"]


@pytest.mark.parametrize(("ra", "row"), LARGER, ids=lambda x: x if isinstance(x, str) else f"su{x['su']}")
def test_dgx_h100_b200_larger_table_rows(ra: str, row: dict[str, int]) -> None:
    """DGX H100 RA Table 3 / DGX B200 RA: cables per tier = GPUs; core tier above 2,048 GPUs."""
    f = size_scale_out(gpus=row["gpus"], su_nodes=32, **DGX, **QM9700)
    assert f.tiers == (3 if row["core"] else 2)
    assert (f.leaf_switches, f.spine_switches, f.core_switches) == (row["leaf"], row["spine"], row["core"])
    assert f.cables.node_leaf == f.cables.leaf_spine == row["cables_per_tier"]
    assert f.cables.spine_core == (row["cables_per_tier"] if row["core"] else 0)


def test_dgx_h100_four_su_bill_of_materials() -> None:
    """DGX H100 RA Tables 7-8 (127 nodes): 48 QM9700, 2,040 NDR compute cables (UFM cables apart),
    1,536 switch OSFP transceivers (twin-port), 508 system OSFP (two-port, 4 per DGX)."""
    rules = package_yaml("fabric_networks.yaml")["compute"]
    bom = rules["bom_4su"]
    f = size_scale_out(gpus=bom["nodes"] * 8, su_nodes=32,
                       management_ports=rules["management_ports"]["value"],
                       node_ports_per_transceiver=rules["dgx_node_ports_per_transceiver"]["value"],
                       switch_ports_per_transceiver=rules["switch_ports_per_transceiver"]["value"],
                       **DGX, **QM9700)
    assert f.switches == bom["compute_switches"]
    assert f.cables.total - rules["management_ports"]["value"] == bom["ndr_compute_cables"]
    assert f.transceivers.switch == bom["switch_osfp_transceivers"]
    assert f.transceivers.node == bom["system_osfp_transceivers"]


XDR: dict[str, Any] = {"gpus_per_node": 8, "nics_per_node": 8, "nic_bits_per_s": 800e9, "switch_radix": 144,
       "switch_port_bits_per_s": 800e9, "su_nodes": 72}


def test_b300_xdr_four_su_rounds_spines_to_18() -> None:
    """B300-XDR RA (infrastructure.md §3.1): 4 SU -> 18 spines, not the port minimum 16."""
    f = size_scale_out(gpus=4 * 576, **XDR)
    assert (f.leaf_switches, f.spine_switches, f.tiers) == (32, 18, 2)
    assert f.technology == "InfiniBand XDR"


def test_xdr_two_tier_limit_is_k_squared_over_two() -> None:
    """144-port switches: 2 tiers up to 144^2/2 = 10,368 GPUs (18 SU: 144 leaf / 72 spine), then 3."""
    at_limit = size_scale_out(gpus=10_368, **XDR)
    assert (at_limit.tiers, at_limit.leaf_switches, at_limit.spine_switches) == (2, 144, 72)
    assert at_limit.cables.node_leaf == 10_368 == at_limit.max_endpoints_at_tiers
    assert size_scale_out(gpus=10_368 + 576, **XDR).tiers == 3


def test_nvl72_trays_one_nic_per_gpu() -> None:
    """GB200 NVL72 (GB200 RA): 4-GPU trays with 4 CX-7 NICs -> 50 GB/s per GPU; 18 trays x 8 racks."""
    f = size_scale_out(gpus=576, gpus_per_node=4, nics_per_node=4, nic_bits_per_s=400e9, su_nodes=144,
                       **QM9700)
    assert f.per_gpu_scale_out_bytes_per_s == pytest.approx(50e9)
    assert f.nodes == 144 and f.endpoints == 576
    assert f.leaf_switches * f.leaf_down_ports >= f.endpoints
    assert f.tiers == 2


def test_breakout_and_single_switch() -> None:
    """SN5600 64x800G splits into 128x400G: 16 DGX nodes (128 NIC ports) fit one switch."""
    f = size_scale_out(gpus=128, switch_radix=64, switch_port_bits_per_s=800e9, technology="spectrum-x",
                       **DGX)
    assert (f.tiers, f.switches, f.leaf_down_ports) == (1, 1, 128)
    assert f.technology == "Ethernet Spectrum-X 400G"
    assert size_scale_out(gpus=136, switch_radix=64, switch_port_bits_per_s=800e9, **DGX).tiers == 2


def test_oversubscription_halves_uplinks() -> None:
    f = size_scale_out(gpus=2048, oversubscription=3, **DGX, **QM9700)
    assert (f.leaf_down_ports, f.leaf_up_ports, f.oversubscription) == (48, 16, 3.0)
    full = size_scale_out(gpus=2048, **DGX, **QM9700)
    assert f.bisection_bytes_per_s == pytest.approx(full.bisection_bytes_per_s / 3)
    assert f.switches < full.switches


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"gpus": 0}, "compute.gpus"), ({"gpus": -8}, "compute.gpus"),
    ({"switch_radix": 1}, "fabric.switch_radix"), ({"technology": "omni-path"}, "fabric.technology"),
    ({"oversubscription": 0.5}, "fabric.oversubscription"),
    ({"nic_bits_per_s": float("nan")}, "fabric.nic_bits_per_s"),
])
def test_bad_input_names_the_field(kwargs: dict[str, Any], field: str) -> None:
    args: dict[str, Any] = {"gpus": 64, **DGX, **QM9700, **kwargs}
    with pytest.raises(InputError) as err:
        size_scale_out(**args)
    assert err.value.field == field


def test_beyond_three_tiers_is_infeasible() -> None:
    """A 3-tier fat tree of k-port switches holds k^3/4 endpoints (Al-Fares et al. 2008): 65,536 at k=64."""
    assert size_scale_out(gpus=65_536, su_nodes=32, **DGX, **QM9700).tiers == 3
    with pytest.raises(Infeasible):
        size_scale_out(gpus=65_536 + 256, su_nodes=32, **DGX, **QM9700)


def _ports_fit(f: ScaleOutFabric, k: int) -> bool:
    leaves_ok = f.leaf_switches * k >= f.cables.node_leaf + f.cables.leaf_spine
    spines_ok = f.spine_switches * k >= f.cables.leaf_spine + f.cables.spine_core
    cores_ok = f.core_switches * k >= f.cables.spine_core
    return leaves_ok and spines_ok and cores_ok


@settings(max_examples=40, deadline=None)
@given(nodes=st.integers(1, 3000), gpn=st.sampled_from([4, 8]), radix=st.sampled_from([32, 64, 144]),
       rail=st.booleans(), su=st.sampled_from([None, 16, 32, 72]))
def test_every_port_has_a_switch_and_more_gpus_never_need_fewer_switches(
        nodes: int, gpn: int, radix: int, rail: bool, su: int | None) -> None:
    kw: dict[str, Any] = {"gpus_per_node": gpn, "nics_per_node": gpn, "nic_bits_per_s": 400e9,
                          "switch_radix": radix, "switch_port_bits_per_s": 400e9, "rail_optimized": rail,
                          "su_nodes": su}
    try:
        small = size_scale_out(gpus=nodes * gpn, **kw)
        big = size_scale_out(gpus=(nodes + 1) * gpn, **kw)
    except Infeasible:
        return
    for f in (small, big):
        assert _ports_fit(f, radix)
        assert f.endpoints <= f.max_endpoints_at_tiers
        assert f.cables.total == f.cables.node_leaf + f.cables.leaf_spine + f.cables.spine_core
        assert f.spine_switches == 0 or f.leaf_up_ports % (f.spine_switches if f.tiers == 2 else 1) == 0
    assert big.switches >= small.switches
    assert big.tiers >= small.tiers
