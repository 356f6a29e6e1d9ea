"""The large one-off fuzz run: N mutated intakes through the Python API and the CLI.

    python tools/fuzz_intakes.py --cases 20000 --workers 2 [--seed 1] [--timeout 20] [--out fuzz.json]
                                 [--search-cache DIR]

Each case is a bundled example or a small intake with 1-3 hostile edits (tests/intake_mutations.py).
Python API cases call `compile_workload` and dump the result; CLI cases (a fraction) run
`wkc compile FILE --json|--md|` or `wkc fit` with hostile flags in-process (typer's CliRunner).
Counted: results, our errors (InputError, other WorkloadError), exceptions that are not ours,
`InfeasibleError` raised out of compile_workload, results holding inf/NaN, CLI JSON that a strict
parser rejects, tracebacks at the CLI, cases slower than --timeout. Warnings are errors. Each
worker's address space is capped (--memory-gb) so a runaway case fails instead of swapping.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import resource
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from intake_mutations import base_intakes, mutate, mutate_valid, non_finite

FIT_VALUES = ["2MW", "abc", "0", "-1MW", "1e30W", "40kW", "1W", "1e9MW", "inf", "", "5", "2.5MW", "nan"]


class Slow(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise Slow()


def _site(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "workload_compiler" in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].name}" if frames else "?"
    return f"{type(exc).__name__} in {where}"


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"non-JSON constant {name}")
    return json.loads(text, parse_constant=refuse)


def _api_case(intake: dict[str, Any]) -> tuple[str, str]:
    from workload_compiler import compile_workload
    from workload_compiler.errors import InfeasibleError, InputError, WorkloadError
    try:
        spec = compile_workload(intake)
        doc = spec.model_dump(mode="json")
        bad = non_finite(doc)
        if bad:
            return "non_finite", bad[0]
        json.dumps(doc, allow_nan=False)
        return "result", ""
    except InfeasibleError as exc:
        return "infeasible_raised", exc.binding
    except InputError:
        return "input_error", ""
    except WorkloadError as exc:
        return "our_error", type(exc).__name__
    except Slow:
        raise
    except BaseException as exc:  # counting what is not ours is the point
        return "not_ours", _site(exc)


def _cli_case(intake: dict[str, Any], rng: random.Random, tmp: Path) -> tuple[str, str]:
    import yaml
    from typer.testing import CliRunner

    from workload_compiler.cli.main import app
    runner = CliRunner()
    if rng.random() < 0.2:
        args = ["fit", "--power", rng.choice(FIT_VALUES), "--rack-power", rng.choice(FIT_VALUES),
                "--cooling", rng.choice(["air", "dlc", "foo", ""])]
        if rng.random() < 0.5:
            args += ["--model", rng.choice(["llama3-8b", "llama3.1-405b", "nope"]), "--tokens",
                     rng.choice(["15T", "0", "-1", "1e40", "abc"])]
        args += ["--json"] if rng.random() < 0.5 else []
    else:
        path = tmp / f"case{rng.randrange(10**9)}.yaml"
        try:
            path.write_text(yaml.safe_dump(intake, allow_unicode=True), encoding="utf-8")
        except Exception:
            return "skipped", ""
        args = ["compile", str(path), *rng.choice([["--json"], ["--md"], []])]
    result = runner.invoke(app, args, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        if isinstance(result.exception, Slow):
            raise Slow()
        return "cli_traceback", _site(result.exception)
    if result.exit_code not in (0, 2, 3):
        return "cli_exit", str(result.exit_code)
    if "--json" in args and result.exit_code in (0, 3):
        try:
            _strict(result.stdout)
        except ValueError as exc:
            return "cli_bad_json", str(exc)[:80]
    return f"cli_exit_{result.exit_code}", ""


def _worker(job: tuple[int, int, int, float, float, float, tuple[str, ...]]) -> list[tuple[str, str, float, str]]:
    start, count, seed, timeout, cli_fraction, memory_gb, skip = job
    limit = int(memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    warnings.simplefilter("error")
    signal.signal(signal.SIGALRM, _alarm)
    bases = base_intakes(skip)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(start, start + count):
            rng = random.Random(seed * 1_000_003 + i)
            base = rng.choice(bases)
            try:
                intake = (mutate_valid(base, rng, rng.choice([1, 2, 3, 4])) if rng.random() < 0.5
                          else mutate(base, rng, rng.choice([1, 1, 1, 2, 2, 3])))
            except Exception as exc:   # the generator's own failure is not a case
                out.append(("generator_error", type(exc).__name__, 0.0, ""))
                continue
            cli = rng.random() < cli_fraction
            t0 = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                outcome, detail = _cli_case(intake, rng, Path(tmp)) if cli else _api_case(intake)
            except Slow:
                outcome, detail = "slow", ""
            except MemoryError:
                outcome, detail = "not_ours", "MemoryError (worker limit)"
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            sample = json.dumps(intake, default=str)[:400] if outcome in BAD or outcome == "slow" else ""
            out.append((outcome, detail, time.perf_counter() - t0, sample))
    return out


BAD = {"not_ours", "infeasible_raised", "non_finite", "cli_traceback", "cli_exit", "cli_bad_json"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=20000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--cli-fraction", type=float, default=0.1)
    ap.add_argument("--memory-gb", type=float, default=3.0)
    ap.add_argument("--chunk", type=int, default=250)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--skip", default="", help="comma-separated example stems to leave out (slow deadline searches)")
    ap.add_argument("--search-cache", type=Path, default=None,
                    help="keep the planner's searches in this folder (run twice: the second run reads them back); "
                         "default off, so every case runs its own searches and its time is the computation's")
    a = ap.parse_args()
    if a.search_cache is None:
        os.environ["WKC_CACHE"] = "off"
    else:
        os.environ.update({"WKC_CACHE": "on", "WKC_CACHE_DIR": str(a.search_cache)})
    skip = tuple(x for x in a.skip.split(",") if x)
    jobs = [(s, min(a.chunk, a.cases - s), a.seed, a.timeout, a.cli_fraction, a.memory_gb, skip)
            for s in range(0, a.cases, a.chunk)]
    t0 = time.perf_counter()
    outcomes: Counter[str] = Counter()
    sites: Counter[str] = Counter()
    samples: dict[str, str] = {}
    seconds: list[float] = []
    with mp.get_context("fork").Pool(a.workers, maxtasksperchild=4) as pool:
        for rows in pool.imap_unordered(_worker, jobs):
            for outcome, detail, dt, sample in rows:
                outcomes[outcome] += 1
                seconds.append(dt)
                if outcome in BAD or outcome == "slow":
                    key = f"{outcome}: {detail}"
                    sites[key] += 1
                    samples.setdefault(key, sample)
            print(f"{len(seconds):,}/{a.cases:,} cases, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    seconds.sort()
    report = {"cases": sum(outcomes.values()), "seed": a.seed, "skipped_examples": list(skip),
              "search_cache": str(a.search_cache) if a.search_cache else "off",
              "wall_s": round(time.perf_counter() - t0, 1),
              "outcomes": dict(outcomes.most_common()),
              "bad": {k: v for k, v in outcomes.items() if k in BAD},
              "p50_s": seconds[len(seconds) // 2], "p99_s": seconds[int(len(seconds) * 0.99)], "max_s": seconds[-1],
              "sites": dict(sites.most_common()), "samples": samples}
    text = json.dumps(report, indent=2)
    if a.out:
        a.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
