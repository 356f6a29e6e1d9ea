"""Process wall time of `wkc compile` on the bundled examples (issue goal: <= 1 s end to end).

Runs each example several times in fresh processes (start-up and imports included, as a user
sees it) and prints the median and the best beside the goal. The machine is shared: read the
median, not a single run.

    python benchmarks/bench_compile.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 1.0


def wall_times(example: Path, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "workload_compiler.cli.main", "compile", str(example), "--json"],
                       check=False, capture_output=True, cwd=ROOT)
        times.append(time.perf_counter() - t0)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"{'example':<36} {'median s':>9} {'best s':>8} {'goal s':>7}  ratio (goal / median)")
    for example in sorted((ROOT / "examples").glob("*.yaml")):
        if example.name.startswith("offers-"):   # input of `wkc supply --offers`, not an intake
            continue
        t = wall_times(example, args.runs)
        med = statistics.median(t)
        print(f"{example.name:<36} {med:9.2f} {min(t):8.2f} {GOAL_S:7.2f}  {GOAL_S / med:.2f}x")


if __name__ == "__main__":
    main()
