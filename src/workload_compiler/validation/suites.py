"""Validation suites: each maps calibration records to published-vs-predicted rows.

Add a suite (inference, HPC) by writing `rows(calibration_dir) -> (rows, skipped)` and listing it
in SUITES; `wkc validate` and the report pick it up.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..errors import InputError
from .report import Row, SkippedRow

Suite = Callable[[Path], tuple[list[Row], list[SkippedRow]]]


def training_suite(calibration_dir: Path) -> tuple[list[Row], list[SkippedRow]]:
    from .training_suite import training_rows
    return training_rows(calibration_dir)


def time_to_train_suite(calibration_dir: Path) -> tuple[list[Row], list[SkippedRow]]:
    from .training_suite import time_to_train_rows
    return time_to_train_rows(calibration_dir)


def inference_suite(calibration_dir: Path) -> tuple[list[Row], list[SkippedRow]]:
    from .inference_records import inference_rows
    return inference_rows(calibration_dir)


def hpc_suite(calibration_dir: Path) -> tuple[list[Row], list[SkippedRow]]:
    """HPC records (calibration/hpc_*.yaml) as report rows; the application is the group."""
    from .hpc_records import hpc_validation
    v = hpc_validation(calibration_dir)
    return v.rows, v.skipped


SUITES: dict[str, Suite] = {"training": training_suite, "time-to-train": time_to_train_suite,
                           "inference": inference_suite, "hpc": hpc_suite}


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
