"""Planner speed on the standard case, beside llm-analysis 0.2.2 measured in the same run.

Case (shared/reference/peers-training.md §6): GPT-3 175B (96 layers, h 12288, 96 heads, seq 2048),
global batch 1536, 1024 x A100-SXM-80GB, bf16. Second case (issue 7's goal: <= 5 s on 2 cores): the
whole space of DeepSeek-V3 (61 layers, MoE 256 experts, MLA, MTP) on 1,024 H100, FP8, seq 4096,
batch 8192, uneven pipeline splits included.

Two rates of ours, both honest about what they count:
  search      layouts enumerated per second by a whole `planner.search` (structural rules, memory
              model on the structurally valid ones, step-time model on those that fit, ranking;
              in a space the bound prunes, on the rows it does not rule out: planner/bound.py)
  model       layouts per second through the memory AND step-time models (the same work one
              llm-analysis `train()` call does for one layout): the structurally valid layouts of
              the space, tiled to ~1M, evaluated as arrays in chunks of MODEL_CHUNK
llm-analysis has no search; its rate is `train()` calls per second on the case's TP8/PP8 layout
(called as in peers-training.md §(e)). Run:

    python benchmarks/bench_planner.py [--repeat 5] [--llm-analysis-python /path/to/venv/bin/python]

llm-analysis is used in-process when importable, else through --llm-analysis-python (or the
LLM_ANALYSIS_PYTHON environment variable): a Python with `pip install llm-analysis==0.2.2`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

from workload_compiler.arch.model import ModelArch
from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.perf.layout import Hardware, Layout, TrainingSetup
from workload_compiler.perf.memory import training_memory_bytes
from workload_compiler.perf.step_time import training_step
from workload_compiler.planner import build_space, search
from workload_compiler.planner.bound import BOUND_REASON
from workload_compiler.planner.grid import layout_of, rules
from workload_compiler.planner.pool import planner_threads
from workload_compiler.planner.search_cache import disabled

# The goal of issue 2 ("Training core"), Done-when: ">= 300x" llm-analysis 0.2.2 configurations per second.
GOAL_RATIO = 300.0
# Issue 7, Done-when: "the whole space of DeepSeek-V3 on 1,024 H100 with uneven stages searched in <= 5 s".
GOAL_DEEPSEEK_S = 5.0
DEEPSEEK_SETUP = TrainingSetup(seq_len=4096, global_batch_size=8192, precision="fp8")
MODEL_CHUNK = 1 << 16   # layouts per array call (cache-sized; see planner/search.py DEFAULT_CHUNK)
SETUP = TrainingSetup(seq_len=2048, global_batch_size=1536, precision="bf16")

LLM_ANALYSIS_SNIPPET = """
import json, sys, time, logging
from llm_analysis.analysis import train
kw = dict(model_name="megatron-lm-175b", gpu_name="a100-sxm-80gb", dtype_name="w16a16e16",
          total_num_gpus=1024, tp_size=8, pp_size=8, global_batch_size=1536, batch_size_per_gpu=1,
          seq_len=2048, total_num_tokens=300e9, activation_recomputation=2, ds_zero=1,
          flops_efficiency=0.5, hbm_memory_efficiency=0.9, log_level="ERROR")
r = train(**kw)
rates = []
for _ in range(int(sys.argv[1])):
    n, t0 = 300, time.perf_counter()
    for _ in range(n):
        train(**kw)
    rates.append(n / (time.perf_counter() - t0))
print(json.dumps({"rates": rates, "step_s": r["latency_per_iter"]}))
"""


def llm_analysis_rates(repeat: int, python: str | None) -> tuple[list[float], float] | str:
    """(train() calls per second per repetition, its step time) or why it could not run."""
    try:
        import llm_analysis  # type: ignore[import-not-found]  # noqa: F401
        python = sys.executable
    except ImportError:
        if python is None:
            return ("llm-analysis is not installed (pip install llm-analysis==0.2.2, or pass "
                    "--llm-analysis-python); showing ours only")
    import json

    proc = subprocess.run([python, "-c", LLM_ANALYSIS_SNIPPET, str(repeat)], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        return f"llm-analysis failed to run with {python}: {proc.stderr.strip().splitlines()[-1:]}"
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return list(data["rates"]), float(data["step_s"])


def valid_layouts(arch: ModelArch, hw: Hardware, target: int) -> tuple[Layout, int]:
    """The structurally valid layouts of the case's space, tiled to about `target` layouts."""
    space = build_space(arch, SETUP, hw, 1024)
    values = space.decode(np.arange(space.size, dtype=np.int64))
    for _, ok_fn in rules(arch, SETUP, hw, space):
        keep = ok_fn(values)
        values = {k: a[keep] for k, a in values.items()}
    n = len(values["tp"])
    reps = max(1, target // n)
    return layout_of({k: np.tile(a, reps) for k, a in values.items()}, space), n


def deepseek(repeat: int) -> None:
    """The whole DeepSeek-V3 space on 1,024 H100, timed beside its goal."""
    arch = preset_arch("deepseek-v3")
    hw = load_catalog().hardware("h100-sxm")
    n_threads, before = planner_threads(), os.environ.get("WKC_PLANNER_THREADS")
    by_threads: dict[int, list[float]] = {}
    result = None
    for threads in sorted({1, n_threads}):     # one thread beside the default: the same search
        os.environ["WKC_PLANNER_THREADS"] = str(threads)
        secs = by_threads.setdefault(threads, [])
        for _ in range(repeat):
            t0 = time.perf_counter()
            result = search(arch, DEEPSEEK_SETUP, hw, 1024)
            secs.append(time.perf_counter() - t0)
    os.environ.pop("WKC_PLANNER_THREADS")
    if before is not None:
        os.environ["WKC_PLANNER_THREADS"] = before
    assert result is not None and result.best is not None
    every_secs = []
    for _ in range(repeat):     # every layout through the models (no bound): the same best layouts
        t0 = time.perf_counter()
        every = search(arch, DEEPSEEK_SETUP, hw, 1024, bound=False)
        every_secs.append(time.perf_counter() - t0)
    assert [x.to_dict() for x in every.layouts] == [x.to_dict() for x in result.layouts]
    b = result.best
    one, default = statistics.median(by_threads[1]), statistics.median(by_threads[n_threads])
    print(f"case: DeepSeek-V3, seq 4096, batch 8192, 1024 x h100-sxm, fp8: {result.evaluated:,} layouts, "
          f"{result.feasible:,} fit of those evaluated, {result.rejected.get(BOUND_REASON, 0):,} valid ones ruled "
          f"out by the bound; median {default:.2f} s over {repeat} runs on {n_threads} threads "
          f"({'meets' if default <= GOAL_DEEPSEEK_S else 'misses'} the {GOAL_DEEPSEEK_S:.0f} s goal); "
          f"1 thread {one:.2f} s ({one / default:.2f}x)")
    print(f"  every layout evaluated (bound=False, {every.feasible:,} fit): median "
          f"{statistics.median(every_secs):.2f} s, {statistics.median(every_secs) / default:.1f}x the bounded search")
    print(f"  best: tp {b.tp} pp {b.pp} dp {b.dp} ep {b.ep} vp {b.vp} mbs {b.micro_batch_size} {b.recompute} "
          f"zero {b.zero_stage}, split {b.first_stage_layers}/{b.middle_stage_layers}/{b.last_stage_layers} "
          f"({b.pipeline_layout}): step {b.step_time_s:.2f} s")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--llm-analysis-python", default=os.environ.get("LLM_ANALYSIS_PYTHON"))
    args = p.parse_args(argv)
    arch = preset_arch("gpt3-175b")
    hw = load_catalog().hardware("a100-sxm-80gb")

    search(arch, SETUP, hw, 1024)  # warm-up: imports, caches
    secs: list[float] = []
    result: Any = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        result = search(arch, SETUP, hw, 1024)
        secs.append(time.perf_counter() - t0)
    evaluated = result.evaluated
    search_rates = [evaluated / s for s in secs]

    grid, n_valid = valid_layouts(arch, hw, 1 << 20)
    model_rates = []
    n_grid = grid.shape[0]
    chunks = [grid.take(slice(i, i + MODEL_CHUNK)) for i in range(0, n_grid, MODEL_CHUNK)]
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for chunk in chunks:
            training_memory_bytes(arch, SETUP, chunk)
            training_step(arch, SETUP, chunk, hw)
        model_rates.append(n_grid / (time.perf_counter() - t0))

    best = result.best
    print("case: GPT-3 175B, seq 2048, batch 1536, 1024 x a100-sxm-80gb, bf16")
    print(f"search: {evaluated:,} layouts enumerated, {sum(result.rejected.values()):,} rejected, "
          f"{result.feasible:,} fit; {args.repeat} runs: median {statistics.median(secs):.3f} s, "
          f"min {min(secs):.3f} s, max {max(secs):.3f} s")
    print(f"  best: tp {best.tp} pp {best.pp} dp {best.dp} cp {best.cp} vp {best.vp} "
          f"mbs {best.micro_batch_size} {best.recompute} zero {best.zero_stage}: "
          f"step {best.step_time_s:.2f} s, MFU {best.mfu:.1%}")
    print(f"ours, search rate: median {statistics.median(search_rates):,.0f} layouts/s "
          f"(planner on {planner_threads()} threads; llm-analysis runs on one)")
    print(f"ours, model rate:  median {statistics.median(model_rates):,.0f} layouts/s through memory + step "
          f"({n_valid:,} valid layouts tiled to {n_grid:,}, in chunks of {MODEL_CHUNK:,})")
    deepseek(max(1, args.repeat // 2))
    la = llm_analysis_rates(args.repeat, args.llm_analysis_python)
    if isinstance(la, str):
        print(la)
        return
    rates, step_s = la
    theirs = statistics.median(rates)
    print(f"llm-analysis 0.2.2 train(): median {theirs:,.0f} configs/s (min {min(rates):,.0f}, max "
          f"{max(rates):,.0f}); its step time for TP8/PP8 at efficiency 0.5: {step_s:.2f} s")
    for name, rates_ours in (("search", search_rates), ("model", model_rates)):
        ours = statistics.median(rates_ours)
        ratio = ours / theirs
        verdict = "meets" if ratio >= GOAL_RATIO else "misses"
        print(f"ratio ({name} / llm-analysis): {ratio:,.0f}x ({verdict} the {GOAL_RATIO:.0f}x goal)")


if __name__ == "__main__":
    with disabled():     # every search timed is run, none read back from the on-disk cache
        main()
