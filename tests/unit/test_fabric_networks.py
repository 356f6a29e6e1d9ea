"""Storage, in-band and out-of-band networks against the DGX H100 RA 4-SU bill of materials
(RA-11333-001 V11, Tables 7-8: 16 QM9700 storage, 8 SN4600C in-band, 8 SN2201 OOB switches and
254 in-band AOCs for 127 nodes)."""

from __future__ import annotations

import pytest

from workload_compiler.catalog.loader import package_yaml
from workload_compiler.errors import InputError
from workload_compiler.fabric import default_network_rules, size_networks


def test_four_su_bom() -> None:
    bom = package_yaml("fabric_networks.yaml")["compute"]["bom_4su"]
    n = size_networks(bom["nodes"], su_nodes=32)
    assert n.storage.switches == bom["storage_switches"]
    assert n.in_band.switches == bom["inband_switches"]
    assert n.out_of_band.switches == bom["oob_switches"]
    assert n.in_band.node_cables == bom["inband_aocs"]
    assert {a.field for a in n.assumptions} == {f"fabric.networks.{k}.switch_ports_per_node_port"
                                                 for k in ("storage", "in_band", "out_of_band")}


def test_networks_scale_with_full_sus() -> None:
    """Built per SU (RA: build the fabric for the full SU): 1 node costs what 32 do, 33 what 64 do."""
    one, full, next_su = (size_networks(n, su_nodes=32) for n in (1, 32, 33))
    assert one.storage.switches == full.storage.switches == 4
    assert next_su.storage.switches == 8
    assert size_networks(2048, su_nodes=32).storage.switches == 16 * 16


def test_storage_network_rate_per_node() -> None:
    """Two NDR 400G storage ports per DGX H100 = 100 GB/s line rate."""
    assert size_networks(4).storage.per_node_bytes_per_s == pytest.approx(100e9)


def test_missing_rules_and_bad_nodes() -> None:
    rules = default_network_rules()
    with pytest.raises(InputError):
        size_networks(4, rules={"storage": rules["storage"]})
    with pytest.raises(InputError):
        size_networks(0)
