"""Scratch I/O and host sizing (hpc/io.py, hpc/host.py)."""

import pytest

from workload_compiler.catalog.loader import load_catalog
from workload_compiler.hpc.device import hpc_device
from workload_compiler.hpc.host import host_sizing
from workload_compiler.hpc.io import CHECKPOINT_STALL_FRACTION, KEEP_CHECKPOINTS, IoLoad, io_time_per_step, scratch_plan

CAT = load_catalog()


def _load(bw: float | None = None) -> IoLoad:
    return IoLoad(output_bytes_per_step=1e6, checkpoint_bytes=90e9, checkpoint_interval_s=900.0,
                  write_bandwidth_per_node_bytes_per_s=bw, gpus_per_node=8)


def test_checkpoint_sets_the_write_bandwidth_and_capacity() -> None:
    plan = scratch_plan(_load(), step_s=0.01, steps=1e6, nodes=4)
    assert plan.write_bandwidth_bytes_per_s == pytest.approx(max(1e6 / 0.01, 90e9 / (CHECKPOINT_STALL_FRACTION * 900)))
    assert plan.write_bandwidth_per_node_bytes_per_s == pytest.approx(plan.write_bandwidth_bytes_per_s / 4)
    assert plan.capacity_bytes == pytest.approx(1e6 * 1e6 + KEEP_CHECKPOINTS * 90e9)


def test_pinned_scratch_stalls_the_step() -> None:
    """Frontier Orion measured ~1.2 GB/s write per node (calibration storage-frontier-orion)."""
    stall = io_time_per_step(_load(1.2e9), 16, 0.01)
    assert float(stall) == pytest.approx((1e6 + 90e9 * 0.01 / 900) / (1.2e9 * 2))
    assert float(io_time_per_step(_load(None), 16, 0.01)) == 0.0


def test_host_from_node_designs() -> None:
    """reference/hpc.md: GH200 nodes give 72 cores and 120 GB per GPU; MI300A has no separate DRAM."""
    gh = host_sizing(hpc_device(CAT, "gh200"), "molecular_dynamics", 1e9)
    assert gh.cpu_cores_per_gpu == 72 and gh.host_memory_per_gpu_bytes == pytest.approx(120e9)
    assert gh.cpu_cores_per_gpu_needed >= 7   # GROMACS uses 7-32 threads per GPU
    apu = host_sizing(hpc_device(CAT, "mi300a"), "cfd_fv", 50e9)
    assert apu.unified_memory and apu.host_memory_per_gpu_needed_bytes == 0.0
