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

from ..validation.hpc_case import HpcCase, run_case
from ..validation.report import Row
from .fitted import FITTED, HpcConstants

_GOLDEN = (math.sqrt(5) - 1) / 2
# Which constants each group of cases identifies (and their search bounds).
_GROUPS: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[float, float], ...]], ...] = (
    (("stream",), ("stream_fraction",), ((0.3, 1.0),)),
    (("cfd:lbm",), ("stencil_fraction",), ((0.3, 1.0),)),
    (("hpl", "dgemm"), ("gemm_fraction", "gemm_fp64_flops_per_j"), ((0.3, 1.0), (20e9, 150e9))),
    (("md:gromacs", "md:amber"), ("md_pair_fraction", "md_bytes_per_atom_step", "amd_kernel_fraction"),
     ((0.05, 1.0), (500.0, 50000.0), (0.3, 1.0))),
)


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
            if name == "amd_kernel_fraction" and not any(_is_amd(case.accelerator) for case in cases):
                c = replace(c, amd_kernel_fraction=1.0)   # nothing to learn it from
                continue
            c = replace(c, **{name: _golden(_with(cases, c, name), lo, hi)})
    return c


def fit_constants(cases: Sequence[HpcCase], records: Sequence[dict[str, Any]],
                  base: HpcConstants = FITTED) -> HpcConstants:
    c = base
    for groups, names, bounds in _GROUPS:
        c = fit_group([k for k in cases if k.group in groups and _single_gpu_or_hpl(k)], names, bounds, c)
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
        if r.get("category") != "md" or m.get("ns_per_day") is None or not hw.get("gpu_count"):
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


def gpu_family(accelerator: str) -> str:
    """a100-sxm-40gb -> a100, mi250x-gcd -> mi250x: one GPU model, whatever the variant."""
    return accelerator.split("-")[0]


def leave_one_gpu_out(cases: Sequence[HpcCase], records: Sequence[dict[str, Any]],
                      base: HpcConstants = FITTED) -> list[Row]:
    """For each GPU family: refit without its cases (and records), predict its cases."""
    rows: list[Row] = []
    for family in sorted({gpu_family(k.accelerator) for k in cases}):
        train = [k for k in cases if gpu_family(k.accelerator) != family]
        kept = [r for r in records if not _record_on(r, family)]
        c = fit_constants(train, kept, base)
        rows.extend(run_case(k, c) for k in cases if gpu_family(k.accelerator) == family)
    return rows


def _single_gpu_or_hpl(case: HpcCase) -> bool:
    return case.group in ("hpl", "dgemm") or case.gpus <= 1


def _is_amd(accelerator: str) -> bool:
    return accelerator.startswith("mi")


def _record_on(record: dict[str, Any], family: str) -> bool:
    text = str((record.get("hardware") or {}).get("gpu_type") or "").lower().replace(" ", "")
    return family in text
