"""The typed sections of an HPC result: objective, compute, the simulation layer, scratch storage.

hpc/compile.py builds these as mappings; spine/serving.py validates them into these models, so
every key has its unit and description here. Every field is optional, and `extra="allow"` lets a
key added upstream through (tests/unit/test_result_types.py fails until its unit is declared).
"""

from __future__ import annotations

from typing import Any

from ..quantity import info, quantity
from .sections_inference import Open, PlacedCompute


class HpcObjective(Open):
    """Layer 1 (HPC): the problem, the steps, the target."""

    solver_class: str | None = info("solver class", default=None, headline=True)
    code: str | None = info("the code (informational)", default=None)
    problem_size: float | None = quantity("count", "problem size in the class's unit", default=None, headline=True)
    unit: str | None = info("the unit of the problem size", default=None, headline=True)
    precision: str | None = info("arithmetic precision", default=None)
    steps: float | None = quantity("count", "time steps (or iterations) to run", default=None, headline=True)
    timestep_s: float | None = quantity("s", "simulated time per step", default=None)
    total_flops: float | None = quantity("FLOP", "floating-point work of the run", default=None)
    total_bytes: float | None = quantity("B", "memory traffic of the run", default=None)
    time_to_solution_target_s: float | None = quantity("s", "time-to-solution target", default=None, headline=True)
    time_per_step_target_s: float | None = quantity("s", "the target as time per step", default=None)
    meets_target: bool | None = info("the run meets its target", default=None, headline=True)


class HpcCompute(PlacedCompute):
    """Layer 2 (HPC): the accelerator, its count, memory and host per GPU."""

    min_gpus_for_memory: int | None = quantity("count", "fewest GPUs whose memory holds the problem", default=None)
    memory_per_gpu_bytes: float | None = quantity("B", "device memory one GPU uses", default=None, headline=True)
    hbm_bytes: float | None = quantity("B", "HBM of one GPU", default=None)
    memory_headroom_bytes: float | None = quantity("B", "HBM left free", default=None)
    cpu_cores_per_gpu: float | None = quantity("count", "host CPU cores per GPU the system has", default=None)
    cpu_cores_per_gpu_needed: float | None = quantity("count", "host CPU cores per GPU the code needs",
                                                      default=None)
    host_memory_per_gpu_bytes: float | None = quantity("B", "host memory per GPU the system has", default=None)
    host_memory_per_gpu_needed_bytes: float | None = quantity("B", "host memory per GPU the code needs",
                                                              default=None)
    unified_memory: bool | None = info("CPU and GPU share one memory (GH200, MI300A)", default=None)
    warnings: list[str] | None = info("what the sizing cannot cover", default=None)


class Roofline(Open):
    formula: str | None = info("the roofline model", default=None)
    peak_flops: float | None = quantity("FLOP/s", "peak rate of the dominant kernel's precision", default=None)
    peak_basis: str | None = info("which catalog peak", default=None)
    sustained_flops_per_s: float | None = quantity("FLOP/s", "rate the kernel sustains", default=None)
    memory_bandwidth_bytes_per_s: float | None = quantity("B/s", "HBM bandwidth (catalog)", default=None)
    sustained_memory_bandwidth_bytes_per_s: float | None = quantity("B/s", "HBM bandwidth the kernel sustains",
                                                                    default=None)
    arithmetic_intensity_flop_per_byte: float | None = quantity("FLOP/B", "FLOPs per HBM byte of a step",
                                                                default=None)
    ridge_flop_per_byte: float | None = quantity("FLOP/B", "where compute and memory time meet", default=None)
    fitted_constants: str | None = info("where the fitted efficiencies live", default=None)
    amd_kernel_fraction: float | None = quantity("fraction", "AMD kernel efficiency relative to NVIDIA (fitted)",
                                                 default=None)


class HpcRates(Open):
    unit_steps_per_s: float | None = quantity("items/s", "units advanced one step per second", default=None)
    steps_per_s: float | None = quantity("1/s", "steps per second", default=None)
    mlups: float | None = quantity("1", "million lattice (cell) updates per second", default=None)
    ns_per_day: float | None = quantity("ns/day", "simulated nanoseconds per day (MD)", default=None)
    simulated_years_per_day: float | None = quantity("years/day", "simulated years per day (climate)",
                                                     default=None)


class HpcTargetOut(Open):
    time_per_step_target_s: float | None = quantity("s", "the target as time per step", default=None)
    gpus_needed: int | None = quantity("count", "fewest GPUs meeting the target", default=None)
    saturation_gpus: int | None = quantity("count", "where strong scaling stops paying", default=None)
    best_time_per_step_s: float | None = quantity("s", "fastest step any count reaches", default=None)


class StrongRow(Open):
    gpus: int | None = quantity("count", "GPUs", default=None)
    time_per_step_s: float | None = quantity("s", "time per step", default=None)
    speedup: float | None = quantity("1", "over the first row", default=None)
    efficiency: float | None = quantity("fraction", "t(g0) g0 / (t(g) g)", default=None)


class WeakRow(Open):
    gpus: int | None = quantity("count", "GPUs", default=None)
    units: float | None = quantity("count", "problem size at this count", default=None)
    time_per_step_s: float | None = quantity("s", "time per step", default=None)
    efficiency: float | None = quantity("fraction", "work per GPU-second relative to the first row", default=None)


class Scaling(Open):
    strong: list[StrongRow] | None = info("same problem on more GPUs", default=None)
    weak: list[WeakRow] | None = info("memory per GPU held", default=None)


class HostOut(Open):
    cpu_cores_per_gpu: float | None = quantity("count", "host CPU cores per GPU", default=None)
    cpu_cores_per_gpu_source: str | None = info("where that comes from", default=None)
    cpu_cores_per_gpu_needed: float | None = quantity("count", "host CPU cores per GPU needed", default=None)
    host_memory_per_gpu_bytes: float | None = quantity("B", "host memory per GPU", default=None)
    host_memory_per_gpu_source: str | None = info("where that comes from", default=None)
    host_memory_per_gpu_needed_bytes: float | None = quantity("B", "host memory per GPU needed", default=None)
    unified_memory: bool | None = info("CPU and GPU share one memory", default=None)


class HpcLayer(Open):
    """Layer 2b: the simulation step, where its time goes, and how it scales."""

    solver_class: str | None = info("solver class", default=None)
    time_per_step_s: float | None = quantity("s", "one time step", default=None, headline=True)
    bound: str | None = info("what bounds the step: compute, memory, network ...", default=None, headline=True)
    time_to_solution_s: float | None = quantity("s", "the whole run", default=None, headline=True)
    step_breakdown_s: dict[str, float] | None = quantity("s", "one step by term", default=None)
    communication_s: dict[str, float] | None = quantity("s", "communication per step, by pattern", default=None)
    flops_per_unit_step: float | None = quantity("FLOP", "work per unit per step", default=None)
    bytes_per_unit_step: float | None = quantity("B", "memory traffic per unit per step", default=None)
    memory_per_unit_bytes: float | None = quantity("B", "device memory per unit", default=None)
    roofline: Roofline | None = info("the dominant kernel on the roofline", default=None)
    rates: HpcRates | None = info("throughput in the class's terms", default=None, headline=True)
    target: HpcTargetOut | None = info("the GPU counts the target implies", default=None)
    target_detail: str | None = info("why the target is or is not met", default=None)
    scaling: Scaling | None = info("strong and weak scaling tables", default=None)
    host: HostOut | None = info("host CPU and memory sizing", default=None)


class HpcStorage(Open):
    """Layer 4 (HPC): scratch file system for output and checkpoints."""

    scratch_write_bandwidth_bytes_per_s: float | None = quantity("B/s", "scratch write bandwidth the run needs",
                                                                 default=None, headline=True)
    scratch_write_bandwidth_per_node_bytes_per_s: float | None = quantity("B/s", "the same per node",
                                                                          default=None)
    scratch_capacity_bytes: float | None = quantity("B", "scratch capacity for output and checkpoints",
                                                    default=None, headline=True)
    checkpoint_bytes: float | None = quantity("B", "one checkpoint", default=None, headline=True)
    checkpoint_interval_s: float | None = quantity("s", "time between checkpoints", default=None)
    checkpoints: int | None = quantity("count", "checkpoints over the run", default=None)
    output_bytes_per_step: float | None = quantity("B", "output written per step (mean)", default=None)
    output_total_bytes: float | None = quantity("B", "output of the whole run", default=None)
    scratch_write_bandwidth_pinned_per_node_bytes_per_s: float | None = quantity(
        "B/s", "per-node write bandwidth given in the intake", default=None)


SECTIONS: dict[str, Any] = {"objective": HpcObjective, "compute": HpcCompute, "hpc": HpcLayer,
                            "storage": HpcStorage}

__all__ = ["SECTIONS", "HpcCompute", "HpcLayer", "HpcObjective", "HpcStorage"]
