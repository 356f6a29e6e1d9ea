"""The HPC / simulation intake (`kind: hpc`).

A solver class, a problem size in the class's unit, and what the run must do (steps, or a
simulated time and a timestep) by when. Everything else is optional: the class defaults fill it
(hpc/classes.py) and each fill is listed as an assumption.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from ..hpc.classes import HaloTransport, HpcPrecision, SolverClass
from ..units import Bytes, BytesPerSecond, Count, Seconds, parse_count, typed_as_text, validated_by
from .common import ClusterCompute, Strict
from .cost import CostIntake
from .infrastructure import InfrastructureIntake


def parse_size(value: Any, field: str = "problem.size") -> float:
    """'1M' -> 1e6, '512^3' -> 134217728, '1024x512x256' -> their product."""
    if isinstance(value, str) and "^" in value:
        base, _, exp = value.partition("^")
        return math.pow(parse_count(base.strip(), field), parse_count(exp.strip(), field))
    if isinstance(value, str) and re.fullmatch(r"[^x]+(x[^x]+)+", value.strip()):
        return math.prod(parse_count(p.strip(), field) for p in value.split("x"))
    return parse_count(value, field)


# A simulated time ("2fs", "100ns", "10y") parses like any duration.
SimTime = Seconds
ProblemSize = Annotated[float, validated_by(parse_size), typed_as_text("count", "20M", "512^3", "1024x512x256")]
ByteRate = BytesPerSecond
CommPatternIntake = Literal["halo", "all_to_all", "all_reduce"]


class HpcApplication(Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    solver_class: SolverClass = Field(alias="class")
    code: str | None = Field(default=None, description="the code, e.g. GROMACS (informational)")
    neighbors_per_atom: float | None = Field(default=None, gt=0, description="MD: atoms inside the cut-off")
    cutoff_nm: float | None = Field(default=None, gt=0, description="MD: non-bonded cut-off, nm")
    iterations_per_step: float | None = Field(default=None, gt=0, description="cfd_fv: Krylov iterations")
    levels: int | None = Field(default=None, gt=0, description="weather_climate: vertical levels")
    transforms_per_step: float | None = Field(default=None, gt=0, description="fft_spectral: 3-D FFTs")


class HpcProblem(Strict):
    size: ProblemSize = Field(gt=0, description="units of the class: cells, atoms, grid points, N")
    unit: str | None = None


class HpcProfile(Strict):
    flops_per_unit_step: Count | None = Field(default=None, ge=0)
    bytes_per_unit_step: Bytes | None = Field(default=None, ge=0)


class HpcCommunication(Strict):
    pattern: CommPatternIntake | list[CommPatternIntake] | None = None
    exchanges_per_step: float | None = Field(default=None, gt=0)
    halo_bytes_per_surface_unit: Bytes | None = Field(default=None, gt=0)
    bytes_per_unit: Bytes | None = Field(default=None, gt=0, description="all_to_all: per unit per transpose")
    message_bytes: Bytes | None = Field(default=None, gt=0, description="all_reduce: per message")
    halo_transport: HaloTransport | None = Field(
        default=None, description="gpu_direct (MPI/NCCL between GPUs, the default) or host_staged (halos "
        "copied through host memory, not overlapped: FluidX3D's OpenCL multi-GPU)")


class HpcTarget(Strict):
    time_to_solution: Seconds | None = Field(default=None, gt=0)
    ns_per_day: float | None = Field(default=None, gt=0, description="MD: simulated ns per day")
    simulated_years_per_day: float | None = Field(default=None, gt=0, description="climate: SYPD")


class HpcIo(Strict):
    output_bytes_per_step: Bytes | None = Field(default=None, ge=0, description="mean bytes written per step")
    output_bytes_per_unit: Bytes | None = Field(
        default=None, ge=0, description="bytes per unit of each output frame (every output_every_n_steps)")
    output_every_n_steps: int | None = Field(default=None, ge=1)
    checkpoint_every: Seconds | None = Field(default=None, gt=0)
    checkpoint_bytes_per_unit: Bytes | None = Field(default=None, ge=0)
    scratch_write_bandwidth_per_node: ByteRate | None = Field(default=None, gt=0)


class HpcCompute(ClusterCompute):
    """accelerator, system, gpus, max_gpus (intake/common.py): the search stays at or below max_gpus."""


class HpcWorkload(InfrastructureIntake):
    kind: Literal["hpc"]
    name: str | None = None
    application: HpcApplication
    problem: HpcProblem
    profile: HpcProfile = Field(default_factory=HpcProfile)
    precision: HpcPrecision | None = None
    steps: Count | None = Field(default=None, gt=0)
    simulated_time: SimTime | None = Field(default=None, gt=0)
    timestep: SimTime | None = Field(default=None, gt=0)
    target: HpcTarget = Field(default_factory=HpcTarget)
    communication: HpcCommunication = Field(default_factory=HpcCommunication)
    compute: HpcCompute = Field(default_factory=HpcCompute)
    io: HpcIo = Field(default_factory=HpcIo)
    memory_per_unit_bytes: Bytes | None = Field(default=None, gt=0)
    cost: CostIntake | None = None
