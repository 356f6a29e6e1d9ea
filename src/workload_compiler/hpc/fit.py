"""Fit the HPC constants (hpc/fitted.py) on validation cases; leave-one-GPU-out.

Each constant group is fitted on the cases that depend on it, minimising the sum of
log(predicted / published)^2 by coordinate descent (golden-section search per parameter in log
space), always through the cases' own `predict` (the model code itself). Two constants come
straight from records: the MD serial fraction (pairs of runs of one benchmark and code on 1 and N
GPUs) and the all-to-all network share (cuFFTMp's published share of peak machine bandwidth).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..validation.hpc_case import HpcCase, SkipRecord, accelerator, run_case
from ..validation.report import Row
from .classes import MD_SCALING_CODES, gpu_family
from .fitted import PRIORS, HpcConstants

_GOLDEN = (math.sqrt(5) - 1) / 2
Select = Callable[[HpcCase], bool]
# Vendor libraries and benchmarks (no AMD share of application code), and the FFT library (its own).
_NOT_APPLICATION = ("stream", "hpl", "dgemm", "collective", "fft")
# Groups of cases and the constants each identifies (with search bounds), in fitting order.
_GROUPS: tuple[tuple[Select, tuple[str, ...], tuple[tuple[float, float], ...]], ...] = (
    (lambda k: k.group == "stream", ("stream_fraction",), ((0.3, 1.0),)),
    (lambda k: k.group in ("hpl", "dgemm"), ("gemm_fraction", "gemm_fp64_flops_per_j"),
     ((0.3, 1.0), (20e9, 150e9))),
)
# Coupled groups, swept together: the AMD share scales the kernels of the other two.
_COUPLED: tuple[tuple[Select, tuple[str, ...], tuple[tuple[float, float], ...]], ...] = (
    (lambda k: k.group == "cfd:lbm" and k.gpus <= 1, ("stencil_fraction", "roofline_overlap_exponent"),
     ((0.3, 1.0), (1.0, 50.0))),
    (lambda k: k.group.startswith("md:") and k.gpus <= 1, ("md_pair_fraction", "md_bytes_per_atom_step"),
     ((0.05, 1.0), (500.0, 50000.0))),
    (lambda k: _is_amd(k.accelerator) and k.gpus <= 1 and k.group not in _NOT_APPLICATION,
     ("amd_kernel_fraction",), ((0.2, 1.0),)),
    (lambda k: _is_amd(k.accelerator) and k.gpus <= 1 and k.group == "fft", ("amd_fft_fraction",),
     ((0.2, 1.0),)),
)
COUPLED_SWEEPS = 3


def _loss(cases: Sequence[HpcCase], c: HpcConstants) -> float:
    return sum(math.log(case.predict(c) / case.published) ** 2 for case in cases)


def _golden(f: Callable[[float], float], lo: float, hi: float, iters: int = 28) -> float:
    """Minimum of f on [lo, hi], searched in log space."""
    a, b = math.log(lo), math.log(hi)
    for _ in range(iters):
        x1, x2 = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
        if f(math.exp(x1)) <= f(math.exp(x2)):
            b = x2
        else:
            a = x1
    return math.exp((a + b) / 2)


def _with(cases: Sequence[HpcCase], c: HpcConstants, name: str) -> Callable[[float], float]:
    return lambda x: _loss(cases, replace(c, **{name: x}))


def fit_group(cases: Sequence[HpcCase], names: tuple[str, ...], bounds: tuple[tuple[float, float], ...],
              base: HpcConstants, sweeps: int = 4) -> HpcConstants:
    """Coordinate descent over `names`; constants without cases keep their `base` value."""
    c = base
    if not cases:
        return c
    for _ in range(sweeps if len(names) > 1 else 1):
        for name, (lo, hi) in zip(names, bounds, strict=True):
            c = replace(c, **{name: _golden(_with(cases, c, name), lo, hi)})
    return c


def fit_constants(cases: Sequence[HpcCase], records: Sequence[dict[str, Any]],
                  base: HpcConstants = PRIORS) -> HpcConstants:
    """Every constant from the cases and records that identify it; one without any keeps `base`'s
    value (leave-one-GPU-out passes PRIORS, so nothing learnt from the held-out GPU leaks in)."""
    c = base
    for select, names, bounds in _GROUPS:
        c = fit_group([k for k in cases if select(k)], names, bounds, c)
    for _ in range(COUPLED_SWEEPS):
        for select, names, bounds in _COUPLED:
            c = fit_group([k for k in cases if select(k)], names, bounds, c)
    # Multi-GPU lattice Boltzmann with halos staged through host memory, given the one-GPU fit.
    c = fit_group([k for k in cases if k.group == "cfd:lbm" and k.gpus > 1], ("host_staging_fraction",),
                  ((0.05, 1.0),), c)
    serial = md_serial_fraction(records)
    if serial is not None:
        c = replace(c, md_serial_fraction=serial)
    share = [float(r["measured"]["pct_of_peak_machine_bandwidth"]) / 100 for r in records
             if (r.get("measured") or {}).get("pct_of_peak_machine_bandwidth") is not None]
    if share:
        c = replace(c, all_to_all_network_fraction=sum(share) / len(share))
    multi_fft = [k for k in cases if k.group == "fft" and k.gpus > 64]
    if multi_fft:
        gap = _golden(_with(multi_fft, c, "all_to_all_peer_gap_s"), 1e-8, 1e-4)
        c = replace(c, all_to_all_peer_gap_s=gap)
    return c


def md_serial_fraction(records: Sequence[dict[str, Any]]) -> float | None:
    """Amdahl s from runs of one benchmark, code and system on 1 and N GPUs: t_N / t_1 = s + (1-s)/N."""
    runs: dict[tuple[str, ...], dict[int, float]] = {}
    for r in records:
        m, hw = r.get("measured") or {}, r.get("hardware") or {}
        code = str(r.get("application") or "").split(" ")[0].lower()
        if (r.get("category") != "md" or m.get("ns_per_day") is None or not hw.get("gpu_count")
                or code not in MD_SCALING_CODES):
            continue
        version = re.search(r"\d+(\.\d+)+", str(r.get("software")))   # "2023.3 (SYCL)" == "2023.3"
        key = (str(r.get("application")), str((r.get("problem_size") or {}).get("value")),
               version.group(0) if version else str(r.get("software")), str(hw.get("system")))
        runs.setdefault(key, {})[int(hw["gpu_count"])] = float(m["ns_per_day"])
    fractions = []
    for by_gpus in runs.values():
        if 1 in by_gpus:
            for n, rate in by_gpus.items():
                if n > 1:
                    fractions.append((by_gpus[1] / rate - 1 / n) / (1 - 1 / n))
    return sum(fractions) / len(fractions) if fractions else None


def leave_one_gpu_out(cases: Sequence[HpcCase], records: Sequence[dict[str, Any]],
                      base: HpcConstants = PRIORS) -> list[Row]:
    """For each GPU family: refit from the priors without its cases (and records), predict its
    cases. A constant only the held-out GPU identifies stays at its prior (hpc/fitted.py)."""
    rows: list[Row] = []
    for family in sorted({gpu_family(k.accelerator) for k in cases}):
        train = [k for k in cases if gpu_family(k.accelerator) != family]
        kept = [r for r in records if _record_family(r) != family]
        c = fit_constants(train, kept, base)
        rows.extend(run_case(k, c) for k in cases if gpu_family(k.accelerator) == family)
    return rows


def _is_amd(accelerator: str) -> bool:
    return accelerator.startswith("mi")


def _record_family(record: dict[str, Any]) -> str | None:
    """The GPU family of a record (the readers' own mapping), None where it names none we know."""
    try:
        return gpu_family(accelerator(record)[0])
    except SkipRecord:
        return None
