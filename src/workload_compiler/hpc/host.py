"""CPU cores and host memory per GPU: what the node design gives and what the run needs.

reference/hpc.md: "CPU cores per GPU is set by the node design, not by the GPU application";
published designs give 8 (Leonardo) to 72 (Grace) cores per GPU and, except the unified-memory
MI300A, at least as much host memory per GPU as HBM (Frontier 1x, GH200 1.25x, Leonardo 2x,
DGX H100 3.1x, Azure NC A100 v4 2.7x).
"""

from __future__ import annotations

from dataclasses import dataclass

from .device import Device

# What GPU-resident codes use per GPU (reference/hpc.md): GROMACS 7-32 threads (NHR@FAU: 8 for
# V100/A40, 16 for A100; LUMI 7 per GCD); NAMD 3 `+p` 2-4; AMBER pmemd 1 rank. ASSUMED for the
# other classes: one MPI rank per GPU plus one progress / I/O thread.
APP_CORES_PER_GPU: dict[str, int] = {"molecular_dynamics": 8}
DEFAULT_APP_CORES_PER_GPU = 2
# Published node designs when the catalog system lacks the figure (reference/hpc.md node table).
X86_CORES_PER_GPU = 14       # DGX H100 (Eos): 2 x 56 cores / 8 GPUs
GRACE_CORES_PER_GPU = 72     # JUPITER / Alps / Roihu GH200
HOST_MEMORY_PER_HBM = 2.0    # median of the published designs (1x-3.1x HBM per GPU)

HOST_FORMULA = "node design: cores and host memory per node / GPUs per node (hpc/host.py)"


@dataclass(frozen=True, kw_only=True)
class HostSizing:
    cpu_cores_per_gpu: float
    cpu_cores_per_gpu_source: str
    cpu_cores_per_gpu_needed: int
    host_memory_per_gpu_bytes: float
    host_memory_per_gpu_source: str
    host_memory_per_gpu_needed_bytes: float
    unified_memory: bool


def host_sizing(device: Device, solver_class: str, memory_per_gpu_bytes: float) -> HostSizing:
    """Cores and host memory per GPU of the node design; what the run needs per GPU.

    Needed host memory = the device memory the run uses (a full device state can be staged for a
    checkpoint or a restart); 0 on a unified-memory APU (no separate DRAM).
    """
    g = device.gpus_per_node
    if device.cpu_cores_per_node is not None:
        cores, cores_src = device.cpu_cores_per_node / g, f"catalog system {device.system_id}"
    elif "grace" in device.cpu.lower() or device.accelerator_id.startswith("gh"):
        cores, cores_src = float(GRACE_CORES_PER_GPU), "assumed: Grace node design (72 cores per GPU)"
    else:
        cores, cores_src = float(X86_CORES_PER_GPU), "assumed: x86 DGX H100 design (14 cores per GPU)"
    unified = device.host_memory_bytes_per_node == 0.0
    if device.host_memory_bytes_per_node is not None:
        mem, mem_src = device.host_memory_bytes_per_node / g, f"catalog system {device.system_id}"
    else:
        mem = HOST_MEMORY_PER_HBM * device.memory_bytes
        mem_src = f"assumed: {HOST_MEMORY_PER_HBM:g} x HBM per GPU (median of published node designs)"
    return HostSizing(
        cpu_cores_per_gpu=cores, cpu_cores_per_gpu_source=cores_src,
        cpu_cores_per_gpu_needed=APP_CORES_PER_GPU.get(solver_class, DEFAULT_APP_CORES_PER_GPU),
        host_memory_per_gpu_bytes=mem, host_memory_per_gpu_source=mem_src,
        host_memory_per_gpu_needed_bytes=0.0 if unified else memory_per_gpu_bytes,
        unified_memory=unified)
