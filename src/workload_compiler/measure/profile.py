"""`wkc profile`: the starter article's CPU profiling exercise as a tool.

Times the three stages of dataset.py apart, `repeats` times each, and reports the median and the
spread (standard deviation, min and max) with the machine it ran on. Its measured values are bound
to that machine's CPU model (a `cpu` machine reference). What it does not predict is said in every
output: a CPU exercise teaches measurement structure; it does not predict GPU training speed.
"""

from __future__ import annotations

import datetime as dt
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from ..intake.measured import MeasuredValue
from ..spine.doc import Doc
from .dataset import DataFiles, compute, drop_cache, parse, read_files, weights_for
from .machine import MachineInfo

SCHEMA = "wkc-profile/1"
DOES_NOT_PREDICT = (
    "This is a CPU exercise on this machine. It measures how this host reads, parses and computes on "
    "these records; it does not predict GPU training speed, a GPU node's loader throughput on another "
    "CPU model, or a parallel filesystem's bandwidth. Its values are bound to this CPU model and are "
    "never applied to another machine.")

Stage = Literal["read", "parse", "compute"]


class Spread(Doc):
    """Statistics of one timed stage over the repeats, in seconds."""
    median_s: float
    mean_s: float
    stdev_s: float
    min_s: float
    max_s: float
    samples_s: list[float]

    @classmethod
    def of(cls, samples: list[float]) -> Spread:
        return cls(median_s=statistics.median(samples), mean_s=statistics.fmean(samples),
                   stdev_s=statistics.stdev(samples) if len(samples) > 1 else 0.0,
                   min_s=min(samples), max_s=max(samples), samples_s=samples)

    @property
    def relative(self) -> float:
        """stdev / median: the spread as a fraction."""
        return self.stdev_s / self.median_s if self.median_s > 0 else 0.0


class StageResult(Doc):
    format: str
    stage: Stage
    time: Spread
    work: float = Field(description="bytes read, records parsed or FLOPs computed per repeat")
    work_unit: Literal["B", "records", "FLOP"]
    rate: float = Field(description="work / median time")
    rate_unit: Literal["B/s", "records/s", "FLOP/s"]


class DatasetInfo(Doc):
    source: Literal["generated", "input"]
    root: str
    seed: int | None
    formats: dict[str, dict[str, float]] = Field(description="format -> files, bytes, records")


class ProfileResult(Doc):
    schema_: str = Field(default=SCHEMA, alias="schema")
    date: dt.date
    tool: str
    machine: MachineInfo
    dataset: DatasetInfo
    repeats: int
    page_cache_dropped: bool = Field(description="the files' cached pages were dropped before each read")
    warmup: str = "one untimed pass over every format before the timed repeats"
    warm_read_s: dict[str, float] = Field(description="one read from the page cache, per format, for contrast")
    stages: list[StageResult]
    wall_s: float
    does_not_predict: str = DOES_NOT_PREDICT
    values: dict[str, MeasuredValue] = Field(description="what `--into` writes: measured values bound to this CPU")


Tick = Callable[[str], None]


def run_profile(files: list[DataFiles], machine: MachineInfo, *, repeats: int, dataset: DatasetInfo, tool: str,
                tick: Tick | None = None, today: dt.date | None = None) -> ProfileResult:
    """Time read, parse and compute for each format, `repeats` times; the stages never overlap."""
    started = time.perf_counter()
    rng = np.random.default_rng(1)
    samples: dict[tuple[str, str], list[float]] = {}
    work: dict[tuple[str, str], float] = {}
    dropped = True
    warm: dict[str, float] = {}
    weights = {}
    for f in files:   # one untimed pass: first-touch costs (BLAS threads, page faults, imports) stay out
        records = parse(f.fmt, read_files(f.paths))
        weights[f.fmt] = weights_for(records, rng)
        compute(records, rng, weights[f.fmt])
    for r in range(repeats):
        for f in files:
            dropped = drop_cache(f.paths) and dropped
            t0 = time.perf_counter()
            blobs = read_files(f.paths)
            t1 = time.perf_counter()
            records = parse(f.fmt, blobs)
            t2 = time.perf_counter()
            flops = compute(records, rng, weights[f.fmt])
            t3 = time.perf_counter()
            for stage, seconds in (("read", t1 - t0), ("parse", t2 - t1), ("compute", t3 - t2)):
                samples.setdefault((f.fmt, stage), []).append(seconds)
            work[(f.fmt, "read")] = float(sum(len(b) for b in blobs))
            work[(f.fmt, "parse")] = float(records.count)
            work[(f.fmt, "compute")] = flops
            if r == repeats - 1:        # the pages are cached now: one warm read for contrast
                t4 = time.perf_counter()
                read_files(f.paths)
                warm[f.fmt] = time.perf_counter() - t4
            if tick is not None:
                tick(f"repeat {r + 1}/{repeats}: {f.fmt}")
    if machine.storage.filesystem in ("tmpfs", "ramfs"):
        dropped = False          # the files live in memory: there is no storage read to time
    units = {"read": ("B", "B/s"), "parse": ("records", "records/s"), "compute": ("FLOP", "FLOP/s")}
    stages = []
    for (fmt, stage), ts in samples.items():
        spread = Spread.of(ts)
        wu, ru = units[stage]
        stages.append(StageResult.model_validate({
            "format": fmt, "stage": stage, "time": spread, "work": work[(fmt, stage)], "work_unit": wu,
            "rate": work[(fmt, stage)] / spread.median_s if spread.median_s > 0 else 0.0, "rate_unit": ru}))
    dataset.formats.update({f.fmt: {**dataset.formats.get(f.fmt, {}), "records": work[(f.fmt, "parse")]}
                            for f in files})
    day = today or dt.date.today()
    values = sheet_values(stages, samples, work, machine, day, tool, repeats, read_from_storage=dropped)
    return ProfileResult.model_validate({
        "schema": SCHEMA, "date": day, "tool": tool, "machine": machine, "dataset": dataset, "repeats": repeats,
        "page_cache_dropped": dropped, "warm_read_s": warm, "stages": stages,
        "wall_s": time.perf_counter() - started, "values": values})


def _rate_spread(work: float, times: list[float]) -> float:
    rates = [work / t for t in times if t > 0]
    return statistics.stdev(rates) if len(rates) > 1 else 0.0


def sheet_values(stages: list[StageResult], samples: dict[tuple[str, str], list[float]],
                 work: dict[tuple[str, str], float], machine: MachineInfo, day: dt.date, tool: str,
                 repeats: int, read_from_storage: bool = True) -> dict[str, MeasuredValue]:
    """The measured values a workload sheet takes: read rate of the whole data set (only when the
    page cache was dropped: a read from memory is not a storage rate), parse rate per core per
    format (one Python process: one core), NumPy FLOP/s of the compute stage."""
    ref = machine.ref()

    def mv(value: float, unit: str, spread: float, note: str) -> MeasuredValue:
        return MeasuredValue(value=float(f"{value:.4g}"), unit=unit, spread=float(f"{spread:.2g}"), repeats=repeats,
                             machine=ref, date=day, tool=tool, note=note)

    fmts = sorted({s.format for s in stages})
    out: dict[str, MeasuredValue] = {}
    read_total = [sum(samples[(f, "read")][r] for f in fmts) for r in range(repeats)]
    read_bytes = sum(work[(f, "read")] for f in fmts)
    if read_from_storage:
        out["host.read_bytes_per_s"] = mv(read_bytes / statistics.median(read_total), "B/s",
                                          _rate_spread(read_bytes, read_total),
                                          f"one process reading {read_bytes / 1e6:.1f} MB in the data set's files "
                                          f"({', '.join(fmts)}), page cache dropped first")
    for f in fmts:
        t = samples[(f, "parse")]
        records, nbytes = work[(f, "parse")], work[(f, "read")]
        if records <= 0:
            continue
        out[f"host.parse_records_per_s_per_core.{f}"] = mv(records / statistics.median(t), "items/s",
                                                           _rate_spread(records, t), f"{f} records, one core")
        out[f"host.parse_bytes_per_s_per_core.{f}"] = mv(nbytes / statistics.median(t), "B/s",
                                                         _rate_spread(nbytes, t), f"{f} records, one core")
    comp_total = [sum(samples[(f, "compute")][r] for f in fmts) for r in range(repeats)]
    flops = sum(work[(f, "compute")] for f in fmts)
    if flops > 0:
        out["host.compute_flops_per_s"] = mv(flops / statistics.median(comp_total), "FLOP/s",
                                             _rate_spread(flops, comp_total),
                                             f"NumPy {machine.libraries.get('numpy', '?')} "
                                             f"({machine.libraries.get('blas', 'BLAS unknown')}), "
                                             f"{machine.threads} logical CPUs")
    return out


def dataset_info(files: list[DataFiles], source: Literal["generated", "input"], root: Path,
                 seed: int | None) -> DatasetInfo:
    return DatasetInfo(source=source, root=str(root), seed=seed,
                       formats={f.fmt: {"files": float(len(f.paths)), "bytes": float(f.bytes)} for f in files})
