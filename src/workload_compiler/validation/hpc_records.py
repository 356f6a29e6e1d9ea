"""Published HPC runs (calibration/hpc_*.yaml) -> HPC model inputs -> predicted vs published.

Each record that the model can express becomes one or more `HpcCase`s (a group such as `hpl`,
`md:gromacs`, `cfd:lbm`; the published figure; a function predicting it from a set of fitted
constants, so fits and leave-one-GPU-out run the same model code). Records it cannot express are
returned as `HpcSkip` with the reason. Values are taken only from the record itself; anything
interpreted (a GPU variant, a default box size) is said in the case's note.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..catalog.loader import Catalog, load_catalog
from ..errors import InputError
from ..hpc.classes import ClassOptions, class_profile
from ..hpc.device import Device, hpc_device
from ..hpc.fitted import FITTED, HpcConstants
from ..hpc.roofline import compute_rate, memory_rate
from ..hpc.scaling import step_times
from ..perf.collectives import NVLINK_EFFICIENCY, NVLINK_LATENCY_S, all_reduce_s

Predict = Callable[[HpcConstants], float]


@dataclass(frozen=True, kw_only=True)
class HpcCase:
    group: str
    record_id: str
    quantity: str
    published: float
    accelerator: str
    gpus: int
    predict: Predict
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class HpcRow:
    group: str
    record_id: str
    quantity: str
    published: float
    predicted: float
    accelerator: str
    note: str = ""

    @property
    def error(self) -> float:
        """predicted / published - 1."""
        return self.predicted / self.published - 1.0


@dataclass(frozen=True, kw_only=True)
class HpcSkip:
    record_id: str
    category: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class HpcValidation:
    rows: list[HpcRow]
    skipped: list[HpcSkip]
    leave_one_gpu_out: list[HpcRow] = field(default_factory=list)

    def mape_by_group(self, rows: list[HpcRow] | None = None) -> dict[str, float]:
        """Mean absolute percentage error (fraction) per group."""
        out: dict[str, list[float]] = {}
        for r in self.rows if rows is None else rows:
            out.setdefault(r.group, []).append(abs(r.error))
        return {g: sum(v) / len(v) for g, v in sorted(out.items())}


class _Skip(Exception):
    pass


def load_hpc_records(calibration_dir: Path) -> list[dict[str, Any]]:
    """Records of every calibration/hpc_*.yaml file (public set, and any holdout beside it)."""
    records: list[dict[str, Any]] = []
    for path in sorted(Path(calibration_dir).glob("hpc_*.yaml")):
        with path.open(encoding="utf-8") as fh:
            records.extend((yaml.safe_load(fh) or {}).get("records") or [])
    return records


def hpc_validation(calibration_dir: Path, catalog: Catalog | None = None, constants: HpcConstants = FITTED,
                   with_leave_one_gpu_out: bool = False) -> HpcValidation:
    """Predicted vs published for every expressible record; the others with the reason.

    With `with_leave_one_gpu_out`, also each GPU family's cases predicted by constants refitted
    without that family (hpc/fit.py; a few seconds).
    """
    from ..hpc.fit import leave_one_gpu_out

    records = load_hpc_records(calibration_dir)
    cases, skipped = hpc_cases(records, catalog or load_catalog())
    logo = leave_one_gpu_out(cases, records, constants) if with_leave_one_gpu_out else []
    rows = [run_case(c, constants) for c in cases]
    return HpcValidation(rows=rows, skipped=skipped, leave_one_gpu_out=logo)


def run_case(case: HpcCase, constants: HpcConstants = FITTED) -> HpcRow:
    return HpcRow(group=case.group, record_id=case.record_id, quantity=case.quantity,
                  published=case.published, predicted=case.predict(constants),
                  accelerator=case.accelerator, note=case.note)


def hpc_cases(records: list[dict[str, Any]], catalog: Catalog) -> tuple[list[HpcCase], list[HpcSkip]]:
    """Map every record to cases, or to a skip with its reason. Each case is run once here, so a
    record the model cannot evaluate (a catalog gap, an unreadable field) is a skip, not a crash."""
    cases: list[HpcCase] = []
    skipped: list[HpcSkip] = []
    for rec in records:
        category = str(rec.get("category"))
        try:
            handler = _HANDLERS.get(category)
            if handler is None:
                raise _Skip(_NOT_PREDICTED.get(category, f"category {category!r} has no model"))
            new = handler(rec, catalog)
            for case in new:
                case.predict(FITTED)
            cases.extend(new)
        except (_Skip, InputError) as exc:
            skipped.append(HpcSkip(record_id=str(rec.get("id")), category=category, reason=str(exc)))
        except (ValueError, TypeError, KeyError, ZeroDivisionError) as exc:
            skipped.append(HpcSkip(record_id=str(rec.get("id")), category=category,
                                   reason=f"record fields not in the expected form ({exc!r})"))
    return cases, skipped


_NOT_PREDICTED = {
    "green500": "system energy efficiency: the HPC model has no whole-system power (the facility layer "
                "sizes power)",
    "hpcg": "HPCG's rate depends on the local problem size and the vendor's multigrid code, which the "
            "records do not give (list entries lack the GPU count too)",
    "hpl_mxp": "HPL-MxP reports an LU rate in FP16/FP8 with iterative refinement, not modelled",
    "climate": "a GPU-vs-CPU speed-up: the model has no CPU baseline",
    "weather": "a GPU-vs-CPU speed-up of one offloaded scheme: the model has no CPU baseline",
    "node_config": "a node design: an input of hpc/host.py (cores, host memory per GPU), not a prediction",
    "storage": "measured storage bandwidth: an input of the scratch sizing, not a prediction",
    "rule_of_thumb": "a rule that sets a class default (hpc/classes.py), not a run",
}

# gpu_type text -> catalog id. Order matters: the first pattern that matches wins.
_GPU_PATTERNS: tuple[tuple[str, str | None, str], ...] = (
    (r"gh200", "gh200", ""), (r"gb200", "gb200", ""), (r"gb300", "gb300", ""), (r"b300", "b300", ""),
    (r"b200", "b200", ""), (r"mi300a", "mi300a", ""), (r"mi300x", "mi300x", ""), (r"mi325x", "mi325x", ""),
    (r"mi355x", "mi355x", ""), (r"mi250x.*(gcd|counted per)", "mi250x-gcd", ""), (r"mi250x", "mi250x", ""),
    (r"h200.*nvl", "h200-nvl", ""), (r"h200", "h200-sxm", ""), (r"h100.*pcie", "h100-pcie", ""),
    (r"h100.*nvl", "h100-nvl", ""), (r"h100.*(96|94) ?gb", "h100-sxm-96gb", ""), (r"h100", "h100-sxm", ""),
    (r"a100.*pcie", None, "A100 PCIe is not in the catalog"),
    (r"a100.*80 ?gb", "a100-sxm-80gb", ""), (r"a100.*40 ?gb", "a100-sxm-40gb", ""),
    (r"a100.*64 ?gb", "a100-sxm-40gb",
     "custom A100 64 GB mapped to A100 SXM4 40 GB (same FP64 peak and TDP; HBM differs)"),
    (r"v100.*pcie", None, "V100 PCIe is not in the catalog"), (r"v100", "v100", ""),
)
# Plain "A100": the 40 GB part on these systems (CSC Mahti docs; NERSC Perlmutter GPU nodes).
_A100_SYSTEMS = {"mahti": "a100-sxm-40gb", "perlmutter": "a100-sxm-40gb", "selene": "a100-sxm-80gb"}


def _accelerator(rec: dict[str, Any]) -> tuple[str, str]:
    hw = rec.get("hardware") or {}
    text = str(hw.get("gpu_type") or "").lower()
    system = str(hw.get("system") or "").lower()
    for pattern, acc, note in _GPU_PATTERNS:
        if re.search(pattern, text):
            if acc is None:
                raise _Skip(note)
            return acc, note
    if re.search(r"\ba100\b", text):
        for name, acc in _A100_SYSTEMS.items():
            if name in system:
                return acc, f"plain 'A100' on {name}: {acc}"
    raise _Skip(f"accelerator {hw.get('gpu_type')!r} is not in the catalog")


def _device(rec: dict[str, Any], catalog: Catalog, acc: str) -> Device:
    """The catalog system whose GPUs per node match the record's, else the reference system."""
    per_node = (rec.get("hardware") or {}).get("gpus_per_node")
    systems = [catalog.system(s) for s in catalog.systems_for(acc)]
    match = next((s.id for s in systems if s.gpus_per_node == per_node), None)
    return hpc_device(catalog, acc, match)


def _measured(rec: dict[str, Any]) -> dict[str, Any]:
    return dict(rec.get("measured") or {})


def _gpus(rec: dict[str, Any]) -> int:
    return int((rec.get("hardware") or {}).get("gpu_count") or 0)


def _text(rec: dict[str, Any]) -> str:
    ps = rec.get("problem_size") or {}
    return " ".join(str(x) for x in (ps.get("notes"), ps.get("value"), rec.get("benchmark")) if x)


def _hpl(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = _accelerator(rec)
    m = _measured(rec)
    d = _device(rec, catalog, acc)
    gpus = _gpus(rec)
    n = (rec.get("problem_size") or {}).get("value")
    if m.get("hpl_tflops_per_gpu_low") is not None:
        lo, hi = float(m["hpl_tflops_per_gpu_low"]), float(m["hpl_tflops_per_gpu_high"])
        published, note = (lo + hi) / 2, _join(note, f"published range {lo:g}-{hi:g} TF, midpoint")
    elif m.get("rmax_tflops") is not None and gpus:
        published = float(m["rmax_tflops"]) / gpus
        note = _join(note, f"Rmax / {gpus} GPUs" + (" (installed count: a lower bound)" if gpus > 64 else ""))
    else:
        raise _Skip("no GPU count in the record: Rmax cannot be split per GPU")

    def predict(c: HpcConstants) -> float:
        if isinstance(n, int | float) and gpus:
            p = class_profile("dense_linear_algebra", "fp64", float(n), c=c)
            t = float(step_times(p, d, float(n), gpus, c=c).total_s[0])
            return 2.0 / 3.0 * float(n) ** 3 / t / gpus / 1e12
        return _gemm_rate(d, c) / 1e12
    return [HpcCase(group="hpl", record_id=rec["id"], quantity="HPL TFLOP/s per GPU", published=published,
                    accelerator=acc, gpus=gpus or 1, predict=predict, note=note)]


def _gemm_rate(d: Device, c: HpcConstants) -> float:
    kernel = class_profile("dense_linear_algebra", "fp64", 1e5, c=c).kernels[0]
    return compute_rate(d, kernel, "fp64", c)


def _dgemm(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = _accelerator(rec)
    m = _measured(rec)
    d = _device(rec, catalog, acc)
    sizes = [float(v) for k, v in m.items() if k.startswith("dgemm_gflops_size_")]
    if m.get("gpu_dgemm_gflops") is not None:
        published = float(m["gpu_dgemm_gflops"]) / 1e3
    elif sizes:
        published, note = sum(sizes) / len(sizes) / 1e3, _join(note, f"mean of {len(sizes)} matrix sizes")
    else:
        raise _Skip("no per-GPU DGEMM rate in the record")
    return [HpcCase(group="dgemm", record_id=rec["id"], quantity="DGEMM TFLOP/s per GPU", published=published,
                    accelerator=acc, gpus=1, predict=lambda c: _gemm_rate(d, c) / 1e12, note=note)]


def _stream(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = _accelerator(rec)
    m = _measured(rec)
    d = _device(rec, catalog, acc)
    for key, scale, what in (("triad_tbps", 1.0, "triad"), ("gpu_d2d_gbps", 1e-3, "device copy"),
                             ("gpu_stream_gbps", 1e-3, "GPU stream")):
        if m.get(key) is not None:
            return [HpcCase(group="stream", record_id=rec["id"], quantity=f"HBM {what} TB/s",
                            published=float(m[key]) * scale, accelerator=acc, gpus=1, note=note,
                            predict=lambda c: memory_rate(d, "stream", False, c) / 1e12)]
    raise _Skip("no GPU memory bandwidth in the record")


def _fft(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = _accelerator(rec)
    m = _measured(rec)
    d = _device(rec, catalog, acc)
    precision = "fp32" if "single" in str(rec.get("precision")).lower() else "fp64"
    gpus = max(_gpus(rec), 1)
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
        raise _Skip("no FFT time or rate with a grid size in the record")
    return cases


def _fft_case(rec: dict[str, Any], acc: str, d: Device, precision: str, side: int, gpus: int,
              published: float, note: str, kind: str, suffix: str = "") -> HpcCase:
    units = float(side) ** 3

    def predict(c: HpcConstants) -> float:
        p = class_profile("fft_spectral", precision, units, c=c)
        t = float(step_times(p, d, units, gpus, c=c).total_s[0])
        return 1e3 * t if kind == "time" else 5.0 * units * math.log2(units) / t / 1e12
    quantity = "time ms" if kind == "time" else "TFLOP/s (5 N log2 N)"
    return HpcCase(group="fft", record_id=rec["id"] + suffix, quantity=quantity, published=published,
                   accelerator=acc, gpus=gpus, predict=predict,
                   note=_join(note, f"{side}^3 {precision} on {gpus} GPU(s)"))


def _md(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = _accelerator(rec)
    m = _measured(rec)
    atoms = (rec.get("problem_size") or {}).get("value")
    if not isinstance(atoms, int | float):
        raise _Skip("no single atom count in the record")
    text = _text(rec)
    if re.search(r"\bLJ\b", text):
        raise _Skip("Lennard-Jones without long-range electrostatics: the MD class default is biomolecular "
                    "PME MD (GROMACS/AMBER); an LJ run needs its own profile (bytes and FLOPs per atom-step)")
    opts = _md_options(text)
    precision = "fp64" if "double" in str(rec.get("precision")).lower() else "mixed"
    gpus = max(_gpus(rec), 1)
    d = _device(rec, catalog, acc)
    group = "md:" + str(rec.get("application") or "md").split()[0].lower()
    if m.get("ns_per_day") is not None:
        dt = re.search(r"(\d+(?:\.\d+)?)\s*fs", text)
        if dt is None:
            raise _Skip("ns/day without a timestep in the record")
        timestep = float(dt.group(1)) * 1e-15
        published, quantity = float(m["ns_per_day"]), "ns/day"

        def predict(c: HpcConstants) -> float:
            return timestep * 86400 / 1e-9 / _md_step(c)
    elif m.get("gatom_steps_per_s") is not None:
        published, quantity = float(m["gatom_steps_per_s"]), "Gatom-steps/s"

        def predict(c: HpcConstants) -> float:
            return float(atoms) / _md_step(c) / 1e9
    else:
        raise _Skip("no ns/day or atom-steps/s in the record")

    def _md_step(c: HpcConstants) -> float:
        p = class_profile("molecular_dynamics", precision, float(atoms), opts, c=c)
        return float(step_times(p, d, float(atoms), gpus, c=c).total_s[0])
    return [HpcCase(group=group, record_id=rec["id"], quantity=quantity, published=published, accelerator=acc,
                    gpus=gpus, predict=predict, note=_join(note, f"{atoms:,.0f} atoms, {precision}"))]


def _md_options(text: str) -> ClassOptions:
    neighbors = re.search(r"(\d+)\s*neighbou?rs/atom", text)
    if neighbors:
        return ClassOptions(neighbors_per_atom=float(neighbors.group(1)))
    nm = re.search(r"(\d+(?:\.\d+)?)\s*nm cut", text)
    angstrom = re.search(r"cut\s*(\d+(?:\.\d+)?)\s*(A|Å)\b", text)
    if nm:
        return ClassOptions(cutoff_nm=float(nm.group(1)))
    if angstrom:
        return ClassOptions(cutoff_nm=float(angstrom.group(1)) / 10.0)
    raise _Skip("no cut-off or neighbour count in the record")


def _cfd(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    if "fluidx3d" not in str(rec.get("application")).lower() and "lattice boltzmann" not in str(
            rec.get("application")).lower():
        raise _Skip("not a lattice-Boltzmann code: no class profile matches this solver")
    acc, note = _accelerator(rec)
    gpus = max(_gpus(rec), 1)
    if gpus > 1 and "host-staged" in str((rec.get("hardware") or {}).get("interconnect")).lower():
        raise _Skip("multi-GPU FluidX3D stages halos through host memory (OpenCL, no GPU-direct, not "
                    "overlapped); the model assumes GPU-direct halo exchange")
    d = _device(rec, catalog, acc)
    side_m = re.search(r"(\d+)\^3", str((rec.get("problem_size") or {}).get("value")))
    if side_m is None:
        raise _Skip("no box size in the record")
    units = float(side_m.group(1)) ** 3
    cases = []
    for key, precision in (("mlups_fp32_fp32", "fp32"), ("mlups_fp32_fp16s", "fp16")):
        value = _measured(rec).get(key)
        if value is None:
            continue

        def predict(c: HpcConstants, precision: str = precision) -> float:
            p = class_profile("cfd_lbm", precision, units, c=c)
            return units / float(step_times(p, d, units, gpus, c=c).total_s[0]) / 1e6
        cases.append(HpcCase(group="cfd:lbm", record_id=f"{rec['id']}#{precision}", quantity="MLUP/s",
                             published=float(value), accelerator=acc, gpus=gpus, predict=predict,
                             note=_join(note, f"{side_m.group(1)}^3 cells, {precision} storage")))
    if not cases:
        raise _Skip("no MLUP/s in the record")
    return cases


def _collective(rec: dict[str, Any], catalog: Catalog) -> list[HpcCase]:
    acc, note = _accelerator(rec)
    m = _measured(rec)
    d = _device(rec, catalog, acc)
    gpus = _gpus(rec)
    if m.get("allreduce_busbw_gbps_8GB") is None or gpus < 2 or d.scale_up_bandwidth_bytes_per_s is None:
        raise _Skip("no intra-node all-reduce bus bandwidth to compare")
    size = 8e9
    bw = d.scale_up_bandwidth_bytes_per_s * NVLINK_EFFICIENCY

    def predict(c: HpcConstants) -> float:
        t = float(all_reduce_s(size, gpus, bw, NVLINK_LATENCY_S))
        return 2.0 * (gpus - 1) / gpus * size / t / 1e9
    return [HpcCase(group="collective", record_id=rec["id"], quantity="all-reduce bus GB/s, 8 GB",
                    published=float(m["allreduce_busbw_gbps_8GB"]), accelerator=acc, gpus=gpus,
                    predict=predict,
                    note=_join(note, "ring all-reduce of perf/collectives.py (no NVLink SHARP)"))]


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b


_HANDLERS: dict[str, Callable[[dict[str, Any], Catalog], list[HpcCase]]] = {
    "hpl": _hpl, "dgemm": _dgemm, "stream": _stream, "fft": _fft, "md": _md, "cfd": _cfd,
    "collective": _collective}
