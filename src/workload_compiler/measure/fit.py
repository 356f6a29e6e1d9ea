"""Fit recorded GPU timings to the performance model's own forms. Pure arithmetic over arrays.

GEMM (perf/efficiency.py): one kernel of F FLOPs takes

    t(F) = F / (e_max * peak) + t0      <=>  eff(F) = e_max * F / (F + e_max * peak * t0)

so a grid of (F, t) is a straight line in F: slope 1 / (e_max * peak), intercept t0. HBM: a stream
kernel moving B bytes takes t = B / BW + t_launch (slope 1 / BW). Collectives (nccl-tests
doc/PERFORMANCE.md): an all-reduce of S bytes over n ranks takes t = 2(n-1)/n * S / busbw + latency,
an all-to-all t = (n-1)/n * S / busbw + latency, so busbw = factor / slope.

The times span three orders of magnitude, so every line is fitted on relative error (each row
weighted 1 / t, least squares), never on absolute seconds, which would let the largest shapes
decide alone. A negative intercept (noise on a grid without small shapes) is refitted through the
origin rather than reported as a negative overhead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError


@dataclass(frozen=True, kw_only=True)
class LineFit:
    slope: float
    intercept: float
    mape: float          # mean |t_fit / t - 1| over the points
    max_error: float     # max |t_fit / t - 1|
    points: int


def fit_relative_line(x: Any, t: Any, what: str) -> LineFit:
    """t = slope * x + intercept, least squares on (t_fit - t) / t; intercept >= 0."""
    xs, ts = np.asarray(x, dtype=np.float64), np.asarray(t, dtype=np.float64)
    if xs.shape != ts.shape or xs.ndim != 1 or xs.size < 2:
        raise InputError(what, f"{xs.size} points", "at least two (size, seconds) points to fit a line")
    if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(ts)) and np.all(xs > 0) and np.all(ts > 0)):
        raise InputError(what, "non-positive or non-finite points", "sizes and times > 0")
    if np.ptp(xs) == 0:
        raise InputError(what, "one size only", "points at two sizes or more (the slope needs a spread)")
    a = np.stack([xs / ts, 1.0 / ts], axis=1)
    (slope, intercept), *_ = np.linalg.lstsq(a, np.ones_like(ts), rcond=None)
    if intercept < 0:
        slope, intercept = float(np.sum(xs / ts) / np.sum((xs / ts) ** 2)), 0.0
    if slope <= 0:
        raise InputError(what, f"slope {slope:.3g}", "times that grow with size (the points look mislabelled)")
    err = np.abs((slope * xs + intercept) / ts - 1.0)
    return LineFit(slope=float(slope), intercept=float(intercept), mape=float(np.mean(err)),
                   max_error=float(np.max(err)), points=int(xs.size))


@dataclass(frozen=True, kw_only=True)
class GemmFit:
    e_max: float                 # fraction of the dense peak a large GEMM sustains
    kernel_overhead_s: float     # t0
    peak_flops: float            # the catalog's dense peak it is a fraction of
    best_flops_per_s: float      # the fastest point
    line: LineFit


def fit_gemm(m: Any, n: Any, k: Any, seconds: Any, peak_flops: float) -> GemmFit:
    """e_max and t0 from GEMM shapes (m, n, k) and their per-kernel times; F = 2 m n k."""
    flops = 2.0 * np.asarray(m, dtype=np.float64) * np.asarray(n, dtype=np.float64) * np.asarray(k, dtype=np.float64)
    line = fit_relative_line(flops, seconds, "gemm.points")
    rate = flops / np.asarray(seconds, dtype=np.float64)
    return GemmFit(e_max=1.0 / (line.slope * peak_flops), kernel_overhead_s=line.intercept, peak_flops=peak_flops,
                   best_flops_per_s=float(np.max(rate)), line=line)


@dataclass(frozen=True, kw_only=True)
class BandwidthFit:
    bytes_per_s: float        # asymptotic bandwidth (HBM) or bus bandwidth (collectives)
    latency_s: float          # the intercept: launch (HBM) or alpha (collectives)
    fraction: float | None    # of the datasheet figure, when one is given
    line: LineFit


def fit_stream(bytes_moved: Any, seconds: Any, datasheet_bytes_per_s: float | None) -> BandwidthFit:
    """Sustained HBM bandwidth from a stream kernel's (bytes moved, seconds) points."""
    line = fit_relative_line(bytes_moved, seconds, "hbm.points")
    bw = 1.0 / line.slope
    return BandwidthFit(bytes_per_s=bw, latency_s=line.intercept,
                        fraction=bw / datasheet_bytes_per_s if datasheet_bytes_per_s else None, line=line)


BUS_FACTOR = {"all_reduce": lambda n: 2.0 * (n - 1.0) / n, "all_to_all": lambda n: (n - 1.0) / n,
              "all_gather": lambda n: (n - 1.0) / n, "reduce_scatter": lambda n: (n - 1.0) / n}


def fit_collective(collective: str, ranks: int, size_bytes: Any, seconds: Any) -> BandwidthFit:
    """NCCL bus bandwidth of `collective` over `ranks` from (buffer bytes, seconds) points."""
    if collective not in BUS_FACTOR:
        raise InputError("collectives", collective, "one of " + ", ".join(BUS_FACTOR))
    if ranks < 2:
        raise InputError(f"collectives.{collective}.ranks", ranks, "two ranks or more")
    line = fit_relative_line(size_bytes, seconds, f"collectives.{collective}.points")
    return BandwidthFit(bytes_per_s=BUS_FACTOR[collective](float(ranks)) / line.slope, latency_s=line.intercept,
                        fraction=None, line=line)
