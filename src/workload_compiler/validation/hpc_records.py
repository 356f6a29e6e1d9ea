"""Published HPC runs (calibration/hpc_*.yaml) -> HPC model inputs -> predicted vs published.

Each record that the model can express becomes one or more `HpcCase`s (validation/hpc_case.py),
read by the reader of its category (validation/hpc_readers.py); the cases become report `Row`s
(validation/report.py). Records it cannot express are returned as `SkippedRow`s (group = the
record's category) with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..catalog.loader import Catalog, load_catalog
from ..errors import InputError
from ..hpc.classes import gpu_family
from ..hpc.fit import leave_one_gpu_out
from ..hpc.fitted import FITTED, HpcConstants
from .hpc_case import HpcCase, SkipRecord, run_case
from .hpc_readers import READERS
from .report import Row, SkippedRow

# The intake's solver class whose time per step each validation group checks (hpc/classes.py): the
# kind an HPC band is looked up by (spine/uncertainty.py). Memory streams and collectives check a
# term of every class, no class of its own; cfd_fv and weather_climate have no published run here.
SOLVER_CLASS_OF_GROUP = {"md:amber": "molecular_dynamics", "md:gromacs": "molecular_dynamics",
                         "cfd:lbm": "cfd_lbm", "hpl": "dense_linear_algebra", "dgemm": "dense_linear_algebra",
                         "fft": "fft_spectral"}


@dataclass(frozen=True, kw_only=True)
class HpcValidation:
    rows: list[Row]
    skipped: list[SkippedRow]
    leave_one_gpu_out: list[Row] = field(default_factory=list)

    def mape_by_group(self, rows: list[Row] | None = None) -> dict[str, float]:
        """Mean absolute percentage error (fraction) per group."""
        return _mape_by(self.rows if rows is None else rows, lambda r: r.group)

    def mape_by_family(self, rows: list[Row] | None = None) -> dict[str, float]:
        """Mean absolute percentage error (fraction) per GPU family (a100, mi250x, ...)."""
        return _mape_by(self.rows if rows is None else rows, lambda r: gpu_family(r.model))

    def summary(self) -> dict[str, Any]:
        """In-sample and leave-one-GPU-out MAPE (fractions) per GPU family and per group, overall."""
        logo = self.leave_one_gpu_out
        out: dict[str, Any] = {"cases": len(self.rows), "skipped": len(self.skipped),
                               "in_sample_mape": _mape(self.rows),
                               "in_sample_by_family": self.mape_by_family(),
                               "in_sample_by_group": self.mape_by_group()}
        if logo:
            out |= {"leave_one_gpu_out_mape": _mape(logo), "leave_one_gpu_out_by_family": self.mape_by_family(logo),
                    "leave_one_gpu_out_by_group": self.mape_by_group(logo),
                    "leave_one_gpu_out_max": max(abs(r.error) for r in logo)}
        return out


def _mape(rows: list[Row]) -> float:
    return sum(abs(r.error) for r in rows) / len(rows) if rows else float("nan")


def _mape_by(rows: list[Row], key: Callable[[Row], str]) -> dict[str, float]:
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return {k: _mape(v) for k, v in sorted(out.items())}


def load_hpc_records(calibration_dir: Path) -> list[dict[str, Any]]:
    """Records of every calibration/hpc_*.yaml file (public set, and any holdout beside it)."""
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # C parser: ~10x faster
    records: list[dict[str, Any]] = []
    for path in sorted(Path(calibration_dir).glob("hpc_*.yaml")):
        with path.open(encoding="utf-8") as fh:
            records.extend((yaml.load(fh, Loader=loader) or {}).get("records") or [])
    return records


def hpc_validation(calibration_dir: Path, catalog: Catalog | None = None, constants: HpcConstants = FITTED,
                   with_leave_one_gpu_out: bool = False) -> HpcValidation:
    """Predicted vs published for every expressible record; the others with the reason.

    With `with_leave_one_gpu_out`, also each GPU family's cases predicted by constants refitted
    without that family (hpc/fit.py; a few seconds).
    """
    records = load_hpc_records(calibration_dir)
    cases, skipped = hpc_cases(records, catalog or load_catalog())
    logo = leave_one_gpu_out(cases, records) if with_leave_one_gpu_out else []
    rows = [run_case(c, constants) for c in cases]
    return HpcValidation(rows=rows, skipped=skipped, leave_one_gpu_out=logo)


def hpc_cases(records: list[dict[str, Any]], catalog: Catalog) -> tuple[list[HpcCase], list[SkippedRow]]:
    """Map every record to cases, or to a skip with its reason. Each case is run once here, so a
    record the model cannot evaluate (a catalog gap, an unreadable field) is a skip, not a crash."""
    cases: list[HpcCase] = []
    skipped: list[SkippedRow] = []
    for rec in records:
        category = str(rec.get("category"))
        try:
            reader = READERS.get(category)
            if reader is None:
                raise SkipRecord(_NOT_PREDICTED.get(category, f"category {category!r} has no model"))
            new = reader(rec, catalog)
            for case in new:
                value = case.predict(FITTED)
                if not (math.isfinite(value) and value > 0 and math.isfinite(case.published) and case.published > 0):
                    raise SkipRecord(f"record fields not in the expected form (published {case.published!r}, "
                                     f"predicted {value!r})")
            cases.extend(new)
        except (SkipRecord, InputError) as exc:
            skipped.append(SkippedRow(id=str(rec.get("id")), group=category, reason=str(exc)))
        except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError) as exc:
            skipped.append(SkippedRow(id=str(rec.get("id")), group=category,
                                      reason=f"record fields not in the expected form ({exc!r})"))
    return cases, skipped


_NOT_PREDICTED = {
    "green500": "missing feature: whole-system power during HPL (the facility layer sizes provisioned power, "
                "not the power a benchmark draws)",
    "hpcg": "missing feature: a sparse multigrid-preconditioned CG class (HPCG's rate depends on the local "
            "problem size and the vendor's multigrid code, which the records do not give)",
    "hpl_mxp": "missing feature: low-precision LU (HPL-MxP: FP16/FP8 GEMMs inside an LU plus iterative "
               "refinement; the records give no matrix order either)",
    "climate": "a GPU-vs-CPU speed-up: the model has no CPU baseline",
    "weather": "a GPU-vs-CPU speed-up of one offloaded scheme: the model has no CPU baseline",
    "node_config": "a node design: an input of hpc/host.py (cores, host memory per GPU), not a prediction",
    "storage": "measured storage bandwidth: an input of the scratch sizing, not a prediction",
    "rule_of_thumb": "a rule that sets a class default (hpc/classes.py), not a run",
}
