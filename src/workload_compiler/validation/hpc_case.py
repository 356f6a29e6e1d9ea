"""One HPC validation case, and what every record reader shares: the record's GPU in the catalog.

An `HpcCase` is one published figure of one record (a group such as `hpl`, `md:gromacs`,
`cfd:lbm`; the value; a function predicting it from a set of fitted constants, so fits and
leave-one-GPU-out run the same model code). `run_case` turns it into a report `Row`
(validation/report.py). A record the model cannot express raises `SkipRecord` with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..catalog.loader import Catalog
from ..hpc.device import Device, hpc_device
from ..hpc.fitted import FITTED, HpcConstants
from ..intake.limits import MAX_GPUS
from .report import Row

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


class SkipRecord(Exception):
    """A record the model cannot express; the message is the reason listed in the report."""


def run_case(case: HpcCase, constants: HpcConstants = FITTED) -> Row:
    """Published vs predicted; the accelerator stands in the report's model column, the case's
    note (how the published figure was read) in published_from."""
    return Row(id=case.record_id, group=case.group, model=case.accelerator, gpus=case.gpus, layout="",
               quantity=case.quantity, unit=case.quantity, published=case.published, predicted=case.predict(constants),
               published_from=case.note)


# gpu_type text -> catalog id. Order matters: the first pattern that matches wins.
_GPU_PATTERNS: tuple[tuple[str, str | None, str], ...] = (
    (r"gh200", "gh200", ""), (r"gb200", "gb200", ""), (r"gb300", "gb300", ""), (r"b300", "b300", ""),
    (r"b200", "b200", ""), (r"mi300a", "mi300a", ""), (r"mi300x", "mi300x", ""), (r"mi325x", "mi325x", ""),
    (r"mi355x", "mi355x", ""), (r"mi250x.*(gcd|counted per)", "mi250x-gcd", ""), (r"mi250x", "mi250x", ""),
    (r"mi250\b.*(gcd|counted per)", "mi250-gcd", ""),
    (r"mi250\b", None, "MI250 (package) is not in the catalog: records counted per GCD map to mi250-gcd"),
    (r"h200.*nvl", "h200-nvl", ""), (r"h200", "h200-sxm", ""), (r"h100.*pcie", "h100-pcie", ""),
    (r"h100.*nvl", "h100-nvl", ""), (r"h100.*(96|94) ?gb", "h100-sxm-96gb", ""), (r"h100", "h100-sxm", ""),
    (r"a100.*pcie.*80 ?gb", "a100-pcie-80gb", ""),
    (r"a100.*pcie", None, "A100 PCIe 40GB is not in the catalog (only the 80 GB card)"),
    (r"a100.*80 ?gb", "a100-sxm-80gb", ""), (r"a100.*40 ?gb", "a100-sxm-40gb", ""),
    (r"a100.*64 ?gb", "a100-sxm-40gb",
     "custom A100 64 GB mapped to A100 SXM4 40 GB (same FP64 peak and TDP; HBM differs)"),
    (r"v100.*pcie", None, "V100 PCIe is not in the catalog"), (r"v100", "v100", ""),
)
# Plain "A100": the 40 GB part on these systems (CSC Mahti docs; NERSC Perlmutter GPU nodes).
_A100_SYSTEMS = {"mahti": "a100-sxm-40gb", "perlmutter": "a100-sxm-40gb", "selene": "a100-sxm-80gb"}


def accelerator(rec: dict[str, Any]) -> tuple[str, str]:
    """(catalog accelerator id, note on how it was read) of the record's gpu_type text."""
    hw = rec.get("hardware") or {}
    text = str(hw.get("gpu_type") or "").lower()
    system = str(hw.get("system") or "").lower()
    for pattern, acc, note in _GPU_PATTERNS:
        if re.search(pattern, text):
            if acc is None:
                raise SkipRecord(note)
            return acc, note
    if re.search(r"\ba100\b", text):
        for name, acc in _A100_SYSTEMS.items():
            if name in system:
                return acc, f"plain 'A100' on {name}: {acc}"
    raise SkipRecord(f"accelerator {hw.get('gpu_type')!r} is not in the catalog")


def device(rec: dict[str, Any], catalog: Catalog, acc: str) -> Device:
    """The catalog system whose GPUs per node match the record's, else the reference system."""
    per_node = (rec.get("hardware") or {}).get("gpus_per_node")
    systems = [catalog.system(s) for s in catalog.systems_for(acc)]
    match = next((s.id for s in systems if s.gpus_per_node == per_node), None)
    return hpc_device(catalog, acc, match)


def measured(rec: dict[str, Any]) -> dict[str, Any]:
    return dict(rec.get("measured") or {})


def gpu_count(rec: dict[str, Any]) -> int:
    """hardware.gpu_count, 0 when the record does not give it."""
    count = int((rec.get("hardware") or {}).get("gpu_count") or 0)
    if not 0 <= count <= MAX_GPUS:
        raise SkipRecord(f"hardware.gpu_count {count} is outside 0..{MAX_GPUS}")
    return count


def problem_text(rec: dict[str, Any]) -> str:
    """Problem notes, value and benchmark name, where the readers look for cut-offs and timesteps."""
    ps = rec.get("problem_size") or {}
    return " ".join(str(x) for x in (ps.get("notes"), ps.get("value"), rec.get("benchmark")) if x)


def join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b
