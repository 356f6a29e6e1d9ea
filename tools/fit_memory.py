"""Fit the runtime reserve of the training memory model (perf/fitted_memory.py) and check it.

    python tools/fit_memory.py [--calibration DIR]

Prints the fit (validation/memory_fit.py: minimax on the measured peaks, every run that ran must
fit), its errors in sample, and the held-out checks: the measured peaks are all one source family
(torchtitan's Dec 2024 tables), so each of its six tables is predicted by a fit without it; every
other source family's runs are judged by a fit without that family's constraints. Copy the
constants and figures into src/workload_compiler/perf/fitted_memory.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from workload_compiler.units import GIB
from workload_compiler.validation.memory_fit import FitData, fit_data, fit_reserve
from workload_compiler.validation.record_layout import load_training_records
from workload_compiler.validation.suites import find_calibration_dir


def _table(peak_id: str) -> str:
    return peak_id.split("_")[2]          # torchtitan_2412_t4_2d -> t4


def _held_out_peaks(d: FitData) -> np.ndarray:
    errors = []
    tables = sorted({_table(i) for i in d.peak_ids})
    for t in tables:
        out = np.array([_table(i) == t for i in d.peak_ids])
        f = fit_reserve(d.peak_modeled[~out], d.peak_measured[~out], d.ran_modeled, d.ran_capacity)
        pred = f.fixed_bytes + (1.0 + f.fraction) * d.peak_modeled[out]
        e = pred / d.peak_measured[out] - 1.0
        print(f"  without {t}: {f.fixed_bytes / GIB:.2f} GiB + {100 * f.fraction:.2f} %  "
              f"-> {t} errors " + " ".join(f"{100 * x:+.1f}%" for x in e))
        errors += list(e)
    return np.array(errors)


def _held_out_families(d: FitData) -> None:
    fam = np.array(d.ran_families)
    for f_name in sorted(set(d.ran_families)):
        out = fam == f_name
        f = fit_reserve(d.peak_modeled, d.peak_measured, d.ran_modeled[~out], d.ran_capacity[~out])
        total = f.fixed_bytes + (1.0 + f.fraction) * d.ran_modeled[out]
        ok = total <= d.ran_capacity[out]
        worst = float(np.max(total / d.ran_capacity[out]))
        print(f"  without {f_name:16s}: {f.fixed_bytes / GIB:.2f} GiB + {100 * f.fraction:.2f} %  -> "
              f"{int(ok.sum())}/{int(out.sum())} of its runs fit, worst {100 * worst:.1f} % of HBM")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calibration", type=Path, default=None)
    args = ap.parse_args()
    d = fit_data(load_training_records(args.calibration or find_calibration_dir()))
    f = fit_reserve(d.peak_modeled, d.peak_measured, d.ran_modeled, d.ran_capacity)
    total = f.fixed_bytes + (1.0 + f.fraction) * d.ran_modeled
    fits = total <= d.ran_capacity
    print(f"RUNTIME_FIXED_BYTES = {f.fixed_bytes / GIB:.2f} GiB, RUNTIME_FRACTION = {f.fraction:.4f}")
    print(f"in sample: measured peaks ({len(d.peak_ids)}) MAPE {100 * f.peak_mean_error:.2f} %, "
          f"max {100 * f.peak_max_error:.2f} %; runs that ran: {int(fits.sum())}/{len(fits)} fit")
    for i in np.flatnonzero(~fits):
        print(f"  does not fit: {d.ran_ids[i]} ({total[i] / 1e9:.1f} GB of {d.ran_capacity[i] / 1e9:.1f} GB)")
    print("leave one torchtitan table out (the peaks):")
    e = _held_out_peaks(d)
    print(f"  held-out MAPE {100 * np.mean(np.abs(e)):.2f} %, max {100 * np.max(np.abs(e)):.2f} %")
    print("leave one source family out (the runs that ran):")
    _held_out_families(d)


if __name__ == "__main__":
    main()
