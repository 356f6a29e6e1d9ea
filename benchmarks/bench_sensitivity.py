"""Process time of `wkc sensitivity` (issue goal: <= 2 s of process time on the GPT-3 example).

Runs the command in fresh processes (start-up and imports included, as a user sees it), measures
the child's CPU time (user + system, from getrusage) and its wall time, and prints the median and
the best beside the goal, with how many assumptions were ranked and the time the analysis itself
reports. The machine is shared: CPU time is the figure to read, wall time is shown beside it.

    python benchmarks/bench_sensitivity.py [--runs 5] [--example examples/gpt3-175b-a100.yaml]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 2.0


def one_run(example: Path) -> tuple[float, float, dict[str, Any]]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # every search run: the goal is the computation's, not a read-back from the search cache
    done = subprocess.run([sys.executable, "-m", "workload_compiler.cli.main", "sensitivity", str(example), "--json"],
                          check=True, capture_output=True, cwd=ROOT, text=True, env={**os.environ, "WKC_CACHE": "off"})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--example", type=Path, default=ROOT / "examples" / "gpt3-175b-a100.yaml")
    args = parser.parse_args()
    cpu: list[float] = []
    wall: list[float] = []
    doc: dict[str, Any] = {}
    for _ in range(args.runs):
        c, w, doc = one_run(args.example)
        cpu.append(c)
        wall.append(w)
    rows = doc.get("rows", [])
    print(f"wkc sensitivity {args.example.name}: {len(rows)} assumptions ranked, "
          f"{len(doc.get('not_varied', {}))} not varied; analysis itself {doc.get('seconds', 0):.2f} s")
    print(f"{'':<14} {'median s':>9} {'best s':>8} {'goal s':>7}  ratio (goal / median)")
    for name, t in (("process time", cpu), ("wall time", wall)):
        med = statistics.median(t)
        print(f"{name:<14} {med:9.2f} {min(t):8.2f} {GOAL_S:7.2f}  {GOAL_S / med:.2f}x")


if __name__ == "__main__":
    main()
