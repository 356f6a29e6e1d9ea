"""The HPC / simulation intake (`kind: hpc`).

A solver class, a problem size in the class's unit, and what the run must do (steps, or a
simulated time and a timestep) by when. Everything else is optional: the class defaults fill it
(hpc/classes.py) and each fill is listed as an assumption.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ..errors import InputError, canonical_id
from ..hpc.classes import CLASS_ALIASES, SOLVER_CLASSES, HaloTransport, HpcPrecision, SolverClass
from ..units import Bytes, BytesPerSecond, Count, Seconds, parse_count, typed_as_text, validated_by
from . import limits as L
from .common import ClusterCompute, Strict
from .cost import CostIntake
from .infrastructure import FAILURE_KEYS, InfrastructureIntake, reject_unread
from .limits import limited, text


def parse_size(value: Any, field: str = "problem.size") -> float:
    """'1M' -> 1e6, '512^3' -> 134217728, '1024x512x256' -> their product."""
    if isinstance(value, str) and "^" in value:
        base, _, exp = value.partition("^")
        try:
            return math.pow(parse_count(base.strip(), field), parse_count(exp.strip(), field))
        except OverflowError:
            raise InputError(field, value, "a problem size within a float's range (e.g. 512^3)") from None
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

    solver_class: SolverClass = Field(alias="class", description="cfd_lbm | cfd_fv | molecular_dynamics | "
                                      "weather_climate | fft_spectral | dense_linear_algebra, or a common name of "
                                      "one (lbm, lattice-boltzmann, md, fft, hpl, linpack, weather, ...)")
    code: str | None = text(description="the code, e.g. GROMACS (informational)")
    neighbors_per_atom: float | None = limited(None, ge=L.MIN_COUNT_SMALL, le=L.MAX_COUNT_SMALL, why=L.COUNT_SMALL,
                                               description="MD: atoms inside the cut-off")
    cutoff_nm: float | None = limited(None, gt=0, le=100, why="100 nm: 50x the longest MD cut-offs (~2 nm)",
                                      description="MD: non-bonded cut-off, nm")
    iterations_per_step: float | None = limited(None, ge=L.MIN_COUNT_SMALL, le=L.MAX_COUNT_SMALL, why=L.COUNT_SMALL,
                                                description="cfd_fv: Krylov iterations")
    levels: int | None = limited(None, gt=0, le=100_000, why="10^5 vertical levels: 1,000x any weather model",
                                 description="weather_climate: vertical levels")
    transforms_per_step: float | None = limited(None, ge=L.MIN_COUNT_SMALL, le=L.MAX_COUNT_SMALL, why=L.COUNT_SMALL,
                                                description="fft_spectral: 3-D FFTs")

    @field_validator("solver_class", mode="before")
    @classmethod
    def _class_by_any_name(cls, value: Any) -> Any:
        """'Lattice-Boltzmann', 'MD', 'HPL': the class a common name means (hpc/classes.py CLASS_ALIASES)."""
        if not isinstance(value, str):
            return value
        key = str(canonical_id(value)).replace("-", "_").replace(" ", "_")
        return CLASS_ALIASES.get(key, key if key in SOLVER_CLASSES else value)   # an unknown name as written


class HpcProblem(Strict):
    size: ProblemSize = limited(gt=0, le=L.MAX_UNITS, why=L.UNITS,
                                description="units of the class: cells, atoms, grid points, N")
    unit: str | None = text()


class HpcProfile(Strict):
    flops_per_unit_step: Count | None = limited(
        None, ge=0, le=L.MAX_PER_UNIT, why=L.PER_UNIT,
        description="FLOPs per unit per step in all: the class's kernels are rescaled in proportion, each "
                    "keeping its share and its own roofline (hpc/classes.py with_overrides)")
    bytes_per_unit_step: Bytes | None = limited(
        None, ge=0, le=L.MAX_PER_UNIT, why=L.PER_UNIT,
        description="HBM bytes per unit per step in all: the class's kernels are rescaled in proportion")


class HpcCommunication(Strict):
    pattern: CommPatternIntake | list[CommPatternIntake] | None = None
    exchanges_per_step: float | None = limited(None, ge=L.MIN_COUNT_SMALL, le=L.MAX_COUNT_SMALL, why=L.COUNT_SMALL)
    halo_bytes_per_surface_unit: Bytes | None = limited(None, gt=0, le=L.MAX_PER_UNIT, why=L.PER_UNIT)
    bytes_per_unit: Bytes | None = limited(None, gt=0, le=L.MAX_PER_UNIT, why=L.PER_UNIT,
                                           description="all_to_all: per unit per transpose")
    message_bytes: Bytes | None = limited(None, gt=0, le=L.MAX_BYTES, why=L.BYTES,
                                          description="all_reduce: per message")
    halo_transport: HaloTransport | None = Field(
        default=None, description="gpu_direct (MPI/NCCL between GPUs, the default) or host_staged (halos "
        "copied through host memory, not overlapped: FluidX3D's OpenCL multi-GPU)")


class HpcTarget(Strict):
    time_to_solution: Seconds | None = limited(None, gt=0, le=L.MAX_DURATION, why=L.DURATION)
    ns_per_day: float | None = limited(None, ge=1e-6, le=1e9, why={
        "ge": "10^-6 ns/day: a femtosecond a day, below one MD time step", "le": "10^9 ns/day: 10^6x the fastest "
        "MD runs (~1 us/day)"}, description="MD: simulated ns per day")
    simulated_years_per_day: float | None = limited(None, ge=1e-6, le=1e6, why={
        "ge": "10^-6 SYPD: half a simulated minute a day", "le": "10^6 SYPD: 1,000x the fastest climate runs"},
        description="climate: SYPD")


class HpcIo(Strict):
    output_bytes_per_step: Bytes | None = limited(None, ge=0, le=L.MAX_BYTES, why=L.BYTES,
                                                  description="mean bytes written per step")
    output_bytes_per_unit: Bytes | None = limited(
        None, ge=0, le=L.MAX_PER_UNIT, why=L.PER_UNIT,
        description="bytes per unit of each output frame (every output_every_n_steps)")
    output_every_n_steps: int | None = limited(None, ge=1, le=int(L.MAX_STEPS), why=L.STEPS)
    checkpoint_every: Seconds | None = limited(None, ge=1, le=L.MAX_DURATION,
                                               why={"ge": "a second: no checkpoint writes faster", "le": L.DURATION})
    checkpoint_bytes_per_unit: Bytes | None = limited(None, ge=0, le=L.MAX_PER_UNIT, why=L.PER_UNIT)
    scratch_write_bandwidth_per_node: ByteRate | None = limited(None, ge=L.MIN_BANDWIDTH, le=L.MAX_BANDWIDTH,
                                                                why=L.BANDWIDTH)


class HpcCompute(ClusterCompute):
    """accelerator, system, gpus, max_gpus (intake/common.py): the search stays at or below max_gpus."""


class HpcWorkload(InfrastructureIntake):
    kind: Literal["hpc"]
    name: str | None = text()
    application: HpcApplication
    problem: HpcProblem
    profile: HpcProfile = Field(default_factory=HpcProfile)
    precision: HpcPrecision | None = None
    steps: Count | None = limited(None, ge=1, le=L.MAX_STEPS, why=L.STEPS)
    simulated_time: SimTime | None = limited(None, gt=0, le=L.MAX_SIM_TIME, why=L.SIM_TIME)
    timestep: SimTime | None = limited(None, ge=1e-21, le=L.MAX_SIM_TIME,
                                       why={"ge": "a zeptosecond: below any simulated process", "le": L.SIM_TIME})
    target: HpcTarget = Field(default_factory=HpcTarget)
    communication: HpcCommunication = Field(default_factory=HpcCommunication)
    compute: HpcCompute = Field(default_factory=HpcCompute)
    io: HpcIo = Field(default_factory=HpcIo)
    memory_per_unit_bytes: Bytes | None = limited(None, gt=0, le=L.MAX_PER_UNIT, why=L.PER_UNIT)
    cost: CostIntake | None = None

    @model_validator(mode="after")
    def _io_under_io(self) -> HpcWorkload:
        """An HPC run's scratch and checkpoints are sized from `io` (hpc/io.py); a `storage` or
        `reliability` key for a training run's would be dropped unread."""
        io_keys = ", ".join(HpcIo.model_fields)
        reject_unread("storage", self.storage, ("gpudirect_storage",),
                      f"not read for an HPC run: its scratch file system is sized from io ({io_keys}); of storage, "
                      "only gpudirect_storage applies")
        reject_unread("reliability", self.reliability, FAILURE_KEYS,
                      f"not read for an HPC run: its checkpoints are io.checkpoint_every ({io_keys}); of "
                      "reliability, only the failure rates apply: " + ", ".join(FAILURE_KEYS))
        return self

    @model_validator(mode="after")
    def _steps_in_range(self) -> HpcWorkload:
        """simulated_time / timestep is a step count: it is held to the same bound as `steps`."""
        if self.simulated_time is not None and self.timestep is not None and \
                self.simulated_time / self.timestep > L.MAX_STEPS:
            raise ValueError(f"simulated_time / timestep = {self.simulated_time / self.timestep:.3g} steps; at most "
                             f"{L.MAX_STEPS:.0e} ({L.STEPS})")
        return self
