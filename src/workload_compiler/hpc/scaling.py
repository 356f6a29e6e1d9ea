"""Step time over GPU counts, strong and weak scaling, and the GPU count a target needs.

time per step (g GPUs) = roofline(units / g) + communication(g), or, for classes whose look-ahead
hides communication (dense LU), max(roofline, communication) + io. Strong scaling keeps the
problem and adds GPUs; weak scaling grows the problem with the GPUs so that device memory per GPU
stays constant (units ~ g, or N ~ sqrt(g) for a dense matrix).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..intake.limits import MAX_GPUS  # the intake's GPU bound: a search never goes past it
from ..perf.layout import FloatArray
from .classes import Profile
from .comm import comm_times
from .device import Device
from .fitted import FITTED, HpcConstants
from .io import IoLoad, io_time_per_step
from .roofline import KernelTime, kernel_time

# ASSUMED: share of HBM an application may fill (runtime context, allocator slack, MPI buffers).
USABLE_HBM_FRACTION = 0.90
SATURATION_TOLERANCE = 0.05   # a count within 5% of the shortest step counts as saturated

STEP_FORMULA = "time per step = roofline(units/g) + exposed communication(g) + io (hpc/scaling.py)"
ProfileFor = Callable[[float], Profile]


@dataclass(frozen=True, kw_only=True)
class StepBreakdown:
    """Seconds per step for each GPU count in `gpus` (arrays of one shape)."""

    gpus: FloatArray
    compute_s: FloatArray
    memory_s: FloatArray
    launch_s: FloatArray
    network_s: FloatArray               # exposed communication
    io_s: FloatArray
    serial_s: FloatArray                # of compute + memory: the Amdahl share that does not divide
    comm_by_pattern_s: dict[str, FloatArray]

    @property
    def total_s(self) -> FloatArray:
        return np.asarray(self.compute_s + self.memory_s + self.launch_s + self.network_s + self.io_s)

    def bound(self, i: int = 0) -> str:
        """What dominates step i: compute | memory | network | io (launch counts as compute)."""
        parts = {"compute": self.compute_s.flat[i] + self.launch_s.flat[i], "memory": self.memory_s.flat[i],
                 "network": self.network_s.flat[i], "io": self.io_s.flat[i]}
        return max(parts, key=lambda k: parts[k])


def step_times(profile: Profile, device: Device, units: float, gpus: Any,
               io: IoLoad | None = None, c: HpcConstants = FITTED) -> StepBreakdown:
    g = np.atleast_1d(np.asarray(gpus, dtype=np.float64))
    kt = kernel_time(profile, device, units / g, c)
    serial = np.zeros_like(g)
    if profile.serial_fraction:   # Amdahl: s of the one-GPU time stays, (1 - s) divides over g
        one = kernel_time(profile, device, np.full_like(g, units), c)
        s = profile.serial_fraction
        serial = s * (one.compute_s + one.memory_s) - s * (kt.compute_s + kt.memory_s)
        kt = KernelTime(compute_s=(1 - s) * kt.compute_s + s * one.compute_s,
                        memory_s=(1 - s) * kt.memory_s + s * one.memory_s, launch_s=kt.launch_s)
    comms = comm_times(profile, device, units, g, c)
    comm = sum(comms.values(), np.zeros_like(g))
    exposed = np.maximum(comm - kt.total_s, 0.0) if profile.overlap_communication else comm
    return StepBreakdown(gpus=g, compute_s=kt.compute_s, memory_s=kt.memory_s, launch_s=kt.launch_s,
                         network_s=np.asarray(exposed), io_s=io_time_per_step(io, g, kt.total_s + exposed),
                         serial_s=serial, comm_by_pattern_s=comms)


def memory_per_gpu_bytes(profile: Profile, units: float, gpus: Any) -> FloatArray:
    return np.asarray(profile.memory_per_unit_bytes * units / np.asarray(gpus, dtype=np.float64))


def min_gpus_for_memory(profile: Profile, device: Device, units: float) -> int:
    """Fewest GPUs whose usable HBM holds the problem: ceil(memory / (HBM x usable share))."""
    need = profile.memory_per_unit_bytes * units / (device.memory_bytes * USABLE_HBM_FRACTION)
    return max(1, math.ceil(need - 1e-9))


def candidate_gpus(device: Device, lo: int = 1, hi: int = MAX_GPUS) -> FloatArray:
    """GPU counts worth trying: powers of two up to a node, then whole nodes in ~19% steps."""
    node = device.gpus_per_node
    counts = {2**k for k in range(0, 21) if 2**k < node} | {node}
    nodes = 1.0
    while nodes * node <= hi:
        counts.add(round(nodes) * node)
        nodes = max(nodes + 1, nodes * 1.19)
    return np.array(sorted(c for c in counts if lo <= c <= hi), dtype=np.float64)


@dataclass(frozen=True, kw_only=True)
class TargetResult:
    gpus: int | None                 # fewest GPUs that meet the target; None if none does
    best_gpus: int                   # count with the shortest step among the candidates
    best_step_s: float
    binding: str | None              # why no count meets the target
    detail: str | None


def gpus_for_step_target(profile: Profile, device: Device, units: float, step_target_s: float,
                         lo: int, hi: int, io: IoLoad | None = None) -> TargetResult:
    """Fewest GPUs in [lo, hi] with a step time at or under the target; otherwise the binding."""
    g = candidate_gpus(device, lo, hi)
    if g.size == 0:
        g = np.array([float(lo)])
    b = step_times(profile, device, units, g, io)
    t = b.total_s
    # Saturation: the fewest GPUs within SATURATION_TOLERANCE of the shortest step.
    best = int(np.nonzero(t <= t.min() * (1 + SATURATION_TOLERANCE))[0][0])
    ok = np.nonzero(t <= step_target_s)[0]
    if ok.size:
        return TargetResult(gpus=int(g[ok[0]]), best_gpus=int(g[best]), best_step_s=float(t[best]),
                            binding=None, detail=None)
    if best == g.size - 1 and hi < MAX_GPUS:
        return TargetResult(gpus=None, best_gpus=int(g[best]), best_step_s=float(t[best]),
                            binding="compute.max_gpus",
                            detail=(f"at the cap of {int(g[best])} GPUs a step takes {t[best]:.3g} s, over "
                                    f"the {step_target_s:.3g} s the target allows"))
    return TargetResult(gpus=None, best_gpus=int(g[best]), best_step_s=float(t[best]),
                        binding="strong_scaling",
                        detail=(f"strong scaling saturates at {int(g[best])} GPUs ({t[best]:.3g} s per step, "
                                f"target {step_target_s:.3g} s): {_dominant(b, best, profile)}"))


def _dominant(b: StepBreakdown, i: int, profile: Profile) -> str:
    """What dominates the saturated step, in words, with its share."""
    t = float(b.total_s[i])
    amdahl = f"work that does not divide over GPUs (Amdahl s = {profile.serial_fraction:g})"
    parts = {"communication (" + ", ".join(sorted(b.comm_by_pattern_s)) + ")": float(b.network_s[i]),
             amdahl: float(b.serial_s[i]),
             "kernel launches": float(b.launch_s[i]), "I/O": float(b.io_s[i]),
             "per-GPU compute and memory time": float(b.compute_s[i] + b.memory_s[i] - b.serial_s[i])}
    name = max(parts, key=lambda k: parts[k])
    return f"{name} dominates ({parts[name] / t:.0%} of the step)"


def strong_scaling(profile: Profile, device: Device, units: float, g0: int,
                   gpus: Any) -> list[dict[str, float]]:
    """Rows {gpus, time_per_step_s, speedup, efficiency}, efficiency = t(g0) g0 / (t(g) g)."""
    g = np.atleast_1d(np.asarray(gpus, dtype=np.float64))
    t = step_times(profile, device, units, g).total_s
    t0 = float(step_times(profile, device, units, g0).total_s[0])
    return [{"gpus": int(gi), "time_per_step_s": float(ti), "speedup": _ratio(t0, float(ti)),
             "efficiency": _ratio(t0 * g0, float(ti) * float(gi))} for gi, ti in zip(g, t, strict=True)]


def weak_scaling(profile_for: ProfileFor, device: Device, units: float, g0: int, exponent: int,
                 gpus: Any) -> list[dict[str, float]]:
    """Rows {gpus, units, time_per_step_s, efficiency}: device memory per GPU held at its value for
    `units` on g0 GPUs (units ~ g^(1/exponent)); efficiency = work per GPU-second relative to the
    first row (= t(first) / t(g) when the work per unit does not depend on the size)."""
    rows: list[dict[str, float]] = []
    for gi in np.atleast_1d(np.asarray(gpus, dtype=np.float64)):
        u = units * (gi / g0) ** (1.0 / exponent)
        p = profile_for(u)
        ti = float(step_times(p, device, u, gi).total_s[0])
        work = float(u * (p.flops_per_unit_step or p.bytes_per_unit_step))
        rows.append({"gpus": int(gi), "units": float(u), "time_per_step_s": ti, "rate": _ratio(work, float(gi) * ti)})
    base = rows[0]["rate"]
    for r in rows:
        r["efficiency"] = _ratio(r.pop("rate"), base)
    return rows


def _ratio(a: float, b: float) -> float:
    """a / b, NaN where it has no value (a zero or unbounded step): the result's finite pass nulls
    it with the reason, instead of NumPy warning at the division."""
    return a / b if math.isfinite(a) and math.isfinite(b) and b > 0 else math.nan


def scaling_counts(device: Device, g0: int, chosen: int, hi: int) -> list[int]:
    """g0, then doublings up to 16x the chosen count (or the cap), always including `chosen`."""
    counts = {g0, chosen}
    g = g0
    while g < min(16 * max(chosen, g0), hi):
        g *= 2
        counts.add(min(g, hi))
    return sorted(counts)
