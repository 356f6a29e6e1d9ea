"""Fit the training step-time constants (perf/fitted.py) on the published runs, and check them.

    python tools/fit_training.py [--calibration DIR] [--params a,b,...] [--no-logo]

Least squares on log(predicted / published step time) over every usable record of
calibration/training_public.yaml (validation/training_records.py), with scipy.optimize. Prints
the per-record table, per-group MAPE and max error, and a leave-one-group-out check: each source
family is predicted by constants fitted on the others only, which is the honest figure for runs
we do not have. Copy the printed constants into src/workload_compiler/perf/fitted.py.
scipy is a tool dependency (dev extra), never imported by the package.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares  # type: ignore[import-untyped]

from workload_compiler.perf.fitted import FITTED, TrainingConstants
from workload_compiler.validation.report import Row, mape, max_abs_error, summarize
from workload_compiler.validation.suites import find_calibration_dir, training_row
from workload_compiler.validation.training_records import TrainingCase, load_records, training_cases

# name -> (lower bound, upper bound); all fields of TrainingConstants may be fitted.
BOUNDS: dict[str, tuple[float, float]] = {
    "gemm_e_max": (0.3, 1.0),
    "gemm_kernel_overhead_s": (0.0, 5e-4),
    "attention_eff": (0.1, 1.0),
    "elementwise_mult": (0.0, 10.0),
    "tp_exposed": (0.0, 1.0),
    "overlap_contention": (0.0, 1.0),
}


def constants_of(theta: np.ndarray, names: list[str], base: TrainingConstants) -> TrainingConstants:
    return dataclasses.replace(base, **{n: float(v) for n, v in zip(names, theta, strict=True)})


def residuals(theta: np.ndarray, names: list[str], cases: list[TrainingCase],
              base: TrainingConstants) -> np.ndarray:
    k = constants_of(theta, names, base)
    return np.array([np.log(training_row(c, k).predicted / c.published_step_time_s) for c in cases])


def fit(cases: list[TrainingCase], names: list[str], base: TrainingConstants) -> TrainingConstants:
    x0 = np.array([getattr(base, n) for n in names])
    lo = np.array([BOUNDS[n][0] for n in names])
    hi = np.array([BOUNDS[n][1] for n in names])
    x0 = np.clip(x0, lo + 1e-9, hi - 1e-9)
    res = least_squares(residuals, x0, bounds=(lo, hi), args=(names, cases, base), x_scale="jac")
    return constants_of(res.x, names, base)


def print_table(rows: list[Row]) -> None:
    report = summarize(rows, [])
    for name, g in report.groups.items():
        print(f"\n== {name}: MAPE {g.mape:.1f}%  max {g.max_abs_error:.1f}%  ({len(g.rows)} records)")
        for r in g.rows:
            print(f"  {r.id[:58]:58s} {r.layout[:44]:44s} pub {r.published:9.3f} pred {r.predicted:9.3f}"
                  f" {r.error * 100:+6.1f}%")
    print(f"\nOVERALL MAPE {report.overall_mape:.2f}%  max {report.overall_max_abs_error:.1f}%  "
          f"({len(rows)} records)")


def leave_one_group_out(cases: list[TrainingCase], names: list[str], base: TrainingConstants) -> list[Row]:
    groups = sorted({c.group for c in cases})
    held: list[Row] = []
    for g in groups:
        train = [c for c in cases if c.group != g]
        k = fit(train, names, base)
        rows = [training_row(c, k) for c in cases if c.group == g]
        held += rows
        print(f"  hold out {g:16s} MAPE {mape(rows):6.1f}%  max {max_abs_error(rows):6.1f}%"
              f"  ({len(rows)} records)  fit on the rest: "
              + ", ".join(f"{n}={getattr(k, n):.4g}" for n in names))
    return held


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calibration", type=Path, default=None)
    ap.add_argument("--params", default=",".join(BOUNDS), help="comma-separated constants to fit")
    ap.add_argument("--no-logo", action="store_true", help="skip the leave-one-group-out check")
    args = ap.parse_args(argv)
    names = [n for n in args.params.split(",") if n]
    cases, skipped = training_cases(load_records(find_calibration_dir(args.calibration)))
    print(f"{len(cases)} records used, {len(skipped)} skipped")
    k = fit(cases, names, FITTED)
    print_table([training_row(c, k) for c in cases])
    print("\nFitted constants:")
    for f in dataclasses.fields(TrainingConstants):
        print(f"    {f.name}={getattr(k, f.name):.4g},")
    if not args.no_logo:
        print("\nLeave-one-group-out (each group predicted by constants fitted without it):")
        held = leave_one_group_out(cases, names, FITTED)
        print(f"  LOGO overall MAPE {mape(held):.2f}%  max {max_abs_error(held):.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
