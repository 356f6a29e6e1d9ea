"""Readers of published HPC records, one per category: a record -> `HpcCase`s or `SkipRecord`.

Values are taken only from the record itself; anything interpreted (a GPU variant, a midpoint of a
published range, a mean over matrix sizes) is said in the case's note. Each case predicts its
figure through the HPC model (hpc/classes.py, roofline.py, scaling.py) from a set of constants.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..catalog.loader import Catalog
from ..hpc.classes import MD_CALIBRATED_CODES, MD_SCALING_CODES, ClassOptions, HaloTransport, class_profile
from ..hpc.device import Device
from ..hpc.fitted import HpcConstants
from ..hpc.roofline import compute_rate, memory_rate
from ..hpc.scaling import step_times
from ..perf.collectives import NVLINK_EFFICIENCY, NVLINK_LATENCY_S, all_reduce_s
from .hpc_case import HpcCase, SkipRecord, accelerator, device, gpu_count, join, measured, problem_text


def _hpl(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = accelerator(rec)
    m = measured(rec)
    d = device(rec, catalog, acc)
    gpus = gpu_count(rec)
    n = (rec.get("problem_size") or {}).get("value")
    if m.get("hpl_tflops_per_gpu_low") is not None:
        lo, hi = float(m["hpl_tflops_per_gpu_low"]), float(m["hpl_tflops_per_gpu_high"])
        published, note = (lo + hi) / 2, join(note, f"published range {lo:g}-{hi:g} TF, midpoint")
    elif m.get("rmax_tflops") is not None and gpus:
        published = float(m["rmax_tflops"]) / gpus
        note = join(note, f"Rmax / {gpus} GPUs" + (" (installed count: a lower bound)" if gpus > 64 else ""))
    else:
        raise SkipRecord("no GPU count in the record: Rmax of the whole list entry cannot be split per GPU")

    def predict(c: HpcConstants) -> float:
        if isinstance(n, int | float) and gpus:
            p = class_profile("dense_linear_algebra", "fp64", float(n), c=c)
            t = float(step_times(p, d, float(n), gpus, c=c).total_s[0])
            # HPL reports Rmax with its own operation count, 2/3 N^3 (+ O(N^2), dropped).
            return 2.0 / 3.0 * float(n) ** 3 / t / gpus / 1e12
        return _gemm_rate(d, c) / 1e12
    return [HpcCase(group="hpl", record_id=rec["id"], quantity="HPL TFLOP/s per GPU", published=published,
                    accelerator=acc, gpus=gpus or 1, predict=predict, note=note)]


def _gemm_rate(d: Device, c: HpcConstants) -> float:
    kernel = class_profile("dense_linear_algebra", "fp64", 1e5, c=c).kernels[0]
    return compute_rate(d, kernel, "fp64", c)


def _dgemm(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = accelerator(rec)
    m = measured(rec)
    d = device(rec, catalog, acc)
    sizes = [float(v) for k, v in m.items() if k.startswith("dgemm_gflops_size_")]
    if m.get("gpu_dgemm_gflops") is not None:
        published = float(m["gpu_dgemm_gflops"]) / 1e3
    elif sizes:
        published, note = sum(sizes) / len(sizes) / 1e3, join(note, f"mean of {len(sizes)} matrix sizes")
    else:
        raise SkipRecord("no per-GPU DGEMM rate in the record")
    return [HpcCase(group="dgemm", record_id=rec["id"], quantity="DGEMM TFLOP/s per GPU", published=published,
                    accelerator=acc, gpus=1, predict=lambda c: _gemm_rate(d, c) / 1e12, note=note)]


def _stream(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = accelerator(rec)
    m = measured(rec)
    d = device(rec, catalog, acc)
    for key, scale, what in (("triad_tbps", 1.0, "triad"), ("gpu_d2d_gbps", 1e-3, "device copy"),
                             ("gpu_stream_gbps", 1e-3, "GPU stream")):
        if m.get(key) is not None:
            return [HpcCase(group="stream", record_id=rec["id"], quantity=f"HBM {what} TB/s",
                            published=float(m[key]) * scale, accelerator=acc, gpus=1, note=note,
                            predict=lambda c: memory_rate(d, "stream", "benchmark", c) / 1e12)]
    raise SkipRecord("no GPU memory bandwidth in the record")


def _fft(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = accelerator(rec)
    m = measured(rec)
    d = device(rec, catalog, acc)
    precision = "fp32" if "single" in str(rec.get("precision")).lower() else "fp64"
    gpus = max(gpu_count(rec), 1)
    cases = []
    for key, value in m.items():
        size = re.fullmatch(r"time_ms_N(\d+)", key)
        if size:
            cases.append(_fft_case(rec, acc, d, precision, int(size.group(1)), gpus, float(value), note,
                                   "time", suffix=f"#N{size.group(1)}"))
    side = (rec.get("problem_size") or {}).get("value")
    if isinstance(side, int) and m.get("time_per_fft_s") is not None:
        published = 1e3 * float(m["time_per_fft_s"])
        cases.append(_fft_case(rec, acc, d, precision, side, gpus, published, note, "time"))
    elif isinstance(side, int) and m.get("tflops") is not None:
        cases.append(_fft_case(rec, acc, d, precision, side, gpus, float(m["tflops"]), note, "rate"))
    if not cases:
        raise SkipRecord("no FFT time or rate with a grid size in the record")
    return cases


def _fft_case(rec: dict[str, Any], acc: str, d: Device, precision: str, side: int, gpus: int,
              published: float, note: str, kind: str, suffix: str = "") -> HpcCase:
    units = float(side) ** 3

    def predict(c: HpcConstants) -> float:
        p = class_profile("fft_spectral", precision, units, c=c)
        t = float(step_times(p, d, units, gpus, c=c).total_s[0])
        # A published FFT "rate" counts 5 N log2 N FLOPs per complex transform (the benchFFT convention).
        return 1e3 * t if kind == "time" else 5.0 * units * math.log2(units) / t / 1e12
    quantity = "time ms" if kind == "time" else "TFLOP/s (5 N log2 N)"
    return HpcCase(group="fft", record_id=rec["id"] + suffix, quantity=quantity, published=published,
                   accelerator=acc, gpus=gpus, predict=predict,
                   note=join(note, f"{side}^3 {precision} on {gpus} GPU(s)"))


def _md(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = accelerator(rec)
    m = measured(rec)
    atoms = (rec.get("problem_size") or {}).get("value")
    if not isinstance(atoms, int | float):
        raise SkipRecord("no single atom count in the record")
    text = problem_text(rec)
    if re.search(r"\bLJ\b|lennard", text, flags=re.IGNORECASE):
        raise SkipRecord("missing feature: a Lennard-Jones (no long-range electrostatics) MD profile; the MD "
                         "class is biomolecular PME MD (GROMACS/AMBER), and an LJ run's bytes and FLOPs per "
                         "atom-step are not published")
    application = str(rec.get("application") or "md")
    code = application.split()[0].lower()
    gpus = max(gpu_count(rec), 1)
    if code not in MD_CALIBRATED_CODES:
        raise SkipRecord(f"missing feature: an efficiency profile for {application}; the MD constants are "
                         f"fitted on {' and '.join(c.upper() for c in MD_CALIBRATED_CODES)} runs only")
    if gpus > 1 and code not in MD_SCALING_CODES:
        raise SkipRecord(f"missing feature: multi-GPU scaling of {application}; the Amdahl share of the MD "
                         f"class is measured on {', '.join(c.upper() for c in MD_SCALING_CODES)} (1 vs N GPUs)")
    opts = _md_options(text)
    precision = "fp64" if "double" in str(rec.get("precision")).lower() else "mixed"
    d = device(rec, catalog, acc)
    group = "md:" + code
    if m.get("ns_per_day") is not None:
        dt = re.search(r"(\d+(?:\.\d+)?)\s*fs", text)
        if dt is None:
            raise SkipRecord("ns/day without a timestep in the record")
        timestep = float(dt.group(1)) * 1e-15
        published, quantity = float(m["ns_per_day"]), "ns/day"

        def predict(c: HpcConstants) -> float:
            return timestep * 86400 / 1e-9 / _md_step(c)
    elif m.get("gatom_steps_per_s") is not None:
        published, quantity = float(m["gatom_steps_per_s"]), "Gatom-steps/s"

        def predict(c: HpcConstants) -> float:
            return float(atoms) / _md_step(c) / 1e9
    else:
        raise SkipRecord("no ns/day or atom-steps/s in the record")

    def _md_step(c: HpcConstants) -> float:
        p = class_profile("molecular_dynamics", precision, float(atoms), opts, c=c)
        return float(step_times(p, d, float(atoms), gpus, c=c).total_s[0])
    return [HpcCase(group=group, record_id=rec["id"], quantity=quantity, published=published, accelerator=acc,
                    gpus=gpus, predict=predict, note=join(note, f"{atoms:,.0f} atoms, {precision}"))]


_LENGTH = r"(\d+(?:\.\d+)?)\s*(nm|Å|A|angstroms?)\b"
_CUT = r"cut[- ]?offs?|cut\b|r_?c\s*="


def _md_options(text: str) -> ClassOptions:
    """Cut-off or neighbour count as the record states it: "1.2 nm cutoffs", "cut 9 A",
    "12 Å cut-off", "cutoff of 1.0 nm", "rc = 1.2 nm", "55 neighbors/atom"."""
    neighbors = re.search(r"(\d+)\s*neighbou?rs/atom", text)
    if neighbors:
        return ClassOptions(neighbors_per_atom=float(neighbors.group(1)))
    for pattern in (rf"{_LENGTH}\s*(?:{_CUT})", rf"(?:{_CUT})\s*(?:of|=|:)?\s*{_LENGTH}"):
        m = re.search(pattern, text, flags=re.IGNORECASE)
        if m:
            value, unit = float(m.group(1)), m.group(2).lower()
            return ClassOptions(cutoff_nm=value if unit == "nm" else value / 10.0)
    raise SkipRecord("no cut-off or neighbour count in the record")


def _cfd(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    if "fluidx3d" not in str(rec.get("application")).lower() and "lattice boltzmann" not in str(
            rec.get("application")).lower():
        raise SkipRecord("not a lattice-Boltzmann code: no class profile matches this solver")
    acc, note = accelerator(rec)
    gpus = max(gpu_count(rec), 1)
    # The record says how halos travel (data, not code): "host-staged" = through host memory.
    interconnect = str((rec.get("hardware") or {}).get("interconnect")).lower()
    host_staged = gpus > 1 and any(k in interconnect for k in ("host-staged", "host staged", "no gpu-direct"))
    d = device(rec, catalog, acc)
    size_text = str((rec.get("problem_size") or {}).get("value"))
    side_m = re.search(r"(\d+)\^3", size_text)
    largest = "largest" in size_text.lower()
    if side_m is None and not largest:
        raise SkipRecord("no box size in the record")
    cases = []
    for key, precision in (("mlups_fp32_fp32", "fp32"), ("mlups_fp32_fp16s", "fp16")):
        value = measured(rec).get(key)
        if value is None:
            continue
        if side_m is not None:
            units, size_note = float(side_m.group(1)) ** 3, f"{side_m.group(1)}^3 cells"
        else:   # the largest cubic grid the GPUs' memory holds (FluidX3D benchmark setup)
            per_cell = class_profile("cfd_lbm", precision, 1.0).memory_per_unit_bytes
            units = gpus * d.memory_bytes / per_cell
            size_note = (f"largest cube: {gpus} x {d.memory_bytes / 1e9:g} GB / {per_cell:g} B per cell "
                         f"= {units ** (1 / 3):.0f}^3 cells")
        transport: HaloTransport = "host_staged" if host_staged else "gpu_direct"

        def predict(c: HpcConstants, precision: str = precision, units: float = units,
                    transport: HaloTransport = transport) -> float:
            p = class_profile("cfd_lbm", precision, units, c=c)
            p = replace(p, exchanges=tuple(replace(e, transport=transport) for e in p.exchanges))
            return units / float(step_times(p, d, units, gpus, c=c).total_s[0]) / 1e6
        cases.append(HpcCase(group="cfd:lbm", record_id=f"{rec['id']}#{precision}", quantity="MLUP/s",
                             published=float(value), accelerator=acc, gpus=gpus, predict=predict,
                             note=join(note, f"{size_note}, {precision} storage"
                                             + (", halos staged through host memory" if host_staged else ""))))
    if not cases:
        raise SkipRecord("no MLUP/s in the record")
    return cases


def _collective(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = accelerator(rec)
    m = measured(rec)
    d = device(rec, catalog, acc)
    gpus = gpu_count(rec)
    if m.get("allreduce_busbw_gbps_8GB") is None or gpus < 2 or d.scale_up_bandwidth_bytes_per_s is None:
        raise SkipRecord("no intra-node all-reduce bus bandwidth to compare")
    size = 8e9
    bw = d.scale_up_bandwidth_bytes_per_s * NVLINK_EFFICIENCY

    def predict(c: HpcConstants) -> float:
        t = float(all_reduce_s(size, gpus, bw, NVLINK_LATENCY_S))
        # nccl-tests bus bandwidth of an all-reduce: S/t x 2(n-1)/n (doc/PERFORMANCE.md).
        return 2.0 * (gpus - 1) / gpus * size / t / 1e9
    return [HpcCase(group="collective", record_id=rec["id"], quantity="all-reduce bus GB/s, 8 GB",
                    published=float(m["allreduce_busbw_gbps_8GB"]), accelerator=acc, gpus=gpus,
                    predict=predict,
                    note=join(note, "ring all-reduce of perf/collectives.py (no NVLink SHARP)"))]


READERS: dict[str, Callable[[dict[str, Any], Catalog], list[HpcCase]]] = {
    "hpl": _hpl, "dgemm": _dgemm, "stream": _stream, "fft": _fft, "md": _md, "cfd": _cfd,
    "collective": _collective}
