"""node-check over shipped snapshots (tests/fixtures/nodes: SYNTHETIC DGX H100 nodes, see
make_fixtures.py): the readers, the checklist verdicts, and the fleet comparison."""

from __future__ import annotations

from pathlib import Path

import pytest

from workload_compiler.catalog.loader import load_catalog
from workload_compiler.compile import compile_workload
from workload_compiler.measure.fleet import compare
from workload_compiler.measure.node_expect import default_expectations, spec_expectations
from workload_compiler.measure.node_read import node_report
from workload_compiler.measure.node_readiness import NA, Expectations, NodeCheck, check_node
from workload_compiler.measure.node_snapshot import NodeSnapshot, collect

NODES = Path(__file__).parents[1] / "fixtures" / "nodes"
EXAMPLES = Path(__file__).parents[2] / "examples"


def snap(name: str) -> NodeSnapshot:
    return NodeSnapshot.model_validate_json((NODES / f"{name}.snapshot.json").read_text())


@pytest.fixture(scope="module")
def dgx_spec() -> Expectations:
    return spec_expectations(compile_workload(EXAMPLES / "llama3-70b-plan.yaml"), load_catalog(), "llama3-70b")


def status(check: NodeCheck) -> dict[str, str]:
    return {i.id: i.status for i in check.items}


def test_the_reader_finds_the_dgx_topology() -> None:
    r = node_report(snap("dgx-a01"))
    assert (r.hostname, r.sockets, r.cores, r.threads) == ("dgx-a01", 2, 112, 224)
    assert r.cpu_model == "Intel(R) Xeon(R) Platinum 8480C"
    assert [n.id for n in r.numa] == [0, 1] and len(r.numa[0].cpus) == 112
    assert len(r.gpus) == 8 and {g.model for g in r.gpus} == {"NVIDIA H100 80GB HBM3"}
    assert [g.numa_node for g in r.gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    rdma = [n for n in r.nics if n.rdma_device]
    assert len(rdma) == 8 and all(n.ports[0].rate_bits_per_s == 400e9 for n in rdma)
    assert {n.numa_node for n in rdma} == {0, 1} and all(n.netdevs for n in rdma)
    assert r.versions["nvidia_driver"] == "535.129.03" and r.versions["nccl"] == "2.18.5"
    assert r.versions["cuda"] == "12.2.2" and "nvidia_peermem" in r.modules
    assert r.cmdline == {"intel_iommu": "on", "iommu": "pt", "pci": "realloc=off"}   # only the relevant params
    assert r.memlock == ("unlimited", "unlimited") and r.transparent_hugepages == "madvise"
    assert r.kernel_named_netdevs == [] and r.disks_by_id == 2


def test_a_healthy_node_passes_every_item_it_can_show(dgx_spec: Expectations) -> None:
    s = status(check_node(node_report(snap("dgx-a01")), dgx_spec))
    assert "fail" not in s.values()
    assert s["collective_tests"] == NA and s["gpu_diagnostics"] == NA       # a node cannot show these
    assert s["rdma_transport"] == s["gpudirect_rdma"] == s["numa_cpu_affinity"] == "pass"
    assert list(s)[1:1 + len(dgx_spec.checklist)] == dgx_spec.checklist      # the spec's checklist, in order


def test_the_faults_of_each_node_are_the_ones_it_has(dgx_spec: Expectations) -> None:
    a02 = check_node(node_report(snap("dgx-a02")), dgx_spec)
    assert {k for k, v in status(a02).items() if v == "fail"} == {"rdma_transport", "gpudirect_rdma"}
    why = next(i.why for i in a02.items if i.id == "rdma_transport")
    assert "mlx5_3/1 1: DOWN" in why and "7 active compute ports" in why
    a03 = check_node(node_report(snap("dgx-a03")), dgx_spec)
    assert {k for k, v in status(a03).items() if v == "fail"} == {"pcie_links", "driver_consistency"}
    assert "16.0 GT/s PCIe x16 of 32.0 GT/s PCIe x16" in next(i.why for i in a03.items if i.id == "pcie_links")
    assert "1024 x 2048kB" in next(i.why for i in a03.items if i.id == "hugepages")


def test_a_single_node_spec_has_no_fabric_to_check() -> None:
    one = spec_expectations(compile_workload({"kind": "training", "model": {"preset": "llama3-8b"},
                                              "training": {"tokens": "1B"},
                                              "compute": {"accelerator": "h100-sxm", "gpus": 8}}),
                            load_catalog(), "one node")
    assert not one.multi_node
    s = status(check_node(node_report(snap("dgx-a02")), one))
    assert s["gpus_present"] == "pass" and s["gpudirect_rdma"] == NA
    assert "rdma_transport" not in s or s["rdma_transport"] == NA


def test_a_spec_for_other_hardware_fails_the_gpu_count_and_rate() -> None:
    e = Expectations(source="test", checklist=["rdma_transport"], vendor="amd", gpus_per_node=4,
                     nics_per_node=8, nic_bits_per_s=800e9, transport="roce")
    c = check_node(node_report(snap("dgx-a01")), e)
    s = status(c)
    assert s["gpus_present"] == "fail" and s["rdma_transport"] == "fail"
    why = next(i.why for i in c.items if i.id == "rdma_transport")
    assert "800 Gb/s" in why and "Ethernet" in why


def test_without_a_spec_presence_is_checked_not_counts() -> None:
    c = check_node(node_report(snap("dgx-a01")), default_expectations())
    assert "fail" not in status(c).values()
    assert "no sized spec" in c.expectations.source


def test_this_machine_yields_a_report_without_error() -> None:
    c = check_node(node_report(collect()), default_expectations())
    assert c.report.threads >= 1 and sum(c.summary.values()) == len(c.items)
    assert all(i.why for i in c.items)


def test_fleet_lists_what_differs_and_who_is_odd() -> None:
    checks = {p.stem: NodeCheck.model_validate_json(p.read_text()) for p in sorted((NODES / "fleet").glob("*.json"))}
    f = compare(checks)
    diff = {d.key: d for d in f.differences}
    assert set(diff) == {"gpu driver", "nic firmware", "rdma ports", "hugepages", "gpudirect modules"}
    assert diff["gpu driver"].majority == "535.129.03" and diff["gpu driver"].outliers == ["dgx-a02"]
    assert diff["hugepages"].outliers == ["dgx-a03"]
    assert f.identical["nccl"] == "2.18.5" and f.identical["gpus"] == "8"
    assert f.failing == {"driver_consistency": ["dgx-a03"], "gpudirect_rdma": ["dgx-a02"],
                         "pcie_links": ["dgx-a03"], "rdma_transport": ["dgx-a02"]}


def test_identical_nodes_have_no_differences() -> None:
    c = NodeCheck.model_validate_json((NODES / "fleet" / "dgx-a01.json").read_text())
    f = compare({"a": c, "b": c})
    assert f.differences == [] and f.failing == {}


def test_the_checks_a_node_cannot_run_carry_the_specs_acceptance_numbers(dgx_spec: Expectations) -> None:
    """The readiness checks the compile gave numbers to (engagement/acceptance.py) say them."""
    spec = compile_workload(EXAMPLES / "llama3-70b-plan.yaml")
    assert spec.acceptance is not None
    ar = next(t for t in spec.acceptance.targets if t.test.startswith("NCCL all-reduce"))
    items = {i.id: i for i in check_node(node_report(snap("dgx-a01")), dgx_spec).items}
    why = items["collective_tests"].why
    assert items["collective_tests"].status == NA and "pass when: NCCL all-reduce bus bandwidth" in why
    assert f"{ar.expected / 1e9:,.4g} GB/s" in why
    assert "GEMM throughput per GPU bf16 (the job's) >= " in items["gpu_diagnostics"].why
    assert "collective_tests" not in default_expectations().acceptance     # no spec: no numbers
