"""The profiling exercise's parts: the data set round-trips, the FLOP count follows its formula, the
statistics, the machine readers over fixture text, and the sheet writer."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest
import yaml

from workload_compiler.catalog.loader import load_catalog
from workload_compiler.intake.measured import MachineRef, MeasuredIntake, MeasuredValue
from workload_compiler.measure import dataset as ds
from workload_compiler.measure.apply import entry
from workload_compiler.measure.linux import (
    mount_of,
    parse_cmdline,
    parse_cpuinfo,
    parse_cpulist,
    parse_limits,
    parse_meminfo,
    parse_mounts,
    parse_os_release,
    selected_word,
)
from workload_compiler.measure.machine import machine_info, storage_info
from workload_compiler.measure.profile import Spread, dataset_info, run_profile
from workload_compiler.measure.sheet import with_measured

X86 = ("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13 64-Core Processor\nphysical id\t: 0\n"
       "core id\t\t: 0\nflags\t\t: fpu avx2\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n"
       "physical id\t: 0\ncore id\t\t: 0\n\nprocessor\t: 2\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n"
       "physical id\t: 1\ncore id\t\t: 0\n")
ARM = "processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n"


def test_dataset_round_trips_every_format(tmp_path: Path) -> None:
    files = ds.write_dataset(tmp_path, 600_000, ds.FORMATS, seed=3)
    assert [f.fmt for f in files] == list(ds.FORMATS)
    for f in files:
        assert f.bytes == sum(p.stat().st_size for p in f.paths) and f.bytes >= 200_000
        rec = ds.parse(f.fmt, ds.read_files(f.paths))
        if f.fmt == "image":
            assert rec.images is not None and rec.images.shape == (len(f.paths), 64, 64, 3)
        else:
            assert rec.features is not None and rec.features.shape == (rec.count, ds.FEATURES) and rec.count > 500
    again = ds.write_dataset(tmp_path / "again", 600_000, ds.FORMATS, seed=3)
    assert [p.read_bytes() for p in again[0].paths] == [p.read_bytes() for p in files[0].paths]   # seeded
    found = ds.find_dataset(tmp_path / "again")
    assert [(f.fmt, f.bytes) for f in found] == [(f.fmt, f.bytes) for f in again]


def test_ppm_decode_returns_the_pixels_written() -> None:
    blob = ds.ppm_image(np.random.default_rng(0))
    img = ds.parse("image", [blob]).images
    assert img is not None
    assert img[0].tobytes() == blob[len(b"P6\n64 64\n255\n"):]


def test_compute_counts_flops_by_its_formula() -> None:
    rng = np.random.default_rng(0)
    tab = ds.Records(count=10, features=np.ones((10, ds.FEATURES), dtype=np.float32))
    assert ds.compute(tab, rng) == 10 * (4 * 16 + 2 * 16 * 64 + 64 + 2 * 64 * 10)
    img = ds.Records(count=2, images=np.zeros((2, 64, 64, 3), dtype=np.uint8))
    assert ds.compute(img, rng) == 2 * (3 * 12288 + 2 * 12288 * 64)
    assert ds.compute(ds.Records(count=0), rng) == 0.0


def test_the_timed_compute_stage_draws_no_random_weights() -> None:
    """The weights are drawn once before the repeats: a timed repeat is the arithmetic alone."""
    img = ds.Records(count=2, images=np.zeros((2, 64, 64, 3), dtype=np.uint8))
    rng = np.random.default_rng(0)
    w = ds.weights_for(img, rng)
    state = rng.bit_generator.state
    assert ds.compute(img, rng, w) == 2 * (3 * 12288 + 2 * 12288 * 64)
    assert rng.bit_generator.state == state


def test_spread_statistics() -> None:
    s = Spread.of([1.0, 2.0, 3.0, 10.0])
    assert (s.median_s, s.min_s, s.max_s) == (2.5, 1.0, 10.0)
    assert s.stdev_s == pytest.approx(np.std([1, 2, 3, 10], ddof=1))
    assert s.relative == pytest.approx(s.stdev_s / 2.5)


def test_linux_readers_over_fixture_text() -> None:
    cpu = parse_cpuinfo(X86)
    assert (cpu.model, cpu.sockets, cpu.cores, cpu.threads) == ("AMD EPYC 7B13 64-Core Processor", 2, 2, 3)
    assert "avx2" in cpu.flags
    arm = parse_cpuinfo(ARM)
    assert arm.model == "arm implementer 0x41 part 0xd4f" and arm.threads == 1
    assert parse_meminfo("MemTotal:       16384 kB\nHugePages_Total:       4\n") == {
        "MemTotal": 16384 * 1024.0, "HugePages_Total": 4.0}
    assert parse_os_release('PRETTY_NAME="Ubuntu 22.04.3 LTS"\n# c\nID=ubuntu\n') == {
        "PRETTY_NAME": "Ubuntu 22.04.3 LTS", "ID": "ubuntu"}
    assert parse_cpulist("0-2,8,10-11\n") == [0, 1, 2, 8, 10, 11] and parse_cpulist("") == []
    mounts = parse_mounts("/dev/vda / ext4 rw 0 0\n/dev/nvme0n1p1 /data\\040x xfs rw,noatime 0 0\n")
    assert mount_of("/data x/set", mounts) is not None and mount_of("/data x/set", mounts).fstype == "xfs"  # type: ignore[union-attr]
    assert mount_of("/srv/fixture", mounts).mountpoint == "/"  # type: ignore[union-attr]
    assert parse_cmdline("ro iommu=pt quiet -- --init-arg=1") == {"ro": "", "iommu": "pt", "quiet": ""}
    limits = parse_limits("Limit                     Soft Limit           Hard Limit           Units     \n"
                          "Max locked memory         8388608              unlimited            bytes     \n")
    assert limits["Max locked memory"] == ("8388608", "unlimited")
    assert selected_word("always [madvise] never") == "madvise"


def test_machine_info_from_files() -> None:
    files = {"/proc/cpuinfo": X86, "/proc/meminfo": "MemTotal: 1024 kB\n", "/etc/os-release": "PRETTY_NAME=Test OS\n",
             "/proc/mounts": "/dev/nvme0n1p2 / ext4 rw 0 0\n",
             "/sys/devices/pci/nvme/nvme0n1/nvme0n1p2/partition": "2\n",
             "/sys/block/nvme0n1/device/model": "SAMSUNG MZ1L2\n", "/sys/block/nvme0n1/queue/rotational": "0\n"}
    links = {"/sys/dev/block/259:2": "/sys/devices/pci/nvme/nvme0n1/nvme0n1p2"}
    storage = storage_info("/data/run", (259, 2), files.get, links.get)   # a fixture path, read through files
    assert (storage.device, storage.model, storage.rotational, storage.filesystem) == ("nvme0n1", "SAMSUNG MZ1L2",
                                                                                        False, "ext4")
    m = machine_info(files.get, storage, hostname="h", kernel="6.1", python="CPython 3.12", libraries={"numpy": "2"})
    assert m.cpu_model == "AMD EPYC 7B13 64-Core Processor" and m.memory_bytes == 1024 * 1024 and m.os == "Test OS"
    ref = m.ref()
    assert ref.kind == "cpu" and ref.id == m.cpu_model and "nvme0n1" in (ref.name or "")


def test_a_profile_run_times_every_stage_and_its_values_pass_the_intake_checks(tmp_path: Path) -> None:
    files = ds.write_dataset(tmp_path, 300_000, ds.FORMATS, seed=0)
    storage = storage_info(str(tmp_path), None, {}.get, {}.get)
    m = machine_info({"/proc/cpuinfo": X86}.get, storage, hostname="h", kernel="k", python="p", libraries={})
    r = run_profile(files, m, repeats=3, dataset=dataset_info(files, "generated", tmp_path, 0), tool="wkc profile t",
                    today=dt.date(2026, 5, 1))
    assert {(s.format, s.stage) for s in r.stages} == {(f, st) for f in ds.FORMATS for st in ("read", "parse",
                                                                                              "compute")}
    assert all(len(s.time.samples_s) == 3 and s.time.min_s <= s.time.median_s <= s.time.max_s for s in r.stages)
    assert "GPU training speed" in r.does_not_predict
    cat = load_catalog()
    for key, v in r.values.items():
        e = entry(key, v, cat, "intake")
        assert e.spec.kind == "cpu" and v.machine.id == m.cpu_model and v.repeats == 3
    parse_rate = r.values["host.parse_records_per_s_per_core.json"].value
    json_stage = next(s for s in r.stages if s.format == "json" and s.stage == "parse")
    assert parse_rate == pytest.approx(json_stage.work / json_stage.time.median_s, rel=1e-3)


def _value(v: float) -> MeasuredValue:
    return MeasuredValue(value=v, unit="B/s", machine=MachineRef(kind="cpu", id="X"), date=dt.date(2026, 5, 1),
                         tool="t")


def test_the_sheet_writer_replaces_only_the_measured_block() -> None:
    text = ("# my intake\nkind: training   # keep\nmeasured:\n  calibration_dir: cal\n  values:\n"
            "    host.read_bytes_per_s: {value: 1, unit: B/s, machine: {kind: cpu, id: X}, date: 2026-01-01, "
            "tool: t}\n    host.compute_flops_per_s: {value: 9e9, unit: FLOP/s, machine: {kind: cpu, id: X}, "
            "date: 2026-01-01, tool: t}\nfacility:\n  power: 2MW  # hall\n")
    new = with_measured(text, {"host.read_bytes_per_s": _value(5.0)})
    assert new.startswith("# my intake\nkind: training   # keep\n")
    assert new.endswith("facility:\n  power: 2MW  # hall\n")
    block = MeasuredIntake.model_validate(yaml.safe_load(new)["measured"])
    assert block.values["host.read_bytes_per_s"].value == 5.0                 # replaced
    assert block.values["host.compute_flops_per_s"].value == 9e9              # kept
    assert str(block.calibration_dir) == "cal"
    appended = with_measured("kind: hpc\n", {"host.read_bytes_per_s": _value(2.0)})
    assert yaml.safe_load(appended)["kind"] == "hpc" and "measured" in yaml.safe_load(appended)


def test_on_a_memory_filesystem_no_storage_read_rate_is_claimed(tmp_path: Path) -> None:
    files = ds.write_dataset(tmp_path, 100_000, ["csv"], seed=0)
    storage = storage_info(str(tmp_path), None, {"/proc/mounts": f"tmpfs {tmp_path} tmpfs rw 0 0\n"}.get, {}.get)
    assert storage.filesystem == "tmpfs"
    m = machine_info({"/proc/cpuinfo": X86}.get, storage, hostname="h", kernel="k", python="p", libraries={})
    r = run_profile(files, m, repeats=2, dataset=dataset_info(files, "generated", tmp_path, 0), tool="t")
    assert not r.page_cache_dropped and "host.read_bytes_per_s" not in r.values
    assert "host.parse_records_per_s_per_core.csv" in r.values
