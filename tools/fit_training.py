"""Fit the training step-time constants (perf/fitted.py) on the published runs, and check them.

    python tools/fit_training.py [--calibration DIR] [--params a,b,...] [--no-logo] [--by-generation] [--table]
                                 [--floor]

Every record of calibration/training_public.yaml and training_added.yaml is compiled from the
intake a user would write (validation/training_suite.py); the compiled layout is then held fixed
and the step-time model re-evaluated under trial constants. Least squares on log(predicted /
published step time) with scipy.optimize; prints per-group and per-kind MAPE and max error, and a
leave-one-source-family-out check (each family predicted by constants fitted on the others only,
the honest figure for runs we do not have); --floor adds the error a free scale per cell (GPU x kind,
or source family x GPU x kind) would leave, and what the GPU x kind scales do to the held-out
Blackwell runs of tools/holdout_blackwell.py. Copy the printed constants into
src/workload_compiler/perf/fitted.py. scipy is a tool dependency (dev extra), never imported by
the package.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares  # type: ignore[import-untyped]

from workload_compiler.perf.fitted import FITTED, HELD, TrainingConstants
from workload_compiler.validation import uncertainty_table
from workload_compiler.validation.report import Row, mape, max_abs_error
from workload_compiler.validation.suites import find_calibration_dir
from workload_compiler.validation.training_intake import load_records
from workload_compiler.validation.training_suite import TrainingCase, step_row, training_cases

# name -> (lower bound, upper bound); all fields of TrainingConstants may be fitted.
BOUNDS: dict[str, tuple[float, float]] = {f.name: (0.0, 1.0) for f in dataclasses.fields(TrainingConstants)}
BOUNDS |= {"gemm_e_max": (0.3, 1.0), "gemm_kernel_overhead_s": (0.0, 5e-4), "attention_eff": (0.05, 1.0),
           "elementwise_mult": (0.0, 10.0), "moe_dropless_host_s": (0.0, 0.02)}


def constants_of(theta: np.ndarray, names: list[str], base: TrainingConstants) -> TrainingConstants:
    return dataclasses.replace(base, **{n: float(v) for n, v in zip(names, theta, strict=True)})


def residuals(theta: np.ndarray, names: list[str], cases: list[TrainingCase],
              base: TrainingConstants) -> np.ndarray:
    """log(predicted / published), each source family weighted alike (a residual of a family of
    n records counts 1/sqrt(n)), so one long table does not set the constants for all the others."""
    k = constants_of(theta, names, base)
    sizes = collections.Counter(c.group for c in cases)
    return np.array([np.log(step_row(c, k).predicted / _published(c)) / np.sqrt(sizes[c.group]) for c in cases])


def _published(case: TrainingCase) -> float:
    """The published step time (main() keeps only the cases that have one)."""
    published = case.record.published_step_time_s
    assert published is not None, case.id
    return published


def fit(cases: list[TrainingCase], names: list[str], base: TrainingConstants) -> TrainingConstants:
    """Least squares over the full-training runs: LoRA runs (setup.lora) are scored, never fitted on, so
    they test the frozen-weight model (no weight gradients) out of sample."""
    cases = [c for c in cases if c.setup.lora is None]
    x0 = np.array([getattr(base, n) for n in names])
    lo = np.array([BOUNDS[n][0] for n in names])
    hi = np.array([BOUNDS[n][1] for n in names])
    x0 = np.clip(x0, lo + 1e-12, hi - 1e-12)
    res = least_squares(residuals, x0, bounds=(lo, hi), args=(names, cases, base), x_scale="jac")
    return constants_of(res.x, names, base)


def print_groups(rows: list[Row], by: str, table: bool = False) -> None:
    groups: dict[str, list[Row]] = collections.defaultdict(list)
    for r in rows:
        groups[getattr(r, by)].append(r)
    for name, g in sorted(groups.items()):
        print(f"  {name:22s} MAPE {mape(g):5.1f}%  max {max_abs_error(g):5.1f}%  ({len(g)} records)")
        if table:
            for r in g:
                print(f"      {r.id[:58]:58s} {r.layout[:44]:44s} {r.error * 100:+6.1f}%")


def leave_one_group_out(cases: list[TrainingCase], names: list[str], base: TrainingConstants,
                        group_of: Callable[[TrainingCase], str] = lambda c: c.group) -> list[Row]:
    """Each group predicted by constants fitted on the others only: by source family (the default),
    or by GPU generation (`generation_of`: a new GPU, the case the product meets most)."""
    held: list[Row] = []
    for g in sorted({group_of(c) for c in cases}):
        k = fit([c for c in cases if group_of(c) != g], names, base)
        rows = [step_row(c, k) for c in cases if group_of(c) == g]
        held += rows
        print(f"  hold out {g:16s} MAPE {mape(rows):6.1f}%  max {max_abs_error(rows):6.1f}%  ({len(rows)} records)"
              "  fit on the rest: " + ", ".join(f"{n}={getattr(k, n):.4g}" for n in names))
    return held


def generation_of(case: TrainingCase) -> str:
    """The GPU generation of a case: the first word of its kind ('Hopper dense fp8' -> 'Hopper')."""
    return case.record.kind.split()[0]


def kind_table(rows: list[Row]) -> dict[str, dict[str, float]]:
    """Per kind: the rows of catalog/data/uncertainty.yaml (validation/uncertainty_table.py)."""
    by: dict[str, list[float]] = collections.defaultdict(list)
    for r in rows:
        by[r.kind].append(r.error)
    return uncertainty_table.kind_table(by)


def cell_of(case: TrainingCase) -> str:
    """The finest cell a scale could be fitted to without naming models or records: source family x
    GPU x kind (dense/MoE, precision)."""
    return f"{case.group} / {gpu_cell(case)}"


def gpu_cell(case: TrainingCase) -> str:
    """GPU x kind: the cell a per-GPU efficiency constant would act on."""
    return f"{case.hardware.accelerator_id} / {case.record.kind}"


def cell_scales(rows: list[Row], cells: list[str]) -> dict[str, float]:
    """Per cell, the scale s on the predicted step times that minimizes the cell's MAPE.

    With x_i = predicted_i / published_i, sum |s x_i - 1| = sum x_i |s - 1 / x_i| is least at the
    median of the 1 / x_i weighted by x_i."""
    by: dict[str, list[float]] = collections.defaultdict(list)
    for r, cell in zip(rows, cells, strict=True):
        by[cell].append(r.predicted / r.published)
    return {cell: _weighted_median(1.0 / np.asarray(x), np.asarray(x)) for cell, x in by.items()}


def _weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """A value v of `values` where the weights below v and above it are each at most half the total."""
    order = np.argsort(values)
    cum = np.cumsum(weights[order])
    return float(values[order][np.searchsorted(cum, 0.5 * cum[-1])])


def scaled(rows: list[Row], cells: list[str], scales: dict[str, float]) -> list[Row]:
    """The rows with each predicted step time times its cell's scale (1 where the cell has none)."""
    return [dataclasses.replace(r, predicted=r.predicted * scales.get(cell, 1.0))
            for r, cell in zip(rows, cells, strict=True)]


def scale_floor(rows: list[Row], cells: list[str]) -> list[Row]:
    """The rows as they would stand with a free scale per cell, each at its least MAPE: what no change
    that moves whole cells alike can do better than. The scatter left is between runs of one cell."""
    return scaled(rows, cells, cell_scales(rows, cells))


def print_floor(rows: list[Row], cases: list[TrainingCase], calibration: Path, k: TrainingConstants) -> None:
    """The floor by cell, and what the per-GPU cells' scales do to the held-out Blackwell runs
    (tools/holdout_blackwell.py): whether closing the in-sample gap that way would generalize."""
    print("\nScale floor: the error left with a free scale per cell (never fitted into perf/fitted.py):")
    picks = (("all", lambda r: True), ("Blackwell", lambda r: r.kind.startswith("Blackwell")),
             ("MoE", lambda r: " moe " in f" {r.kind} "))
    print("  " + " " * 38 + "".join(f"{label:>11s}" for label, _ in picks))
    print(f"  {'now':38s}" + "".join(f"{mape([r for r in rows if p(r)]):10.2f}%" for _, p in picks))
    for label, cell in (("a scale per GPU x kind", gpu_cell), ("a scale per source family x GPU x kind", cell_of)):
        cells = [cell(c) for c in cases]
        floor = scale_floor(rows, cells)
        print(f"  {label:38s}" + "".join(f"{mape([r for r in floor if p(r)]):10.2f}%" for _, p in picks)
              + f"   ({len(set(cells))} cells)")
    holdout = _holdout_tool()
    held_cases, _ = training_cases(holdout.records(calibration))
    held_cases = [c for c in held_cases if c.record.published_step_time_s is not None]
    held = [step_row(c, k) for c in held_cases]
    scales = cell_scales(rows, [gpu_cell(c) for c in cases])
    held_cells = [gpu_cell(c) for c in held_cases]
    print(f"  held-out Blackwell runs ({len(held)}): MAPE {mape(held):.2f}% now, "
          f"{mape(scaled(held, held_cells, scales)):.2f}% with the in-sample GPU x kind scales "
          f"({sum(c in scales for c in held_cells)} of them in a cell that has one)")


def _holdout_tool() -> Any:
    """tools/holdout_blackwell.py, a script beside this one (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("holdout_blackwell", Path(__file__).with_name("holdout_blackwell.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calibration", type=Path, default=None)
    fitted = [f.name for f in dataclasses.fields(TrainingConstants) if f.name not in HELD]
    ap.add_argument("--params", default=",".join(fitted), help="comma-separated constants to fit (default: all but "
                    "the held ones, perf/fitted.py HELD)")
    ap.add_argument("--no-logo", action="store_true", help="skip the leave-one-group-out check")
    ap.add_argument("--by-generation", action="store_true",
                    help="also hold out each GPU generation in turn (Ampere, Hopper, Blackwell)")
    ap.add_argument("--table", action="store_true", help="print every record")
    ap.add_argument("--floor", action="store_true",
                    help="print the error left with a free scale per cell (GPU x kind; source family x GPU x "
                    "kind) and what the GPU x kind scales do to the held-out Blackwell runs")
    ap.add_argument("--write-uncertainty", type=Path, default=None,
                    help="write the held-out error per kind into this uncertainty.yaml (section training_step_time)")
    args = ap.parse_args(argv)
    names = [n for n in args.params.split(",") if n]
    cases, skipped = training_cases(load_records(find_calibration_dir(args.calibration)))
    cases = [c for c in cases if c.record.published_step_time_s is not None]
    print(f"{len(cases)} records with a step time ({sum(not c.fits for c in cases)} judged not to fit), "
          f"{len(skipped)} not compiled")
    k = fit(cases, names, FITTED)
    rows = [step_row(c, k) for c in cases]
    print("\nIn sample, by source family:")
    print_groups(rows, "group", args.table)
    print("\nIn sample, by kind:")
    print_groups(rows, "kind")
    print(f"\nIN SAMPLE MAPE {mape(rows):.2f}%  max {max_abs_error(rows):.1f}%  ({len(rows)} records)")
    if args.floor:
        print_floor(rows, cases, find_calibration_dir(args.calibration), k)
    print("\nFitted constants:")
    for f in dataclasses.fields(TrainingConstants):
        print(f"    {f.name}={getattr(k, f.name):.4g},")
    if not args.no_logo:
        print("\nLeave-one-source-family-out (each family predicted by constants fitted without it):")
        held = leave_one_group_out(cases, names, FITTED)
        print("\n  held-out, by kind:")
        print_groups(held, "kind")
        print(f"  LOGO overall MAPE {mape(held):.2f}%  max {max_abs_error(held):.1f}%")
        table = kind_table(held)
        for kind, entry in table.items():
            print(f"    {kind:22s} {entry}")
        if args.write_uncertainty is not None:
            write_uncertainty(args.write_uncertainty, table, {"n": len(held), "mape_pct": round(mape(held), 2)},
                              sorted({c.hardware.accelerator_id for c in cases}))
    if args.by_generation:
        print("\nLeave-one-GPU-generation-out (each generation predicted by constants fitted on the others):")
        fitted_cases = [c for c in cases if c.setup.lora is None]
        by_generation = leave_one_group_out(fitted_cases, names, FITTED, generation_of)
        print(f"  LOGEN overall MAPE {mape(by_generation):.2f}%  max {max_abs_error(by_generation):.1f}%")
    return 0


def write_uncertainty(path: Path, table: dict[str, dict[str, float]], overall: dict[str, float],
                      accelerators: list[str]) -> None:
    """Replace the training_step_time section of the uncertainty table, keeping the others; `overall`
    is the held-out MAPE over every run (the sensitivity sweep's row for the model itself),
    `accelerators` the catalog GPUs the runs ran on."""
    uncertainty_table.write_section(path, "training_step_time", {
        "quantity": "the training step time (and the tokens/s, time to train and GPU count that follow from it)",
        "method": "leave-one-source-family-out error", "defined_on": "time", "band": "symmetric",
        "accelerators": accelerators, "overall": overall, "kinds": table}, "tools/fit_training.py")
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
