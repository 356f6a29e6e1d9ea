"""`wkc plan FILE [--json] [--top N]`: the ranked parallel layouts of a training workload.

The GPU count is the one compile chooses (spine/training.py plan_training): compute.gpus, or the
product of a fully pinned layout, or, given target.time_to_train, the fewest GPUs whose best layout
meets it after failures, or what a cap or hall holds, or the fewest whole nodes with a layout that
fits; `gpus_chosen_by` says which. Exit 3 (infeasible) names the binding constraint when no layout
fits.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..arch.lora import lora_adapter_params
from ..catalog.loader import load_catalog
from ..errors import Infeasible, InfeasibleError, InputError
from ..intake.load import load_workload
from ..intake.training import TrainingWorkload
from ..measure.apply import bind_measurements
from ..perf.objective import time_to_train_s, total_training_flops
from ..planner import (
    DeadlinePlan,
    HoldBound,
    best_published_mfu,
    fewest_gpus_to_hold,
    memo,
)
from ..planner.bound import BOUND_REASON
from ..planner.tight_memory import search_at_count
from ..provenance import Trace
from ..reliability import ReliabilityLayer
from ..spine.finite import finite_json
from ..spine.gpu_count import check_pins
from ..spine.training import plan_training, resolve_training
from ..units import format_bytes_decimal, format_count, format_duration
from .common import err, out, search_cache_off, user_errors
from .progress import progress_after

PROGRESS_DELAY_S = 0.5   # show a bar only for searches that take longer than this
# Layouts `--top` may ask for: the ranking keeps them all in memory and prints each (100,000 took 22 s
# and 39,851 lines on llama3-70b-plan); beyond a thousand, the census is the answer.
MAX_TOP = 1000
_SHORT = {"none": "none", "selective": "sel", "full": "full", "op_selective": "op-sel", "modules": "mods",
          "mla_up_proj": "mla-up"}


class LazyProgress:
    """A progress callback that shows a rich bar on stderr once the work outlasts PROGRESS_DELAY_S,
    and only when stderr is a terminal (never in pipes, CI or --json captures)."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.bar: Progress | None = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if not err.is_terminal or time.perf_counter() - self.t0 < PROGRESS_DELAY_S:
                return
            self.bar = Progress(TextColumn("searching layouts"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=err.get(), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("search", total=total)
        self.bar.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _plan(w: TrainingWorkload, top: int) -> dict[str, Any]:
    # the same resolution (and TrainingSetup) as compile, with the same measured rates (measure/apply.py:
    # a measurement of another machine is refused), and compile's own choice of the GPU count and of
    # the hardware at that count (its fabric): plan and compile answer alike
    catalog = bind_measurements(w, load_catalog()).catalog
    r = resolve_training(w, catalog)
    arch, run, setup, trace = r.arch, r.run, r.setup, r.trace
    pins = w.compute.parallelism
    gpus = w.compute.gpus or check_pins(pins, arch, w.compute.gpus)
    deadline = w.target.time_to_train
    if gpus is not None and w.compute.max_gpus is not None and gpus > w.compute.max_gpus:
        raise InputError("compute.gpus", gpus, f"at most compute.max_gpus = {w.compute.max_gpus}")
    assumptions = [a.model_dump(mode="json") for a in trace.assumptions]   # the plan's, not the facility's
    hold = fewest_gpus_to_hold(arch, setup, r.hardware)
    progress = LazyProgress()
    try:
        with memo.shared_searches():
            with progress_after("searching GPU counts and layouts"):
                planned = plan_training(w, catalog, r)
            if planned.choice is None:
                c = planned.spec.collisions[0]
                raise Infeasible(c.constraint, c.detail)
            dl = planned.choice.deadline
            if dl is not None and dl.gpus is None:
                raise Infeasible(*_deadline_miss(dl, run.tokens, r.hardware.accelerator_id))
            hw = planned.hardware
            result = search_at_count(arch, setup, hw, planned.choice.gpus, pins, top_k=top,
                                     published_mfu=best_published_mfu(hw.accelerator_id, setup.precision),
                                     progress=progress)
    finally:
        progress.close()
    if not result.layouts:
        if hold.gpus is not None and result.gpus < hold.gpus:
            raise Infeasible("memory: model state", hold.shortfall(result.gpus))
        binding, detail = result.infeasible or ("no layout", "")
        raise Infeasible(binding, detail)
    best = result.layouts[0]
    flops = total_training_flops(arch, run.tokens, setup.seq_len, lora_adapter_params(arch, setup.lora))
    ttt = time_to_train_s(run.tokens, best.tokens_per_s)
    reliability = planned.spec.reliability
    goodput = reliability.goodput if isinstance(reliability, ReliabilityLayer) else None
    adjusted = ttt / goodput if goodput else None
    doc: dict[str, Any] = {
        "workload": w.name or arch.name,
        "model": arch.name,
        "accelerator": hw.accelerator_id,
        "system": hw.system_id,
        "gpus": result.gpus,
        "precision": setup.precision,
        "seq_len": setup.seq_len,
        "global_batch_size": setup.global_batch_size,
        **result.to_dict(),
        "objective": {"tokens": run.tokens, "total_training_flops": flops, "time_to_train_s": ttt,
                      "goodput": goodput, "goodput_adjusted_time_to_train_s": adjusted,
                      "deadline_s": deadline,
                      "meets_deadline": None if deadline is None else bool((adjusted or ttt) <= deadline)},
        "gpus_chosen_by": _chosen_by(trace),
        "fewest_gpus_to_hold": _hold_dict(hold),
        "assumptions": assumptions,
    }
    if dl is not None:
        doc["deadline_search"] = {"gpus": dl.gpus, "flops_bound_gpus": dl.flops_bound_gpus,
                                  "start_gpus": dl.start_gpus, "max_gpus": dl.max_gpus,
                                  "steady_state_deadline_s": dl.steady_state_deadline_s,
                                  "probes_time_to_train_s": {str(n): t if math.isfinite(t) else None
                                                             for n, t in sorted(dl.probes.items())},
                                  "probes_goodput_adjusted_time_to_train_s": {
                                      str(n): t / g for n, t in sorted(dl.probes.items())
                                      if math.isfinite(t) and (g := dl.goodputs.get(n))}}
    return doc


def _chosen_by(trace: Trace) -> str:
    """How compile chose the count: 'given', or the rule that derived it (the trace's formula)."""
    prov = trace.provenance.get("compute.gpus")
    return "given" if prov is None else prov.formula or prov.why or prov.source.value


def _deadline_miss(dl: DeadlinePlan, tokens: float, accelerator: str) -> tuple[str, str]:
    """(binding, detail) when no GPU count up to the cap meets the deadline."""
    cap = f"the cap of {dl.max_gpus:,} {accelerator}"
    if dl.flops_bound_gpus > dl.max_gpus:
        return ("deadline: compute",
                f"{dl.total_flops:.3g} FLOPs in {format_duration(dl.deadline_s)} need at least "
                f"{dl.flops_bound_gpus:,} GPUs even at 100% of the dense peak, more than {cap}")
    if dl.hold.gpus is not None and dl.hold.gpus > dl.max_gpus:
        return "memory: model state", dl.hold.shortfall(dl.max_gpus)
    if not math.isfinite(dl.best_time_s):
        last = dl.searches[max(dl.searches)] if dl.searches else None
        why = f": at {last.gpus:,} GPUs, {last.infeasible[1]}" if last and last.infeasible else ""
        return "memory", f"no layout fits on the GPU counts tried, up to {cap}{why}"
    fastest = min(dl.probes, key=lambda n: dl.probes[n])
    return ("deadline",
            f"{format_count(tokens)} tokens in {format_duration(dl.deadline_s)} are not reached within "
            f"{cap}: the fastest count tried, {fastest:,} GPUs, needs {format_duration(dl.best_time_s)}")


def _hold_dict(h: HoldBound) -> dict[str, Any]:
    return {"gpus": h.gpus, "whole_nodes_gpus": h.whole_nodes_gpus, "state_bytes": h.state_bytes,
            "terms_bytes": dict(h.terms), "binding_term": h.binding_term, "explanation": h.explain()}


def _layout_table(doc: dict[str, Any], rows: list[dict[str, Any]]) -> Table:
    """Ranked layouts, narrow enough for 80 columns: the parallel degrees share one column."""
    moe = any(r["ep"] > 1 or r["etp"] > 1 for r in rows)
    degrees = "tp.pp.dp.cp" + (".ep.etp" if moe else "") + ".vp"
    table = Table(title=f"{doc['workload']}: {doc['gpus']:,} x {doc['accelerator']} ({doc['precision']})",
                  box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0))
    for col in ("#", degrees, "mbs", "recomp", "zero", "sp", "step", "tokens/s", "MFU", "GB/GPU"):
        table.add_column(col, justify="left" if col in (degrees, "recomp") else "right", no_wrap=True)
    for i, r in enumerate(rows, 1):
        parts = [r["tp"], r["pp"], r["dp"], r["cp"], *([r["ep"], r["etp"]] if moe else []), r["vp"]]
        table.add_row(str(i), ".".join(str(p) for p in parts), str(r["micro_batch_size"]),
                      # offload runs without recompute only: the cell names the layers offloaded instead
                      f"offload {r['activation_offload_layers']}" if r.get("activation_offload_layers")
                      else _SHORT[r["recompute"]], str(r["zero_stage"]), "y" if r["sequence_parallel"] else "n",
                      format_duration(r["step_time_s"]), format_count(r["tokens_per_s"], 1),
                      f"{r['mfu']:.1%}", f"{r['memory_per_gpu_bytes'] / 1e9:.1f}")
    return table


def say(text: str) -> None:
    """Plain text on stdout (no rich highlighting of numbers)."""
    out.print(text, highlight=False)


def _print(doc: dict[str, Any]) -> None:
    rows = doc["layouts"]
    out.print(_layout_table(doc, rows))
    best = rows[0]
    step = ", ".join(f"{k} {format_duration(v)}" for k, v in best["step_breakdown_s"].items() if v > 0)
    mem = ", ".join(f"{k} {format_bytes_decimal(v)}"
                    for k, v in best["memory_breakdown_bytes"].items() if v > 0)
    say(f"best step: {step}")
    say(f"best memory per GPU: {mem}")
    obj = doc["objective"]
    line = f"time to train {format_count(obj['tokens'])} tokens: {format_duration(obj['time_to_train_s'])}"
    if obj["goodput_adjusted_time_to_train_s"] is not None:
        line += (f" without failures, {format_duration(obj['goodput_adjusted_time_to_train_s'])} with them "
                 f"(goodput {obj['goodput']:.1%})")
    if obj["deadline_s"] is not None:
        verdict = "meets" if obj["meets_deadline"] else "misses"
        line += f"; {verdict} the deadline of {format_duration(obj['deadline_s'])}"
    say(line)
    if "deadline_search" in doc:
        ds = doc["deadline_search"]
        adjusted = ds["probes_goodput_adjusted_time_to_train_s"]

        def at(n: str, t: float | None) -> str:
            if t is None:
                return f"{int(n):,}: no layout"
            after = f" ({format_duration(adjusted[n])} after failures)" if n in adjusted else ""
            return f"{int(n):,}: {format_duration(t)}{after}"
        tried = ", ".join(at(n, t) for n, t in ds["probes_time_to_train_s"].items())
        say(f"fewest GPUs meeting the deadline after failures: {ds['gpus']:,} (their best layout within "
            f"{format_duration(ds['steady_state_deadline_s'])} without failures; searched from "
            f"{ds['start_gpus']:,}; tried {tried})")
    say(f"GPUs: {doc['gpus']:,} ({doc['gpus_chosen_by']})")
    say(f"fewest GPUs that can hold the model: {doc['fewest_gpus_to_hold']['explanation']}")
    s = doc["search"]
    bounded = s["rejected"].get(BOUND_REASON)
    say(f"searched {s['evaluated']:,} layouts in {s['seconds']:.2f} s; {s['feasible']:,} fit"
        + (f" of those evaluated in full; {bounded:,} valid ones were ruled out by a bound on their step time "
           "(planner/bound.py)" if bounded else ""))
    if s["rejected"]:
        rejected = Table(title="rejected layouts (each under the first rule it breaks)", box=box.SIMPLE_HEAD)
        rejected.add_column("reason")
        rejected.add_column("layouts", justify="right")
        for reason, count in s["rejected"].items():
            rejected.add_row(reason, f"{count:,}")
        out.print(rejected)
    pub = doc["published_mfu"]
    if pub:
        say(f"best published MFU for {pub['accelerator']} {pub['precision']}: {pub['mfu']:.1%} "
            f"(record {pub['record']})")
    else:
        say(f"no published MFU for {doc['accelerator']} {doc['precision']} to check the optimum against")
    for w in doc["warnings"]:
        err.print(f"[bold yellow]warning:[/] {w}", highlight=False)


def plan_command(
    file: Annotated[Path, typer.Argument(help="training intake YAML")],
    as_json: Annotated[bool, typer.Option("--json", help="print the ranked layouts as JSON")] = False,
    top: Annotated[int, typer.Option("--top", min=1, max=MAX_TOP, help="how many layouts to show (at most "
                                     f"{MAX_TOP:,}: the census counts the rest)")] = 5,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="run every search, neither reading nor keeping "
                                                              "searches on disk (see wkc cache)")] = False,
) -> None:
    """Search every valid parallel layout and rank them by step time."""
    with user_errors(), search_cache_off(no_cache):
        workload = load_workload(file)
        if not isinstance(workload, TrainingWorkload):
            kind = getattr(workload, "kind", None)
            elsewhere = {"inference": "; a serving intake's layouts are ranked by `wkc compile` (its inference "
                                      "section's Pareto front, --detail)",
                         "hpc": "; an HPC run's GPU counts are tabled by `wkc compile` (hpc.scaling, --detail)"}
            raise InputError("kind", kind, "training (wkc plan plans training layouts)" + elsewhere.get(str(kind), ""))
        try:
            doc = _plan(workload, top)
        except InfeasibleError as exc:
            if not as_json:
                raise
            # the answer is still a document on stdout: infeasible, with what binds
            json.dump({"workload": workload.name, "feasible": False, "binding_constraint": exc.binding,
                       "detail": exc.detail}, sys.stdout, indent=2, allow_nan=False)
            sys.stdout.write("\n")
            raise typer.Exit(3) from None
    if as_json:
        json.dump(finite_json({"feasible": True, **doc}), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        _print(doc)


def register(app: typer.Typer) -> None:
    app.command("plan")(plan_command)


__all__ = ["plan_command", "register"]
