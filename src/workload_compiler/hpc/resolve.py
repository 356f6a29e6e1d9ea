"""Intake -> model inputs for an HPC workload: units, profile, steps, targets, device, I/O load.

Each value the intake does not give is filled from a class default or a rule and recorded on the
trace as an assumption (path, value, why); given values are recorded as given.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..catalog.loader import Catalog
from ..errors import InputError
from ..intake.hpc import HpcCommunication, HpcWorkload
from ..provenance import Trace
from ..spine.node_choice import choose_accelerator
from .classes import (
    OPTION_DEFAULTS,
    UNITS,
    WEATHER_LEVELS,
    ClassOptions,
    Exchange,
    Profile,
    class_profile,
    with_overrides,
)
from .device import Device, hpc_device
from .io import CHECKPOINT_INTERVAL_S, IoLoad

DEFAULT_ACCELERATOR = "h100-sxm"
_UNIT_ALIASES = {
    "cells": {"cells", "cell", "lattice_cells", "lattice-cells", "lattice cells"},
    "atoms": {"atoms", "atom", "particles"},
    "grid_points": {"grid_points", "grid-points", "grid points", "points", "gridpoints"},
    "matrix_order": {"matrix_order", "matrix-order", "matrix order", "order", "n"},
}
# Steps a run does when the intake says neither steps nor simulated time (ASSUMED, per class).
DEFAULT_STEPS = {"cfd_lbm": 100_000.0, "cfd_fv": 10_000.0, "molecular_dynamics": 500_000.0,
                 "weather_climate": 10_000.0, "fft_spectral": 10_000.0, "dense_linear_algebra": 1.0}
MD_TIMESTEP_S = 2e-15   # 2 fs with h-bond constraints (GROMACS STMV/ADH benchmarks)
DEFAULT_PRECISION = {"cfd_lbm": "fp32", "cfd_fv": "fp64", "molecular_dynamics": "mixed",
                     "weather_climate": "fp64", "fft_spectral": "fp64", "dense_linear_algebra": "fp64"}
SECONDS_PER_YEAR = 365 * 86400.0   # the 365-day year of SYPD and of '1y' (units.py)


def resolve_units(w: HpcWorkload, trace: Trace) -> float:
    """Problem size in the class's unit; weather accepts `columns` (x levels)."""
    cls = w.application.solver_class
    unit = UNITS[cls]
    given = (w.problem.unit or unit).strip().lower()
    if cls == "weather_climate" and given in ("columns", "column"):
        levels = w.application.levels or WEATHER_LEVELS
        return float(trace.derived("objective.problem_size", w.problem.size * levels, "columns x levels"))
    if given not in _UNIT_ALIASES[unit]:
        raise InputError("problem.unit", w.problem.unit,
                         f"for {cls}: {unit}" + (" or columns" if cls == "weather_climate" else ""))
    return float(trace.given("objective.problem_size", w.problem.size))


def resolve_profile(w: HpcWorkload, units: float, trace: Trace) -> tuple[Profile, str]:
    cls = w.application.solver_class
    if w.precision is None:
        precision = trace.assumed("objective.precision", DEFAULT_PRECISION[cls],
                                  f"the usual precision of {cls} codes")
    else:
        precision = trace.given("objective.precision", w.precision)
    p = profile_for(w, precision, units)
    record_profile(w, p, trace)
    return p, precision


def profile_for(w: HpcWorkload, precision: str, units: float) -> Profile:
    """The class profile at `units` with the intake's overrides (used again for weak scaling)."""
    a = w.application
    opts = ClassOptions(neighbors_per_atom=a.neighbors_per_atom, cutoff_nm=a.cutoff_nm,
                        iterations_per_step=a.iterations_per_step,
                        levels=float(a.levels) if a.levels else None,
                        transforms_per_step=a.transforms_per_step)
    p = class_profile(a.solver_class, precision, units, opts)
    p = with_overrides(p, flops_per_unit_step=w.profile.flops_per_unit_step,
                       bytes_per_unit_step=w.profile.bytes_per_unit_step,
                       memory_per_unit_bytes=w.memory_per_unit_bytes)
    return _with_communication(p, w.communication)


def _with_communication(p: Profile, c: HpcCommunication) -> Profile:
    wanted = [c.pattern] if isinstance(c.pattern, str) else list(c.pattern or [])
    exchanges = [e for e in p.exchanges if not wanted or e.pattern in wanted]
    overrides = {"halo": ("halo_bytes_per_surface_unit", c.halo_bytes_per_surface_unit),
                 "all_to_all": ("bytes_per_unit", c.bytes_per_unit),
                 "all_reduce": ("message_bytes", c.message_bytes)}
    for pattern in wanted:
        if not any(e.pattern == pattern for e in exchanges):
            field, value = overrides[pattern]
            if value is None:
                raise InputError(f"communication.{field}", None,
                                 f"a size: {p.solver_class} has no default {pattern} exchange")
            exchanges.append(Exchange(pattern=pattern, per_step=1.0, bytes=value))
    out = []
    for e in exchanges:
        _, value = overrides.get(e.pattern, ("", None))
        e = replace(e, bytes=value) if value is not None else e
        if e.pattern == "halo" and c.halo_transport is not None:
            e = replace(e, transport=c.halo_transport)
        out.append(replace(e, per_step=c.exchanges_per_step) if c.exchanges_per_step else e)
    return replace(p, exchanges=tuple(out))


def record_profile(w: HpcWorkload, p: Profile, trace: Trace) -> None:
    src = p.sources
    for key, given, value in (("flops_per_unit_step", w.profile.flops_per_unit_step, p.flops_per_unit_step),
                              ("bytes_per_unit_step", w.profile.bytes_per_unit_step, p.bytes_per_unit_step),
                              ("memory_per_unit_bytes", w.memory_per_unit_bytes, p.memory_per_unit_bytes)):
        if given is not None:
            trace.given(f"hpc.{key}", given)
        else:
            trace.assumed(f"hpc.{key}", value, f"{p.solver_class} class default: {src[key]}")
    patterns = sorted({e.pattern for e in p.exchanges})
    if w.communication.pattern is not None:
        trace.given("hpc.communication.patterns", patterns)
    else:
        trace.assumed("hpc.communication.patterns", patterns, src["communication"])
    if "halo" in patterns:
        if w.communication.halo_transport is not None:
            trace.given("hpc.communication.halo_transport", w.communication.halo_transport)
        else:
            trace.assumed("hpc.communication.halo_transport", "gpu_direct",
                          "halos go GPU to GPU (MPI/NCCL, GPU-aware); set communication.halo_transport: "
                          "host_staged for codes that copy them through host memory")
    a = w.application
    given_options = {"cutoff_nm": a.cutoff_nm or a.neighbors_per_atom, "levels": a.levels,
                     "iterations_per_step": a.iterations_per_step, "transforms_per_step": a.transforms_per_step}
    for key, default in OPTION_DEFAULTS.items():
        if key in src and given_options[key] is None:
            trace.assumed(f"hpc.application.{key}", default, src[key])
    if p.serial_fraction:
        trace.assumed("hpc.serial_fraction", p.serial_fraction, src["serial_fraction"], unit="fraction")


def resolve_device(w: HpcWorkload, catalog: Catalog, trace: Trace) -> Device:
    c = w.compute
    acc = choose_accelerator(c, catalog, trace, DEFAULT_ACCELERATOR,
                             "no accelerator given: H100 SXM, the most common current HPC GPU").id
    device = hpc_device(catalog, acc, c.system)
    if c.system is not None:
        trace.given("compute.system", device.system_id)
    else:
        trace.assumed("compute.system", device.system_id, f"the catalog's reference system for {acc}")
    return device


def resolve_steps(w: HpcWorkload, trace: Trace) -> tuple[float, float | None]:
    """(steps, timestep_s or None)."""
    cls = w.application.solver_class
    timestep = w.timestep
    if timestep is None and cls == "molecular_dynamics" and (w.simulated_time or w.target.ns_per_day):
        timestep = trace.assumed("objective.timestep_s", MD_TIMESTEP_S, "2 fs, with h-bond constraints")
    elif timestep is not None:
        trace.given("objective.timestep_s", timestep)
    if w.simulated_time is not None:
        if timestep is None:
            raise InputError("timestep", None, f"a timestep (e.g. 30s) for simulated_time ({cls})")
        steps = math.ceil(w.simulated_time / timestep * (1 - 1e-12))
        if w.steps is not None and abs(w.steps - steps) > 0.5:
            raise InputError("steps", w.steps, f"steps or simulated_time / timestep (= {steps:g}), not both")
        return trace.derived("objective.steps", float(steps), "simulated_time / timestep"), timestep
    if w.steps is not None:
        return trace.given("objective.steps", w.steps), timestep
    return trace.assumed("objective.steps", DEFAULT_STEPS[cls], "no steps or simulated time given"), timestep


def step_target_s(w: HpcWorkload, steps: float, timestep: float | None) -> float | None:
    """The longest step that meets every target (time to solution, ns/day, SYPD), or None."""
    t = w.target
    limits = []
    if t.time_to_solution is not None:
        limits.append(t.time_to_solution / steps)
    for rate, sim_per_day in ((t.ns_per_day, 1e-9), (t.simulated_years_per_day, SECONDS_PER_YEAR)):
        if rate is None:
            continue
        if timestep is None:
            raise InputError("timestep", None, "a timestep, to turn a simulated-time-per-day target to steps")
        limits.append(86400.0 / (rate * sim_per_day / timestep))
    return min(limits) if limits else None


def resolve_io(w: HpcWorkload, p: Profile, units: float, device: Device, trace: Trace) -> IoLoad:
    io = w.io
    if io.checkpoint_bytes_per_unit is not None:
        ckpt = trace.given("storage.checkpoint_bytes_per_unit", io.checkpoint_bytes_per_unit)
    else:
        ckpt = trace.assumed("storage.checkpoint_bytes_per_unit", p.checkpoint_bytes_per_unit,
                             p.sources["checkpoint_bytes_per_unit"], unit="B")
    if io.checkpoint_every is not None:
        interval = trace.given("storage.checkpoint_interval_s", io.checkpoint_every)
    else:
        interval = trace.assumed("storage.checkpoint_interval_s", CHECKPOINT_INTERVAL_S,
                                 "GROMACS default checkpoint period, 15 min (calibration "
                                 "rot-gromacs-checkpoint-interval)")
    every = io.output_every_n_steps or 1
    if io.output_bytes_per_step is not None:
        out = io.output_bytes_per_step
    elif io.output_bytes_per_unit is not None:
        out = io.output_bytes_per_unit * units / every
    else:
        out = 0.0
    return IoLoad(output_bytes_per_step=out, checkpoint_bytes=ckpt * units, checkpoint_interval_s=interval,
                  write_bandwidth_per_node_bytes_per_s=io.scratch_write_bandwidth_per_node,
                  gpus_per_node=device.gpus_per_node)
