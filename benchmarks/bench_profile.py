"""Process wall time of `wkc profile` at its default size (issue 11 goal: <= 60 s on the 2-core
development machine), start-up, generation, the timed repeats and clean-up included, as a user
sees it. Prints each run, the median and the ratio to the goal, and the stage medians of the last
run. The machine is shared: read the median.

    python benchmarks/bench_profile.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 60.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    times: list[float] = []
    doc: dict[str, object] = {}
    for i in range(args.runs):
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "workload_compiler.cli.main", "profile", "--json"],
                              check=True, capture_output=True, text=True, cwd=ROOT)
        times.append(time.perf_counter() - t0)
        doc = json.loads(done.stdout)
        print(f"run {i + 1}: {times[-1]:.1f} s (inside the command: {doc['wall_s']:.1f} s timed)")
    med = statistics.median(times)
    print(f"median {med:.1f} s, best {min(times):.1f} s, goal {GOAL_S:.0f} s: ratio goal / median {GOAL_S / med:.1f}x")
    machine = doc["machine"]
    assert isinstance(machine, dict)
    print(f"machine: {machine['cpu_model']}, {machine['cores']} cores, {machine['threads']} threads")
    stages = doc["stages"]
    assert isinstance(stages, list)
    for s in stages:
        t = s["time"]
        print(f"  {s['format']:<6} {s['stage']:<8} median {t['median_s'] * 1e3:9.1f} ms  "
              f"stdev {t['stdev_s'] * 1e3:7.1f} ms  min-max {t['min_s'] * 1e3:.1f}-{t['max_s'] * 1e3:.1f} ms  "
              f"rate {s['rate']:.4g} {s['rate_unit']}")


if __name__ == "__main__":
    main()
