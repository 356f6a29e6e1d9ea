"""The hardware catalog: entries load, match their sources, and lookups fail clearly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from shared_data import reference_dir, require
from workload_compiler.catalog.loader import DATA_DIR, Catalog, load_catalog, package_yaml
from workload_compiler.catalog.schema import Accelerator, Nic, PeakFlops, Switch, System, unmeasured_visible_bytes
from workload_compiler.errors import InputError

REFERENCE = reference_dir() / "hardware.yaml"

REQUIRED_ACCELERATORS = [
    "a100-sxm-40gb", "a100-sxm-80gb", "h100-sxm", "h100-pcie", "h800", "h200-sxm", "b200", "gb200",
    "b300", "gb300", "mi300x", "mi325x", "mi355x", "gaudi3", "l40s", "gh200", "mi250x-gcd", "mi250x",
    "mi300a", "v100", "h100-sxm-96gb",
]
REQUIRED_SYSTEMS = [
    "dgx-a100", "dgx-h100", "hgx-h100", "dgx-h200", "hgx-h200", "dgx-b200", "dgx-b300", "gb200-nvl72",
    "gb300-nvl72", "mi300x-oam-8", "h100-pcie-8", "l40s-8", "gaudi3-8", "mi355x-8", "gh200-1",
    "mi250x-4", "mi300a-4", "v100-8",
]
PRECISIONS = list(PeakFlops.model_fields)


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return load_catalog()


def _reference_gpus() -> dict[str, dict[str, Any]]:
    require(REFERENCE)
    return {g["id"]: g for g in yaml.safe_load(REFERENCE.read_text())["gpus"]}


def test_every_required_id_loads(cat: Catalog) -> None:
    for acc_id in REQUIRED_ACCELERATORS:
        assert cat.accelerator(acc_id).id == acc_id
    for sys_id in REQUIRED_SYSTEMS:
        assert cat.system(sys_id).id == sys_id


def test_every_entry_has_a_source(cat: Catalog) -> None:
    entries: list[Accelerator | System | Switch | Nic] = [
        *cat.accelerators.values(), *cat.systems.values(), *cat.switches.values(), *cat.nics.values()]
    for e in entries:
        assert e.source.strip(), e.id
        assert e.as_of, e.id


def test_h100_sxm_matches_nvidia_datasheet(cat: Catalog) -> None:
    """NVIDIA H100 datasheet (nvidia.com/en-us/data-center/h100): 1,979 TFLOPS BF16 *with sparsity*
    -> 989.4 dense (528 tensor cores x 1024 FLOP/clk x 1.83 GHz, Lockwood); HBM3 3.35 TB/s; NVLink
    900 GB/s bidirectional = 450 GB/s per direction."""
    h = cat.hardware("h100-sxm")
    assert h.peak_flops_bf16 == pytest.approx(528 * 1024 * 1.83e9, rel=1e-3)
    assert h.peak_flops_bf16 == 989.4e12
    assert h.hbm_bandwidth_bytes_per_s == 3.35e12
    assert h.scale_up_bandwidth_bytes_per_s == 900e9 / 2
    assert h.peak_flops_fp4 is None  # Hopper has no FP4: unknown stays unknown
    assert h.system_id == "dgx-h100"
    # DGX H100: 8x ConnectX-7 400 Gb/s for 8 GPUs = 50 GB/s per GPU per direction
    assert h.scale_out_bandwidth_bytes_per_s == 8 * 400e9 / 8 / 8


def test_measured_visible_memory_is_the_vendor_figure_read_as_gib(cat: Catalog) -> None:
    """Every driver-visible HBM capacity in the catalog (torch's 'total capacity of N GiB', each
    cited beside its number) sits within 2.6 GiB below the vendor's "GB" read as GiB: HBM stacks are
    binary and the driver keeps a share (H100 80 -> 79.11, B200 180 -> 178.35, GB300 279 -> 276.50,
    MI300X 192 -> 191.98). A figure entered in decimal bytes (B300 270e9 = 251 GiB) fails here.
    GDDR with ECC keeps more (L40S 48 -> 44.39 GiB)."""
    measured = {a.id: a for a in cat.accelerators.values() if a.memory_visible_bytes is not None}
    assert {"h100-sxm", "h200-sxm", "h800", "b200", "gb200", "b300", "gb300", "mi300x", "l40s"} <= set(measured)
    for a in measured.values():
        vendor_gib, visible_gib = a.memory_bytes / 1e9, a.process_memory_bytes / 2**30
        slack = 2.6 if a.memory_type.startswith("HBM") else 4.0
        assert vendor_gib - slack <= visible_gib <= vendor_gib, (a.id, vendor_gib, visible_gib)


def test_an_unmeasured_hbm_capacity_reads_the_vendor_gb_as_gib(cat: Catalog) -> None:
    """The rule for an accelerator nobody measured (catalog/schema.py unmeasured_visible_bytes) is
    within 1.1% of every measured HBM capacity; reading "GB" as 1e9 B is 5-7% short of them."""
    hbm = [a for a in cat.accelerators.values() if a.memory_visible_bytes and a.memory_type.startswith("HBM")]
    assert len(hbm) >= 15
    for a in hbm:
        assert unmeasured_visible_bytes(a.memory_bytes) == pytest.approx(a.memory_visible_bytes, rel=0.011), a.id
        assert a.memory_bytes < 0.95 * a.memory_visible_bytes, a.id


def test_dense_is_below_sparse_where_both_are_given(cat: Catalog) -> None:
    checked = 0
    for acc in cat.accelerators.values():
        if acc.peak_flops_sparse is None:
            continue
        for p in PRECISIONS:
            dense, sparse = getattr(acc.peak_flops, p), getattr(acc.peak_flops_sparse, p)
            if dense is not None and sparse is not None:
                assert dense < sparse, (acc.id, p)
                checked += 1
    assert checked > 20


def test_no_precision_filled_that_the_reference_leaves_null(cat: Catalog) -> None:
    ref = _reference_gpus()
    keys = {"fp64": "fp64_tflops", "fp64_tensor": "fp64_tensor_tflops", "fp32": "fp32_tflops",
            "tf32": "tf32_tflops_dense", "bf16": "bf16_tflops_dense", "fp8": "fp8_tflops_dense",
            "fp4": "fp4_tflops_dense", "int8": "int8_tops_dense"}
    transcribed = [a for a in cat.accelerators.values() if a.reference_id]
    assert len(transcribed) >= 15
    for acc in transcribed:
        g = ref[acc.reference_id or ""]
        for p in PRECISIONS:
            ours = getattr(acc.peak_flops, p)
            theirs = g.get(keys[p]) if p in keys else None
            if theirs is None:
                # Filled only where another source is cited for it (Accelerator.supplements).
                assert ours is None or f"peak_flops.{p}" in acc.supplements, \
                    f"{acc.id}.{p} filled but the reference has null"
            else:
                assert ours == pytest.approx(theirs * 1e12), (acc.id, p)
        assert acc.memory_bytes == pytest.approx(g["memory_gb"] * 1e9)
        assert acc.memory_bandwidth_bytes_per_s == pytest.approx(g["memory_bw_tbps"] * 1e12)
        assert acc.tdp_w == g["tdp_w"]
        bidir = g.get("scaleup_bw_gbps")
        per_direction = None if bidir is None else pytest.approx(bidir * 1e9 / 2)
        if not (bidir is None and "scale_up_bandwidth_bytes_per_s" in acc.supplements):
            assert acc.scale_up_bandwidth_bytes_per_s == per_direction
        assert acc.source == g["source"]


def test_supplements_only_fill_what_the_reference_leaves_null(cat: Catalog) -> None:
    """A supplement cites a source for a number the shared reference has as null; it never
    overrides a reference number, and the number it cites is really in the entry."""
    ref = _reference_gpus()
    keys = {"peak_flops.fp64": "fp64_tflops", "peak_flops.fp64_tensor": "fp64_tensor_tflops",
            "peak_flops.fp32": "fp32_tflops", "scale_up_bandwidth_bytes_per_s": "scaleup_bw_gbps",
            "pcie_bandwidth_bytes_per_s": "pcie"}
    supplemented = [a for a in cat.accelerators.values() if a.supplements]
    assert {"mi355x", "b200"} <= {a.id for a in supplemented}
    for acc in supplemented:
        for path, source in acc.supplements.items():
            assert source.strip(), (acc.id, path)
            obj: Any = acc
            for part in path.split("."):
                obj = getattr(obj, part)
            assert obj is not None, (acc.id, path)
            if acc.reference_id and path in keys:
                assert ref[acc.reference_id].get(keys[path]) is None, (acc.id, path)


def test_nvl72_is_eighteen_four_gpu_trays(cat: Catalog) -> None:
    """DGX GB200 user guide / RA: 18 compute trays x 4 GPUs, one 72-GPU NVLink domain, ~120 kW."""
    for sys_id in ("gb200-nvl72", "gb300-nvl72"):
        s = cat.system(sys_id)
        assert s.gpus_per_node * s.nodes_per_scale_up_domain == s.scale_up_domain_gpus == 72
        assert s.rack_power_w is not None and 100e3 < s.rack_power_w < 150e3
    assert cat.system("gb200-nvl72").rack_power_w == 120e3


def test_aliases_resolve_case_insensitively(cat: Catalog) -> None:
    for name in ("H100-SXM5-80GB", "h100_sxm", "H100", "A100-SXM4-80GB", "A100-80GB", " B200_HGX "):
        assert cat.accelerator(name).id in {"h100-sxm", "a100-sxm-80gb", "b200"}
    assert cat.accelerator("A100-80GB").id == "a100-sxm-80gb"
    assert cat.accelerator("H100 (SXM, 96GB HBM2e, 500W power limit)").id == "h100-sxm-96gb"
    assert cat.system("DGX_H100").id == "dgx-h100"
    assert cat.switch("QM9700").id == "quantum2-qm9700"


def test_unknown_id_error_lists_the_allowed_ids(cat: Catalog) -> None:
    with pytest.raises(InputError) as info:
        cat.accelerator("h100-sxm9")
    assert info.value.field == "compute.accelerator"
    assert info.value.value == "h100-sxm9"
    assert "a100-sxm-40gb, a100-sxm-80gb" in str(info.value)  # sorted list
    with pytest.raises(InputError, match="dgx-h100") as sys_info:
        cat.system("dgx-z100")
    assert sys_info.value.field == "compute.system"


def test_unknown_numbers_refuse_to_build_hardware(cat: Catalog) -> None:
    """torchtitan's 96 GB H100: peak unpublished ('between SXM and NVL', arXiv 2410.06511)."""
    assert cat.accelerator("h100-sxm-96gb").peak_flops.bf16 is None
    with pytest.raises(InputError, match=r"peak_flops\.bf16"):
        cat.hardware("h100-sxm-96gb")
    with pytest.raises(InputError, match="dgx-h100"):  # system holds another accelerator
        cat.hardware("h200-sxm", "dgx-h100")


def test_every_default_system_builds_hardware_or_names_what_is_missing(cat: Catalog) -> None:
    for acc_id in cat.default_systems:
        try:
            h = cat.hardware(acc_id)
        except InputError as exc:
            assert "user catalog" in str(exc)
            continue
        assert h.peak_flops_bf16 > 0 and h.hbm_bandwidth_bytes_per_s > 0
        assert h.scale_up_domain_gpus % h.gpus_per_node == 0 or h.gpus_per_node % h.scale_up_domain_gpus == 0


def test_user_dir_overrides_and_adds(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(
        """
accelerators:
- id: h100-sxm-96gb
  memory_bandwidth_bytes_per_s: 3.0e+12
  scale_up_bandwidth_bytes_per_s: 450.0e+9
  peak_flops: {bf16: 900.0e+12}
- id: my-gpu
  name: My GPU
  vendor: ACME
  architecture: X
  form_factor: PCIe
  memory_bytes: 1.0e+9
  memory_bandwidth_bytes_per_s: 1.0e+11
  tdp_w: 100.0
  peak_flops: {bf16: 1.0e+12}
  source: my lab
aliases:
  acme-1: my-gpu
""")
    cat = load_catalog(tmp_path)
    h = cat.hardware("h100-sxm-96gb")
    assert h.peak_flops_bf16 == 900e12 and h.tdp_w == 500.0  # merged over the package entry
    acc = cat.accelerator("h100-sxm-96gb")
    assert "user catalog" in acc.source and "peak_flops" in acc.source and "torchtitan" in acc.source
    assert cat.accelerator("ACME-1").name == "My GPU"
    assert load_catalog().accelerator("h100-sxm-96gb").peak_flops.bf16 is None  # default untouched


def test_user_dir_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("accelerators:\n- id: h100-sxm\n  tdp_w: -5\n")
    with pytest.raises(InputError, match="tdp_w"):
        load_catalog(tmp_path)
    (tmp_path / "bad.yaml").write_text("accelerator: []\n")  # singular: a typo, not another catalog
    with pytest.raises(InputError, match="hardware sections"):
        load_catalog(tmp_path)
    (tmp_path / "bad.yaml").write_text("cooling_types: []\n")  # another catalog's file: ignored
    assert load_catalog(tmp_path).accelerator("h100-sxm").tdp_w == 700.0
    with pytest.raises(InputError, match="existing directory"):
        load_catalog(tmp_path / "nope")


@pytest.mark.parametrize(("entry", "field", "reason"), [
    # a typo's magnitude (3.35e3 for 3.35e12 B/s) once reached an OverflowError in hpc/io.py scratch_plan
    ("accelerators:\n- id: h100-sxm\n  memory_bandwidth_bytes_per_s: 3.35e+3\n",
     "accelerators.h100-sxm.memory_bandwidth_bytes_per_s", "1 GB/s"),
    ("accelerators:\n- id: h100-sxm\n  peak_flops: {bf16: 1.0e-300}\n", "accelerators.h100-sxm.peak_flops.bf16",
     "1 GFLOP/s"),
    ("systems:\n- id: dgx-h100\n  scale_out_nic_bits_per_s: 1.0e-300\n", "systems.dgx-h100.scale_out_nic_bits_per_s",
     "0 NICs at 0 b/s"),
    ("systems:\n- id: dgx-h100\n  node_max_power_w: 0\n", "systems.dgx-h100.node_max_power_w", "1 W"),
])
def test_user_dir_numbers_are_bounded_with_their_reason(tmp_path: Path, entry: str, field: str, reason: str) -> None:
    (tmp_path / "mine.yaml").write_text(entry)
    with pytest.raises(InputError) as info:
        load_catalog(tmp_path)
    assert field in str(info.value) and reason in str(info.value) and "mine.yaml" in str(info.value)


def test_a_node_without_nics_cannot_span_nodes(tmp_path: Path) -> None:
    """A user system with no scale-out NIC: a run over two of its nodes is infeasible with the reason
    (it once divided by zero in hpc/comm.py and generic/compile.py)."""
    from workload_compiler import compile_workload
    (tmp_path / "mine.yaml").write_text("systems:\n- id: dgx-h100\n  scale_out_nics_per_node: 0\n"
                                       "  scale_out_nic_bits_per_s: 0\n")
    mine = load_catalog(tmp_path)
    hpc = compile_workload({"kind": "hpc", "application": {"class": "cfd_fv"}, "problem": {"size": 1e8},
                            "steps": 1000, "compute": {"accelerator": "h100-sxm", "gpus": 16}}, catalog=mine)
    assert hpc.feasible is False and "no scale-out NIC" in str(hpc.binding_constraint)
    example = Path(__file__).resolve().parents[2] / "examples" / "image-classifier-generic.yaml"
    generic = compile_workload({**yaml.safe_load(example.read_text()),
                                "compute": {"accelerator": "h100-sxm", "gpus": 16}}, catalog=mine)
    generic.model_dump_json()     # finite: a rate of zero never finishes, its time is unreachable
    training = compile_workload({"kind": "training", "model": {"preset": "llama3-8b"},
                                 "training": {"tokens": "10B", "seq_len": 4096},
                                 "compute": {"accelerator": "h100-sxm", "gpus": 16}}, catalog=mine)
    assert training.feasible is False and "no scale-out NIC" in str(training.binding_constraint)
    serving = compile_workload({"kind": "inference", "model": {"preset": "llama3-8b"},
                                "serving": {"input_tokens": 1000, "output_tokens": 200, "request_rate": "5/s"},
                                "compute": {"accelerator": "h100-sxm"}}, catalog=mine)
    assert serving.feasible     # replicas of one node each need no NIC between them
    assert serving.fabric["scale_out"]["tiers"] == 0
    # within one node nothing crosses a NIC: 4 GPUs run (an all-reduce once asked for the NICs anyway),
    # and a target no node can meet is bound by the missing NIC, not a GPU cap nobody set
    inside = {"kind": "hpc", "application": {"class": "cfd_fv"}, "problem": {"size": 1e7}, "steps": 1000,
              "compute": {"accelerator": "h100-sxm", "gpus": 4}}
    assert compile_workload(inside, catalog=mine).feasible
    rushed = compile_workload({**inside, "target": {"time_to_solution": "1s"}, "compute": {"accelerator": "h100-sxm"}},
                              catalog=mine)
    assert rushed.feasible is False and rushed.binding_constraint == "fabric"
    assert rushed.compute["gpus"] == 8 and "no scale-out NIC" in str(rushed.hpc["target_detail"])


def test_switches_nics_and_superpod_tables(cat: Catalog) -> None:
    qm = cat.switch("quantum2-qm9700")
    assert (qm.ports, qm.port_bits_per_s) == (64, 400e9)
    assert qm.switching_bits_per_s == qm.ports * qm.port_bits_per_s * 2  # 51.2 Tb/s counts both directions
    x800 = cat.switch("quantum-x800-q3400")
    assert (x800.ports, x800.port_bits_per_s) == (144, 800e9)
    for sid in ("spectrum4-sn5600", "spectrum4-sn5400", "sn4600c", "sn2201"):
        assert cat.switch(sid).ports > 0
    assert cat.nic("connectx7").port_bits_per_s == 400e9
    assert cat.nic("connectx8").port_bits_per_s == 800e9
    sus = {t["id"]: t for t in cat.tables["superpod_scalable_units"]}
    h100 = sus["dgx_superpod_h100"]
    assert h100["source"]
    # DGX H100 RA Table 4: GPUs = 8 x nodes in every row
    assert all(row["gpus"] == 8 * row["nodes"] for row in h100["compute_fabric_table"])


def test_package_yaml_loads_uncached() -> None:
    cat = load_catalog(DATA_DIR.parent / "data")  # uncached path: parse + validate everything
    assert cat.accelerator("h100-sxm").id == "h100-sxm"


def test_package_data_is_parsed_once_through_one_reader() -> None:
    """Compile start-up: every non-hardware data file (fabric, storage, reliability, facility,
    software, model presets) goes through `package_yaml`, which parses each file once per process."""
    from workload_compiler.arch import presets
    from workload_compiler.facility import data as facility
    from workload_compiler.software import data as software

    first = package_yaml("reliability.yaml")
    assert package_yaml("reliability.yaml") is first
    for cached in (facility.facility_data, software.software_data, presets._presets):
        cached.cache_clear()
    package_yaml.cache_clear()
    facility.facility_data()
    software.software_data()
    presets.list_presets()
    models = list((DATA_DIR / "models").glob("*.yaml"))
    assert len(models) == len(presets.list_presets()) >= 19
    # facility_power + facility_cooling + software_stacks + one file per preset
    assert package_yaml.cache_info().currsize == 3 + len(models)
    assert package_yaml.cache_info().hits == 0   # each file read exactly once
