"""GPU calibration: the raw timings `wkc calibrate` records, the file it writes, and the analysis
between them (pure: the fits of measure/fit.py against the catalog's datasheet figures).

A calibration file belongs to one accelerator id. Its `values` are ordinary measured entries
(intake/measured.py), so `compile` reads them the same way as an intake's `measured.values`: for
that accelerator (and, for bus bandwidth, that node type) only; the fitted constants stay the
fallback everywhere else.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field

from ..catalog.loader import Catalog
from ..catalog.schema import Accelerator
from ..intake.common import Strict
from ..intake.measured import MachineRef, MeasuredValue
from .fields import GEMM_PRECISIONS
from .fit import fit_collective, fit_gemm, fit_stream

RAW_SCHEMA = "wkc-calibration-raw/1"
FILE_SCHEMA = "wkc-calibration/1"
E_MAX_CEILING = 1.05   # above the dense peak: a sparse or boosted-clock peak in the catalog, not a GEMM rate


class GemmPoint(Strict):
    m: int = Field(gt=0)
    n: int = Field(gt=0)
    k: int = Field(gt=0)
    seconds: float = Field(gt=0, description="median time of one kernel")
    repeats: int = Field(default=1, ge=1)


class SizePoint(Strict):
    bytes: float = Field(gt=0, description="bytes moved (stream) or the buffer size (collectives)")
    seconds: float = Field(gt=0)
    repeats: int = Field(default=1, ge=1)


class CollectiveRun(Strict):
    ranks: int = Field(ge=2)
    points: list[SizePoint]


class DeviceInfo(Strict):
    name: str
    count: int = Field(ge=1)
    driver: str | None = None
    runtime: str | None = None          # CUDA / ROCm version torch was built with
    torch: str | None = None
    nccl: str | None = None
    compute_capability: str | None = None
    hostname: str | None = None


class RawRun(Strict):
    """What the GPU run records: shapes and sizes with their median times."""

    schema_: Literal["wkc-calibration-raw/1"] = Field(alias="schema")
    recorded: str = Field(description="how these numbers came to be: 'measured on ...' or 'synthetic: ...'")
    device: DeviceInfo
    date: dt.date
    tool: str
    gemm: dict[str, list[GemmPoint]] = Field(default_factory=dict, description="precision -> points")
    hbm: list[SizePoint] = Field(default_factory=list, description="stream triad: bytes moved, seconds")
    collectives: dict[str, CollectiveRun] = Field(default_factory=dict)


class GemmSummary(Strict):
    peak_flops: float
    e_max: float
    kernel_overhead_s: float
    best_flops_per_s: float
    mape: float
    max_error: float
    points: int


class BandwidthSummary(Strict):
    bytes_per_s: float
    latency_s: float
    fraction_of_datasheet: float | None = None
    ranks: int | None = None
    mape: float
    points: int


class CalibrationFile(Strict):
    """One accelerator's calibration: the fits, and the measured values `compile` reads."""

    schema_: Literal["wkc-calibration/1"] = Field(alias="schema")
    accelerator: str
    system: str | None = None
    synthetic: bool = False
    recorded: str
    device: DeviceInfo
    date: dt.date
    tool: str
    gemm: dict[str, GemmSummary] = Field(default_factory=dict)
    hbm: BandwidthSummary | None = None
    collectives: dict[str, BandwidthSummary] = Field(default_factory=dict)
    values: dict[str, MeasuredValue] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


def gemm_peak(acc: Accelerator, precision: str) -> float | None:
    """The catalog's dense peak for a GEMM precision (fp16 falls back to bf16: the same tensor cores)."""
    pf = acc.peak_flops
    return {"bf16": pf.bf16, "fp16": pf.fp16 or pf.bf16, "fp8": pf.fp8}.get(precision)


def analyze(raw: RawRun, catalog: Catalog, accelerator: str, system: str | None = None) -> CalibrationFile:
    """Fit the raw run; values for each fit that is physically plausible, a note for each that is not."""
    acc = catalog.accelerator(accelerator)
    sys_id = catalog.system(system).id if system else None
    synthetic = raw.recorded.strip().lower().startswith("synthetic")
    machine = MachineRef(kind="accelerator", id=acc.id, name=_device_text(raw.device))
    node = MachineRef(kind="node", id=sys_id, name=f"{raw.device.count} x {raw.device.name}") if sys_id else None
    values: dict[str, MeasuredValue] = {}
    notes: list[str] = []
    tool = raw.tool + (" (synthetic sample)" if synthetic else "")

    def value(key: str, v: float, unit: str, on: MachineRef, note: str) -> None:
        values[key] = MeasuredValue(value=v, unit=unit, machine=on, date=raw.date, tool=tool, note=note)

    gemm: dict[str, GemmSummary] = {}
    for precision, points in sorted(raw.gemm.items()):
        peak = gemm_peak(acc, precision) if precision in GEMM_PRECISIONS else None
        if peak is None:
            notes.append(f"gemm {precision}: no dense {precision} peak for {acc.id} in the catalog; not fitted")
            continue
        f = fit_gemm([p.m for p in points], [p.n for p in points], [p.k for p in points],
                     [p.seconds for p in points], peak)
        gemm[precision] = GemmSummary(peak_flops=peak, e_max=f.e_max, kernel_overhead_s=f.kernel_overhead_s,
                                      best_flops_per_s=f.best_flops_per_s, mape=f.line.mape,
                                      max_error=f.line.max_error, points=f.line.points)
        if f.e_max > E_MAX_CEILING:
            notes.append(f"gemm {precision}: e_max {f.e_max:.2f} exceeds the catalog's dense peak "
                         f"({peak / 1e12:.0f} TFLOP/s): check the peak (sparse? boost clock?); no value written")
            continue
        fit_note = f"fit t = F/(e_max peak) + t0 over {f.line.points} shapes, MAPE {f.line.mape:.1%}"
        value(f"accelerator.gemm_e_max.{precision}", f.e_max, "1", machine, fit_note)
        value(f"accelerator.gemm_kernel_overhead_s.{precision}", f.kernel_overhead_s, "s", machine, fit_note)

    hbm = None
    if raw.hbm:
        s = fit_stream([p.bytes for p in raw.hbm], [p.seconds for p in raw.hbm], acc.memory_bandwidth_bytes_per_s)
        hbm = BandwidthSummary(bytes_per_s=s.bytes_per_s, latency_s=s.latency_s, fraction_of_datasheet=s.fraction,
                               mape=s.line.mape, points=s.line.points)
        if s.fraction is not None and s.fraction > 1.0:
            notes.append(f"hbm: {s.bytes_per_s / 1e12:.2f} TB/s exceeds the datasheet "
                         f"{(acc.memory_bandwidth_bytes_per_s or 0) / 1e12:.2f} TB/s (caches?); no value written")
        else:
            value("accelerator.hbm_bandwidth_bytes_per_s", s.bytes_per_s, "B/s", machine,
                  f"stream triad, fit t = bytes/BW + t0 over {s.line.points} sizes"
                  + (f"; {s.fraction:.1%} of the datasheet" if s.fraction else ""))

    collectives: dict[str, BandwidthSummary] = {}
    for name, run in sorted(raw.collectives.items()):
        c = fit_collective(name, run.ranks, [p.bytes for p in run.points], [p.seconds for p in run.points])
        collectives[name] = BandwidthSummary(bytes_per_s=c.bytes_per_s, latency_s=c.latency_s, ranks=run.ranks,
                                             mape=c.line.mape, points=c.line.points)
        if node is None:
            notes.append(f"{name}: bus bandwidth not bound to a node type (pass --system); not written as a value")
            continue
        domain = catalog.system(node.id).scale_up_domain_gpus
        if run.ranks > domain:
            notes.append(f"{name}: {run.ranks} ranks exceed the {domain}-GPU scale-up domain of {node.id}; "
                         "not a scale-up figure, not written as a value")
            continue
        if name in ("all_reduce", "all_to_all"):
            value(f"fabric.scale_up_busbw_bytes_per_s.{name}", c.bytes_per_s, "B/s", node,
                  f"NCCL {name} over {run.ranks} GPUs, fit t = factor x S/busbw + latency")
    return CalibrationFile.model_validate({
        "schema": FILE_SCHEMA, "accelerator": acc.id, "system": sys_id, "synthetic": synthetic,
        "recorded": raw.recorded, "device": raw.device, "date": raw.date, "tool": raw.tool, "gemm": gemm,
        "hbm": hbm, "collectives": collectives, "values": values, "notes": notes})


def _device_text(d: DeviceInfo) -> str:
    parts = [d.name] + [f"{k} {v}" for k, v in (("driver", d.driver), ("runtime", d.runtime), ("torch", d.torch))
                        if v]
    return ", ".join(parts)
