"""Process wall time of `wkc --help` (goal <= 0.3 s) and of `wkc compile` on every bundled example
(goal <= 1 s end to end), beside the goals.

Each command runs several times in fresh processes (start-up and imports included, as a user sees
it: the `wkc` console script, the terminal report); the median and the best are printed beside
the goal, with the compile's own share (in-process `compile_workload`, warm, no search cache) so
start-up and work can be told apart. Each example is timed twice over: cold, every run with an
empty search cache (the first compile of an intake on a machine, every search run), and warm, the
searches found in the cache a first run left (the same intake compiled again:
planner/search_cache.py). The verdict is the cold one; the warm median is beside it. The machine
is shared: read the median, and the load average printed first. The machine's own speed is printed
first too (a bare interpreter start and a fixed pure-Python loop), so figures from two machines
can be compared: the goals were set on one 2-core machine, and the same command runs 3x slower on
a slower one. Then the stack floor (`stack_floor`): in a fresh process, the import of the libraries
the command needs and the creation of as many pydantic classes with as many fields as the package's
result and intake contract defines, then the schemas a compile of the HPC example builds: what any
compile costs before a line of our own code runs.

    python benchmarks/bench_compile.py [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WKC = Path(sys.executable).with_name("wkc")
HELP_GOAL_S = 0.3
COMPILE_GOAL_S = 1.0


def wall_times(args: list[str], runs: int, *, warm: bool = False) -> list[float]:
    """`runs` fresh processes; each with an empty search cache, or (`warm`) all with one that an
    untimed first run filled."""
    times = []
    with tempfile.TemporaryDirectory(prefix="wkc-bench-cache-") as kept:
        for i in range(runs + warm):
            cache = kept if warm else tempfile.mkdtemp(prefix="wkc-bench-cold-", dir=kept)
            t0 = time.perf_counter()
            subprocess.run([str(WKC), *args], check=False, capture_output=True, cwd=ROOT,
                           env={**os.environ, "COLUMNS": "100", "WKC_CACHE_DIR": cache, "WKC_CACHE": "on"})
            if not (warm and i == 0):
                times.append(time.perf_counter() - t0)
    return times


def in_process_s(example: Path) -> float:
    """compile_workload alone, in this process, after one warm-up (catalog cached), every search run."""
    from workload_compiler import compile_workload
    from workload_compiler.planner.search_cache import disabled
    with disabled():
        compile_workload(example)
        t0 = time.perf_counter()
        compile_workload(example)
    return time.perf_counter() - t0


def machine_reference(runs: int) -> str:
    """The median time of a bare `python -c pass` and of a fixed 10M-step Python loop, in fresh
    processes: what this machine does with no wkc code at all."""
    loop = "s = 0\nfor i in range(10_000_000):\n    s += i"
    starts, loops = [], []
    for _ in range(runs):
        for code, into in (("pass", starts), (loop, loops)):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            into.append(time.perf_counter() - t0)
    return (f"machine reference: python -c pass {statistics.median(starts):.3f} s, a 10M-step Python loop "
            f"{statistics.median(loops):.2f} s (median of {runs})")


# A floor no code of ours goes under: the libraries the command imports, then as many pydantic classes
# with as many fields as the result and intake contract defines (each field of the simplest kind, an
# optional float with a unit: ours cost more), with the schemas a compile builds. Run in a fresh
# process, with the settings of cli/startup.py.
FLOOR_CODE = """
import json, sys, time
from workload_compiler.cli.startup import tune_process
tune_process()
t0 = time.perf_counter()
import numpy, pydantic, rich.console, typer, yaml
t1 = time.perf_counter()
from pydantic import ConfigDict, Field, create_model
n_models, n_fields, n_built = map(int, sys.argv[1:4])
per, extra = divmod(n_fields, n_models)
field = (float | None, Field(None, description="a quantity", json_schema_extra={"unit": "s"}))
models = [create_model(f"M{i}", __config__=ConfigDict(defer_build=True, extra="forbid"),
                       **{f"f{j}": field for j in range(per + (i < extra))}) for i in range(n_models)]
t2 = time.perf_counter()
for m in models[:n_built]:
    m.model_rebuild(force=True)
t3 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2]))
"""


def contract_size(example: Path) -> tuple[int, int, int]:
    """(the package's pydantic models loaded in this process, the fields they hold, inherited ones
    included as pydantic collects them, the models whose schema is built), counted right after a
    compile of `example`: call it before anything else of the package loads."""
    import pydantic

    from workload_compiler import compile_workload
    from workload_compiler.planner.search_cache import disabled
    with disabled():
        compile_workload(example)
    seen: set[type] = set()
    todo = [pydantic.BaseModel]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
    ours = [m for m in seen if m.__module__.startswith("workload_compiler.")]
    return len(ours), sum(len(m.model_fields) for m in ours), sum(bool(m.__pydantic_complete__) for m in ours)


def stack_floor(example: Path, runs: int) -> str:
    """Median seconds of the floor (FLOOR_CODE) in fresh processes: the libraries, the classes, the
    schemas; the sum is what a compile of `example` costs before any of our code runs."""
    size = contract_size(example)
    parts: list[list[float]] = [[], [], []]
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", FLOOR_CODE, *map(str, size)], check=True,
                             capture_output=True, text=True).stdout
        for into, value in zip(parts, json.loads(out), strict=True):
            into.append(value)
    lib, classes, schemas = (statistics.median(p) for p in parts)
    return (f"stack floor ({example.name}): libraries {lib:.2f} s + {size[0]} pydantic classes with {size[1]} "
            f"fields {classes:.2f} s + the {size[2]} schemas a compile builds {schemas:.2f} s = "
            f"{lib + classes + schemas:.2f} s before any of our code (python start not included)")


def intakes() -> list[Path]:
    """The bundled intakes (an offers file is an input of `wkc supply --offers`, not an intake)."""
    return [p for p in sorted((ROOT / "examples").glob("*.yaml"))
            if any(line.startswith("kind:") for line in p.read_text(encoding="utf-8").splitlines())]


def row(name: str, t: list[float], goal: float, work: float | None, warm: list[float] | None = None) -> str:
    med = statistics.median(t)
    verdict = "ok" if med <= goal else "MISS"
    own = f"{work:9.2f}" if work is not None else f"{'':9}"
    again = f"{statistics.median(warm):8.2f} {'ok' if statistics.median(warm) <= goal else 'MISS':>4}" \
        if warm else f"{'':13}"
    return f"{name:<36} {med:9.2f} {min(t):8.2f} {goal:7.2f} {goal / med:7.2f}x {own} {again}  {verdict}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="time `--json` output instead of the terminal report")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {args.runs} runs each")
    print(machine_reference(args.runs))
    print(stack_floor(ROOT / "examples" / "hpc-molecular-dynamics.yaml", args.runs))
    print(f"{'command':<36} {'median s':>9} {'best s':>8} {'goal s':>7} {'goal/med':>8} {'compile s':>9} "
          f"{'warm s':>8} {'warm':>4}  cold")
    print(row("wkc --help", wall_times(["--help"], args.runs), HELP_GOAL_S, None))
    for example in intakes():
        cmd = ["compile", str(example), *(["--json"] if args.json else [])]
        print(row(example.name, wall_times(cmd, args.runs), COMPILE_GOAL_S, in_process_s(example),
                  wall_times(cmd, args.runs, warm=True)))


if __name__ == "__main__":
    main()
