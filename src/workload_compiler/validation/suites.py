"""Validation suites: each maps calibration records to published-vs-predicted rows.

Add a suite (inference, HPC) by writing `rows(calibration_dir) -> (rows, skipped)` and listing it
in SUITES; `wkc validate` and the report pick it up.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..perf.fitted import FITTED, TrainingConstants
from ..perf.layout import RECOMPUTE_NAMES, Layout
from ..perf.step_time import training_step
from .report import Row, SkippedRow
from .training_records import TrainingCase, load_records, training_cases

Suite = Callable[[Path], tuple[list[Row], list[SkippedRow]]]


def describe_layout(layout: Layout, precision: str) -> str:
    """Short text of a scalar layout: 'tp8 pp4 dp2 cp2 vp5 mbs1 z1 rc=none fp8'."""
    names = ("tp", "pp", "dp", "cp", "ep", "vp", "mbs", "zero")
    v = {name: int(np.asarray(getattr(layout, name))) for name in names}
    parts = [f"tp{v['tp']}", f"pp{v['pp']}", f"dp{v['dp']}"]
    parts += [f"{k}{v[k]}" for k in ("cp", "ep", "vp") if v[k] > 1]
    parts += [f"mbs{v['mbs']}", f"z{v['zero']}", f"rc={RECOMPUTE_NAMES[int(np.asarray(layout.recompute))]}",
              precision]
    return " ".join(parts)


def training_row(case: TrainingCase, constants: TrainingConstants = FITTED) -> Row:
    r = training_step(case.arch, case.setup, case.layout, case.hardware, constants)
    return Row(id=case.id, group=case.group, model=case.arch.name, gpus=case.gpus,
               layout=describe_layout(case.layout, case.setup.precision), quantity="step_time_s",
               published=case.published_step_time_s, predicted=float(r.step_time_s),
               published_from=case.published_from, assumptions=case.assumptions,
               breakdown={k: float(v) for k, v in r.breakdown_s.items()}, mfu=float(r.mfu))


def training_rows(calibration_dir: Path) -> tuple[list[Row], list[SkippedRow]]:
    cases, skipped = training_cases(load_records(calibration_dir))
    return ([training_row(c) for c in cases],
            [SkippedRow(id=s.id, group=s.group, reason=s.reason) for s in skipped])


def inference_suite(calibration_dir: Path) -> tuple[list[Row], list[SkippedRow]]:
    from .inference_records import inference_rows
    return inference_rows(calibration_dir)


def hpc_suite(calibration_dir: Path) -> tuple[list[Row], list[SkippedRow]]:
    """HPC records (calibration/hpc_*.yaml) as report rows; the application is the group."""
    from .hpc_records import hpc_validation
    v = hpc_validation(calibration_dir)
    return v.rows, v.skipped


SUITES: dict[str, Suite] = {"training": training_rows, "inference": inference_suite, "hpc": hpc_suite}


def find_calibration_dir(explicit: Path | None = None) -> Path:
    """--calibration DIR, else $WKC_CALIBRATION_DIR, else <repo>/../shared/calibration found by
    walking up from this package; InputError naming all three when none holds the files."""
    if explicit is not None:
        candidates = [Path(explicit)]
    elif os.environ.get("WKC_CALIBRATION_DIR"):
        candidates = [Path(os.environ["WKC_CALIBRATION_DIR"])]
    else:
        candidates = [p / "shared" / "calibration" for p in Path(__file__).resolve().parents]
    for c in candidates:
        if (c / "training_public.yaml").is_file():
            return c
    raise InputError("calibration", str(candidates[0]) if explicit or len(candidates) == 1 else None,
                     "a directory holding training_public.yaml: pass --calibration DIR or set "
                     "WKC_CALIBRATION_DIR (default: ../shared/calibration beside the repository)")
