"""The HPC model's held-out error per solver class, for the bands on HPC headline numbers.

    python tools/hpc_uncertainty.py [--calibration DIR] [--write-uncertainty PATH]

(PATH: src/workload_compiler/catalog/data/uncertainty.yaml, the table the bands are read from.)

Every published HPC run the model can express (calibration/hpc_*.yaml) is predicted by constants
refitted without its GPU family (hpc/fit.py leave_one_gpu_out, what `wkc validate --suite hpc
--leave-one-gpu-out` reports). The signed errors of its rate (predicted / published - 1) are
grouped by the intake's solver class the record's group checks (validation/hpc_records.py
SOLVER_CLASS_OF_GROUP) and written as the section hpc_time_per_step of the uncertainty table:
a class with no run there (cfd_fv, weather_climate) gets no band, and says so.
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

from workload_compiler.hpc.classes import gpu_family
from workload_compiler.validation import uncertainty_table
from workload_compiler.validation.hpc_records import SOLVER_CLASS_OF_GROUP, hpc_validation
from workload_compiler.validation.suites import find_calibration_dir


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calibration", type=Path, default=None)
    ap.add_argument("--write-uncertainty", type=Path, default=None,
                    help="write the section hpc_time_per_step into this uncertainty.yaml")
    args = ap.parse_args(argv)
    v = hpc_validation(find_calibration_dir(args.calibration), with_leave_one_gpu_out=True)
    by: dict[str, list[float]] = collections.defaultdict(list)
    for r in v.leave_one_gpu_out:
        solver = SOLVER_CLASS_OF_GROUP.get(r.group)
        if solver is not None:
            by[solver].append(r.error)
    table = uncertainty_table.kind_table(by)
    used = [e for errs in by.values() for e in errs]
    print(f"{len(v.leave_one_gpu_out)} held-out runs, {len(used)} of a solver class")
    for kind, entry in table.items():
        print(f"  {kind:22s} {entry}")
    print(f"  overall {uncertainty_table.overall(used)}")
    if args.write_uncertainty is not None:
        gpus = sorted({gpu_family(r.model) for r in v.leave_one_gpu_out
                       if SOLVER_CLASS_OF_GROUP.get(r.group) is not None})
        uncertainty_table.write_section(args.write_uncertainty, "hpc_time_per_step", {
            "quantity": "the HPC time per step (and the time to solution and GPU count that follow from it)",
            "method": "leave-one-GPU-out error", "defined_on": "rate", "band": "symmetric",
            "gpu_families": gpus, "overall": uncertainty_table.overall(used), "kinds": table},
            "tools/hpc_uncertainty.py")
        print(f"wrote {args.write_uncertainty}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
