"""Solver-class defaults: work, memory traffic, communication and memory per unit per step.

A `Profile` says what one step of a solver costs per unit of problem size (a cell, an atom, a
grid point, a matrix row): the kernels it runs (FLOPs and HBM bytes each), the exchanges between
GPUs, the device memory and the checkpoint state per unit. Every default here is an ASSUMPTION
with its source in `Profile.sources`; the compiler lists it unless the intake gives the value.
Sizes whose cost is not linear in the unit (FFT: log N; dense LU: N^2 per row) take the total
size, so a profile is built for one problem size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

from ..errors import InputError
from .fitted import FITTED, HpcConstants

SolverClass = Literal["cfd_lbm", "cfd_fv", "molecular_dynamics", "weather_climate", "fft_spectral",
                      "dense_linear_algebra"]
SOLVER_CLASSES: tuple[str, ...] = get_args(SolverClass)
# What people call the classes (lower case, '-' and ' ' read as '_'): the intake takes these too.
CLASS_ALIASES: dict[str, str] = {
    "lbm": "cfd_lbm", "lattice_boltzmann": "cfd_lbm", "fv": "cfd_fv", "finite_volume": "cfd_fv",
    "md": "molecular_dynamics", "weather": "weather_climate", "climate": "weather_climate", "nwp": "weather_climate",
    "fft": "fft_spectral", "spectral": "fft_spectral", "hpl": "dense_linear_algebra", "linpack": "dense_linear_algebra",
    "dense_la": "dense_linear_algebra", "lu": "dense_linear_algebra"}
HpcPrecision = Literal["fp64", "fp32", "fp16", "bf16", "mixed"]
CommPattern = Literal["halo", "all_to_all", "all_reduce", "broadcast"]
HaloTransport = Literal["gpu_direct", "host_staged"]   # halos GPU to GPU, or copied through host memory
Code = Literal["application", "fft_library", "benchmark"]   # whose kernel it is (AMD shares, hpc/fitted.py)

UNITS: dict[str, str] = {"cfd_lbm": "cells", "cfd_fv": "cells", "molecular_dynamics": "atoms",
                         "weather_climate": "grid_points", "fft_spectral": "grid_points",
                         "dense_linear_algebra": "matrix_order"}
_VALUE_BYTES = {"fp64": 8, "fp32": 4, "mixed": 4, "fp16": 2, "bf16": 2}
_PRECISIONS: dict[str, tuple[str, ...]] = {
    "cfd_lbm": ("fp32", "fp64", "fp16", "bf16", "mixed"), "cfd_fv": ("fp64", "fp32", "mixed"),
    "molecular_dynamics": ("mixed", "fp32", "fp64"), "weather_climate": ("fp64", "fp32", "mixed"),
    "fft_spectral": ("fp64", "fp32", "fp16", "mixed"),
    "dense_linear_algebra": ("fp64", "fp32", "mixed", "fp16", "bf16")}

# MD geometry of the GROMACS STMV benchmark (Páll et al. 2020, calibration gromacs-stmv-*):
# 1.2 nm cut-offs, 0.15 nm PME grid; water holds ~100 atoms/nm^3 (33.4 molecules x 3 atoms).
MD_CUTOFF_NM = 1.2
MD_ATOMS_PER_NM3 = 100.0
MD_PME_SPACING_NM = 0.15
# GROMACS flop accounting, nrnb.cpp: "NxN Ewald Elec. + LJ [F]" = 66 FLOPs per pair.
MD_FLOPS_PER_PAIR = 66.0
# Codes the MD constants were fitted on (hpc/fitted.py: single-GPU GROMACS and AMBER pmemd records),
# and the code whose 1- vs N-GPU runs give the Amdahl share (md_serial_fraction). Another code
# (NAMD, LAMMPS, OpenMM) runs the same physics at its own efficiency, which no record calibrates.
MD_CALIBRATED_CODES = ("gromacs", "amber")
MD_SCALING_CODES = ("gromacs",)
WEATHER_LEVELS = 90.0   # ASSUMED vertical levels (ICON NWP configurations use ~90)
FV_ITERATIONS = 50.0    # ASSUMED Krylov iterations per implicit time step (pressure + momentum)
FFT_TRANSFORMS = 1.0    # ASSUMED 3-D FFTs per step (a benchmark; a DNS step does ~10)
# Class options the intake may give; absent ones take these defaults (recorded as assumptions).
OPTION_DEFAULTS = {"cutoff_nm": MD_CUTOFF_NM, "iterations_per_step": FV_ITERATIONS, "levels": WEATHER_LEVELS,
                   "transforms_per_step": FFT_TRANSFORMS}


@dataclass(frozen=True, kw_only=True)
class Kernel:
    """One kernel of a step: FLOPs and HBM bytes per unit; `compute` picks the peak it runs on."""

    name: str
    flops_per_unit: float
    bytes_per_unit: float
    compute: Literal["gemm", "vector", "md_pair"] = "vector"
    access: Literal["stream", "stencil"] = "stream"
    code: Code = "application"


@dataclass(frozen=True, kw_only=True)
class Exchange:
    """One communication pattern of a step.

    `bytes`: halo = per surface unit per exchange; all_to_all = per unit per transpose;
    all_reduce = per message; broadcast = for the whole problem per step (a GPU moves bytes/sqrt(g)).
    """

    pattern: CommPattern
    per_step: float
    bytes: float
    fft_points_per_unit: float = 1.0   # all_to_all: FFT grid points per unit (slab or pencil)
    transport: HaloTransport = "gpu_direct"


@dataclass(frozen=True, kw_only=True)
class ClassOptions:
    """Class-specific knobs from the intake; None = use the class default (an assumption)."""

    neighbors_per_atom: float | None = None
    cutoff_nm: float | None = None
    iterations_per_step: float | None = None
    levels: float | None = None
    transforms_per_step: float | None = None


@dataclass(frozen=True, kw_only=True)
class Profile:
    solver_class: str
    unit: str
    precision: str
    arithmetic: Literal["fp64", "fp32", "fp16"]   # precision of the FLOPs: which peak they run on
    value_bytes: int
    kernels: tuple[Kernel, ...]
    exchanges: tuple[Exchange, ...]
    memory_per_unit_bytes: float
    checkpoint_bytes_per_unit: float
    launches_per_step: float
    decomposition_dims: int = 3          # 3: volume decomposition; 2: horizontal columns
    levels: float = 1.0                  # vertical levels per column (2-D decomposition)
    memory_exponent: int = 1             # total device memory grows as units ** exponent
    overlap_communication: bool = False  # look-ahead hides communication behind compute
    serial_fraction: float = 0.0         # Amdahl: share of the one-GPU step that does not divide
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def flops_per_unit_step(self) -> float:
        return sum(k.flops_per_unit for k in self.kernels)

    @property
    def bytes_per_unit_step(self) -> float:
        return sum(k.bytes_per_unit for k in self.kernels)


def check_precision(solver_class: str, precision: str) -> None:
    allowed = _PRECISIONS[solver_class]
    if precision not in allowed:
        raise InputError("precision", precision, f"for {solver_class} one of: {', '.join(allowed)}")


def md_neighbors(cutoff_nm: float, atoms_per_nm3: float = MD_ATOMS_PER_NM3) -> float:
    """Atoms inside the cut-off sphere: rho * 4/3 pi r_c^3."""
    return atoms_per_nm3 * 4.0 / 3.0 * math.pi * cutoff_nm**3


def class_profile(solver_class: str, precision: str, units: float,
                  options: ClassOptions | None = None, c: HpcConstants = FITTED) -> Profile:
    """The default profile of a class for one problem size (units) and precision; `c` holds the
    fitted MD constants (bytes per atom-step, serial fraction)."""
    if solver_class not in SOLVER_CLASSES:
        raise InputError("application.class", solver_class, "one of: " + ", ".join(SOLVER_CLASSES))
    check_precision(solver_class, precision)
    opts = options or ClassOptions()
    vb = _VALUE_BYTES[precision]
    if solver_class == "molecular_dynamics":
        return _md(precision, vb, opts, c)
    build = {"cfd_lbm": _lbm, "cfd_fv": _fv, "weather_climate": _weather,
             "fft_spectral": _fft, "dense_linear_algebra": _dla}[solver_class]
    return build(precision, vb, units, opts)


def _arith(precision: str) -> Literal["fp64", "fp32"]:
    return "fp64" if precision == "fp64" else "fp32"


def _lbm(precision: str, vb: int, units: float, o: ClassOptions) -> Profile:
    src = ("FluidX3D README (calibration rot-lbm-bytes-flops-per-cell): D3Q19 esoteric-pull, 19 DDFs "
           "read + written per cell (38 values) + 1 flag byte; FP32 153 B / 363 FLOPs, FP16S 77 B / "
           "406 FLOPs; FP64 the same layout at 8 B")
    flops = 406.0 if vb == 2 else 363.0
    return Profile(
        solver_class="cfd_lbm", unit="cells", precision=precision, arithmetic=_arith(precision),
        value_bytes=vb, kernels=(Kernel(name="stream_collide", flops_per_unit=flops,
                                        bytes_per_unit=38.0 * vb + 1.0, access="stencil"),),
        exchanges=(Exchange(pattern="halo", per_step=1.0, bytes=5.0 * vb),),
        memory_per_unit_bytes=19.0 * vb + 17.0, checkpoint_bytes_per_unit=19.0 * vb + 1.0,
        launches_per_step=1.0,
        sources={"flops_per_unit_step": src, "bytes_per_unit_step": src,
                 "memory_per_unit_bytes": "FluidX3D: 19 DDFs + density/velocity (4 x FP32) + flags "
                                           "= 93 B (FP32) / 55 B (FP16S)",
                 "communication": "D3Q19: 5 DDFs cross each face per step (halo, 1 exchange)",
                 "checkpoint_bytes_per_unit": "the DDFs and flags (the state a restart needs)"})


def _fv(precision: str, vb: int, units: float, o: ClassOptions) -> Profile:
    iters = o.iterations_per_step or FV_ITERATIONS
    nnz = 7.0   # hexahedral cells: the cell and its 6 face neighbours
    # One CG iteration per cell: SpMV (nnz values + 4 B indices, read p, write y), 2 dot
    # products (3 reads), 3 axpys (3 x 3 accesses) = nnz (vb + 4) + 14 vb bytes, 2 nnz + 10 FLOPs.
    it_bytes = nnz * (vb + 4.0) + 14.0 * vb
    src = (f"derived: {iters:g} Krylov iterations per step (pressure + momentum, assumed) x one CG "
           f"iteration on a 7-point matrix (SpMV + 2 dots + 3 axpys) = {it_bytes:g} B and "
           f"{2 * nnz + 10:g} FLOPs per cell per iteration")
    return Profile(
        solver_class="cfd_fv", unit="cells", precision=precision, arithmetic=_arith(precision),
        value_bytes=vb, kernels=(Kernel(name="krylov", flops_per_unit=iters * (2 * nnz + 10),
                                        bytes_per_unit=iters * it_bytes, access="stencil"),),
        exchanges=(Exchange(pattern="halo", per_step=iters, bytes=float(vb)),
                   Exchange(pattern="all_reduce", per_step=2.0 * iters, bytes=float(vb))),
        memory_per_unit_bytes=nnz * (vb + 4.0) + 30.0 * vb, checkpoint_bytes_per_unit=10.0 * vb,
        launches_per_step=6.0 * iters,   # per iteration: SpMV, 2 dots, 3 axpys
        sources={"flops_per_unit_step": src, "bytes_per_unit_step": src,
                 "iterations_per_step": "assumed 50 Krylov iterations per time step",
                 "memory_per_unit_bytes": "derived: the 7-point matrix + 30 cell arrays (fields, "
                                           "geometry, Krylov vectors); assumed",
                 "communication": "one halo value per face cell and 2 dot-product all-reduces per "
                                  "Krylov iteration (reference/hpc.md: latency-bound, alpha log p)",
                 "checkpoint_bytes_per_unit": "assumed 10 cell fields (velocity, pressure, "
                                              "turbulence, temperature)"})


def _md(precision: str, vb: int, o: ClassOptions, c: HpcConstants) -> Profile:
    cutoff = o.cutoff_nm or MD_CUTOFF_NM
    neighbors = o.neighbors_per_atom or md_neighbors(cutoff)
    layers = cutoff * MD_ATOMS_PER_NM3 ** (1 / 3)          # atom layers in a cut-off thick halo
    grid_points = MD_PME_SPACING_NM**-3 / MD_ATOMS_PER_NM3   # PME grid points per atom
    pair_src = (f"{neighbors:.0f} neighbours/atom (cut-off {cutoff:g} nm at {MD_ATOMS_PER_NM3:g} "
                f"atoms/nm^3, GROMACS STMV settings) / 2 pairs x {MD_FLOPS_PER_PAIR:g} FLOPs per pair "
                "(GROMACS nrnb 'NxN Ewald Elec. + LJ [F]')")
    bytes_src = (f"{c.md_bytes_per_atom_step:g} B/atom-step at FP32, fitted on the GROMACS/AMBER "
                 "records (hpc/fitted.py); published bytes per atom-step were not found")
    return Profile(
        solver_class="molecular_dynamics", unit="atoms", precision=precision,
        arithmetic=_arith(precision), value_bytes=vb,
        kernels=(Kernel(name="nonbonded", flops_per_unit=MD_FLOPS_PER_PAIR * neighbors / 2.0,
                        bytes_per_unit=0.0, compute="md_pair"),
                 Kernel(name="pme_update", flops_per_unit=0.0,
                        bytes_per_unit=c.md_bytes_per_atom_step * vb / 4.0)),
        exchanges=(Exchange(pattern="halo", per_step=2.0, bytes=layers * 3.0 * vb),
                   Exchange(pattern="all_to_all", per_step=2.0, bytes=grid_points * vb,
                            fft_points_per_unit=grid_points)),
        # launches ASSUMED: ~10 kernels per GPU-resident step (non-bonded, PME, update, constraints)
        memory_per_unit_bytes=500.0, checkpoint_bytes_per_unit=6.0 * vb, launches_per_step=10.0,
        serial_fraction=c.md_serial_fraction,
        sources={"flops_per_unit_step": pair_src, "bytes_per_unit_step": bytes_src,
                 "memory_per_unit_bytes": "assumed 500 B/atom: state (36 B), pair list, PME grids, "
                                           "topology, with buffers",
                 "communication": f"halo: coordinates out, forces back through a {cutoff:g} nm "
                                  f"shell; PME all-to-all: {grid_points:.1f} grid points/atom "
                                  f"({MD_PME_SPACING_NM} nm grid), forward + inverse FFT",
                 "cutoff_nm": f"non-bonded cut-off {MD_CUTOFF_NM} nm (GROMACS STMV benchmark settings)",
                 "checkpoint_bytes_per_unit": "positions + velocities, 6 values per atom "
                                              "(reference/hpc.md lower bound)",
                 "serial_fraction": f"{c.md_serial_fraction:g} of the one-GPU step does not divide "
                                    "over GPUs (GROMACS: PME on one rank), from the LUMI 1- vs 8-GCD "
                                    "STMV records (hpc/fitted.py)"})


def _weather(precision: str, vb: int, units: float, o: ClassOptions) -> Profile:
    levels = o.levels or WEATHER_LEVELS
    src = ("assumed order of magnitude: ~100 3-D fields touched ~5 times per step = 500 values "
           "per grid point, 0.25 FLOP/B; ICON is memory-bandwidth bound (Adamidis et al. 2025, "
           "calibration rot-icon-memory-bound). Set profile from a measured run")
    return Profile(
        solver_class="weather_climate", unit="grid_points", precision=precision,
        arithmetic=_arith(precision), value_bytes=vb,
        kernels=(Kernel(name="dycore_physics", flops_per_unit=125.0 * vb, bytes_per_unit=500.0 * vb,
                        access="stencil"),),
        exchanges=(Exchange(pattern="halo", per_step=10.0, bytes=2.0 * 5.0 * vb),),
        # launches ASSUMED: a directive-ported dycore + physics step runs hundreds of small kernels
        memory_per_unit_bytes=150.0 * vb, checkpoint_bytes_per_unit=20.0 * vb, launches_per_step=300.0,
        decomposition_dims=2, levels=levels,
        sources={"flops_per_unit_step": src, "bytes_per_unit_step": src,
                 "levels": "assumed 90 vertical levels (2-D horizontal decomposition)",
                 "memory_per_unit_bytes": "assumed 150 3-D fields resident",
                 "communication": "assumed 10 halo exchanges per step (RK stages, tracers), 2 cells "
                                  "wide, 5 fields each",
                 "checkpoint_bytes_per_unit": "assumed 20 prognostic fields"})


def _fft(precision: str, vb: int, units: float, o: ClassOptions) -> Profile:
    transforms = o.transforms_per_step or FFT_TRANSFORMS
    log_n = math.log2(max(units, 2.0))
    src = (f"{transforms:g} complex 3-D FFT(s) per step: 5 N log2 N FLOPs (Cooley-Tukey count), "
           "3 passes (one per axis) each reading and writing the complex array")
    return Profile(
        solver_class="fft_spectral", unit="grid_points", precision=precision,
        arithmetic=_arith(precision) if vb != 2 else "fp16", value_bytes=vb,
        kernels=(Kernel(name="local_fft", flops_per_unit=transforms * 5.0 * log_n,
                        bytes_per_unit=transforms * 3 * 2 * 2.0 * vb, code="fft_library"),),
        exchanges=(Exchange(pattern="all_to_all", per_step=transforms, bytes=2.0 * vb),),
        memory_per_unit_bytes=3 * 2.0 * vb, checkpoint_bytes_per_unit=2.0 * vb,
        launches_per_step=3.0 * transforms,   # one batched 1-D FFT per axis
        sources={"flops_per_unit_step": src, "bytes_per_unit_step": src,
                 "transforms_per_step": "assumed 1 transform per step (a pseudo-spectral DNS step "
                                        "does several: set application.transforms_per_step)",
                 "memory_per_unit_bytes": "input, output and scratch complex arrays",
                 "communication": "all-to-all transposes (slab: 1, pencil: 2 per transform; "
                                  "calibration rot-fft-alltoall-bound)",
                 "checkpoint_bytes_per_unit": "the transformed complex field"})


def _dla(precision: str, vb: int, units: float, o: ClassOptions) -> Profile:
    n = units
    block = 512.0   # GEMM tile: arithmetic intensity block / value bytes FLOP/B
    flops = 2.0 / 3.0 * n * n
    src = ("LU factorization 2/3 N^3 FLOPs (HPL), one factorization per step; blocked GEMM with "
           f"{block:g}-wide tiles moves 2 tiles per {block:g}^3 multiply-adds (AI = tile / value bytes)")
    matrix_vb = 10.0 if precision == "mixed" else float(vb)   # MxP keeps FP64 A and an FP16 factor
    return Profile(
        solver_class="dense_linear_algebra", unit="matrix_order", precision=precision,
        arithmetic="fp16" if precision in ("mixed", "fp16", "bf16") else _arith(precision),
        value_bytes=vb,
        kernels=(Kernel(name="gemm_update", flops_per_unit=flops, bytes_per_unit=flops * vb / block,
                        compute="gemm"),),
        exchanges=(Exchange(pattern="broadcast", per_step=1.0, bytes=2.0 * n * n * vb),),
        memory_per_unit_bytes=matrix_vb * n, checkpoint_bytes_per_unit=0.0,
        launches_per_step=5.0 * n / block,   # ASSUMED 5 per block column (panel, swap, TRSM, GEMM, bcast)
        memory_exponent=2, overlap_communication=True,
        sources={"flops_per_unit_step": src, "bytes_per_unit_step": src,
                 "memory_per_unit_bytes": "one matrix row: N values (HPL fills device memory)",
                 "communication": "panel broadcasts along process rows and columns, 2 N^2 values "
                                  "/ sqrt(GPUs) per GPU, hidden by look-ahead",
                 "checkpoint_bytes_per_unit": "none: a factorization restarts from the start"})


def with_overrides(p: Profile, *, flops_per_unit_step: float | None = None,
                   bytes_per_unit_step: float | None = None,
                   memory_per_unit_bytes: float | None = None) -> Profile:
    """The intake's own FLOPs (bytes) per unit-step rescale the class kernels, each by given / the
    class total: a pin at the class default gives the class answer, and the per-kernel roofline (a
    compute-bound and a memory-bound kernel do not overlap, as the class defaults were fitted) is
    kept. A class with no FLOPs (bytes) to scale takes the number on its heaviest kernel."""
    main = max(p.kernels, key=lambda k: k.bytes_per_unit)

    def share(given: float | None, total: float, own: float, k: Kernel) -> float:
        """A kernel's part of `given`: in proportion to its own, or all of it on the main kernel."""
        if given is None:
            return own
        return own * given / total if total > 0 else (given if k is main else 0.0)

    flops, bytes_ = p.flops_per_unit_step, p.bytes_per_unit_step
    p = replace(p, kernels=tuple(replace(k, flops_per_unit=share(flops_per_unit_step, flops, k.flops_per_unit, k),
                                         bytes_per_unit=share(bytes_per_unit_step, bytes_, k.bytes_per_unit, k))
                                 for k in p.kernels))
    if memory_per_unit_bytes is not None:
        p = replace(p, memory_per_unit_bytes=memory_per_unit_bytes, memory_exponent=1)
    return p


# The provenance of an HPC GPU count sized for its target: the uncertainty bands find such a count by it
SIZED_FOR_TARGET = "fewest GPUs meeting the step-time target"


def gpu_family(accelerator: str) -> str:
    """a100-sxm-40gb -> a100, mi250x-gcd -> mi250x: one GPU model, whatever the variant."""
    return accelerator.split("-")[0]
