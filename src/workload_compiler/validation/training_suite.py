"""`wkc validate --suite training`: every published run compiled from the intake a user would write.

For each record (validation/training_intake.py): the intake is validated and compiled by
`plan_training`, the path of `wkc compile` (its count, layout and hardware at that count). A run
that ran and is answered "does not fit" is a memory or rule bug: it is reported as such
(`fits = False`), with the step time the model gives the stated layout when memory is not
checked, so its speed is still scored. The cases keep
the resolved inputs (architecture, run, machine, layout) so the fitting tool can re-evaluate the
step-time model under other constants without compiling again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..arch.model import ModelArch
from ..catalog.loader import Catalog, load_catalog
from ..errors import InputError
from ..intake.load import parse_workload
from ..intake.training import TrainingWorkload
from ..perf.fitted import FITTED, TrainingConstants
from ..perf.layout import RECOMPUTE_NAMES, FloatArray, Hardware, Layout, TrainingSetup
from ..perf.step_time import training_step
from ..planner.search import search
from ..reliability import ReliabilityLayer
from ..spine.result import ComputeLayer
from ..spine.training import plan_training
from .report import Row, SkippedRow
from .training_intake import NotCompiled, RecordIntake, load_records, record_intake

DAY_S = 86400.0


@dataclass(frozen=True, kw_only=True)
class TrainingCase:
    """One compiled record: the resolved inputs of its layout and what the compile said."""

    record: RecordIntake
    arch: ModelArch
    setup: TrainingSetup
    layout: Layout
    hardware: Hardware
    gpus: int
    fits: bool
    binding: str | None                        # why it does not fit, when it does not
    memory_per_gpu_bytes: float
    goodput: float | None
    tokens: float

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def group(self) -> str:
        return self.record.group


def _unlimited(arch: ModelArch, setup: TrainingSetup, layout: Layout) -> dict[str, FloatArray]:
    """A memory model that rejects nothing: the stated layout's speed when memory says no."""
    zero = np.zeros(layout.shape)
    return {"total": zero}


def compile_record(ri: RecordIntake, catalog: Catalog) -> TrainingCase:
    """Compile one record's intake; InputError (a bad intake, a catalog gap) propagates."""
    w = parse_workload(ri.intake)
    assert isinstance(w, TrainingWorkload)
    planned = plan_training(w, catalog)      # compile's own path, to its hardware at this count
    spec, r, hw = planned.spec, planned.resolved, planned.hardware
    gpus = int(ri.intake["compute"]["gpus"])
    pins = w.compute.parallelism
    if spec.feasible and isinstance(spec.compute, ComputeLayer):
        best = planned.best      # the layout compile built on: its search is not run again
        fits, binding = True, None
    else:
        best = search(r.arch, r.setup, hw, gpus, pins, top_k=1, memory_fn=_unlimited).best
        fits, binding = False, spec.binding_constraint
    if best is None:
        raise NotCompiled(f"no layout the rules allow: {spec.binding_constraint}")
    from ..perf.memory import training_memory_bytes
    memory = float(training_memory_bytes(r.arch, r.setup, best.layout())["total"])
    goodput = spec.reliability.goodput if fits and isinstance(spec.reliability, ReliabilityLayer) else None
    return TrainingCase(record=ri, arch=r.arch, setup=r.setup, layout=best.layout(), hardware=hw, gpus=gpus,
                        fits=fits, binding=binding, memory_per_gpu_bytes=memory,
                        goodput=float(goodput) if goodput is not None else None, tokens=r.run.tokens)


def training_cases(records: list[dict[str, Any]], catalog: Catalog | None = None,
                   ) -> tuple[list[TrainingCase], list[SkippedRow]]:
    cat = catalog or load_catalog()
    cases: list[TrainingCase] = []
    skipped: list[SkippedRow] = []
    for rec in records:
        try:
            ri = record_intake(rec)
            cases.append(compile_record(ri, cat))
        except NotCompiled as exc:
            from .training_intake import group_of
            skipped.append(SkippedRow(id=rec["id"], group=group_of(rec["id"]), reason=str(exc)))
        except InputError as exc:
            from .training_intake import group_of
            skipped.append(SkippedRow(id=rec["id"], group=group_of(rec["id"]), reason=f"does not compile: {exc}"))
    return cases, skipped


def describe_layout(layout: Layout, precision: str) -> str:
    """Short text of a scalar layout: 'tp8 pp4 dp2 cp2 vp5 mbs1 z1 rc=none fp8'."""
    names = ("tp", "pp", "dp", "cp", "ep", "vp", "mbs", "zero")
    v = {name: int(np.asarray(getattr(layout, name))) for name in names}
    parts = [f"tp{v['tp']}", f"pp{v['pp']}", f"dp{v['dp']}"]
    parts += [f"{k}{v[k]}" for k in ("cp", "ep", "vp") if v[k] > 1]
    parts += [f"mbs{v['mbs']}", f"z{v['zero']}", f"rc={RECOMPUTE_NAMES[int(np.asarray(layout.recompute))]}",
              precision]
    return " ".join(parts)


def step_row(case: TrainingCase, constants: TrainingConstants = FITTED) -> Row:
    """Predicted vs published step time of a case (its compiled layout)."""
    ri = case.record
    assert ri.published_step_time_s is not None
    r = training_step(case.arch, case.setup, case.layout, case.hardware, constants)
    return Row(id=ri.id, group=ri.group, kind=ri.kind, model=case.arch.name, gpus=case.gpus,
               layout=describe_layout(case.layout, case.setup.precision), quantity="step_time_s", unit="s",
               published=ri.published_step_time_s, predicted=float(r.step_time_s), published_from=ri.published_from,
               assumptions=ri.notes, breakdown={k: float(v) for k, v in r.breakdown_s.items()}, mfu=float(r.mfu),
               fits=case.fits, binding=case.binding)


def time_to_train_row(case: TrainingCase, constants: TrainingConstants = FITTED) -> Row | None:
    """Goodput-adjusted time to train vs the published days of a whole training."""
    ri = case.record
    if ri.published_days is None or case.goodput is None:
        return None
    r = training_step(case.arch, case.setup, case.layout, case.hardware, constants)
    days = case.tokens / float(r.tokens_per_s) / case.goodput / DAY_S
    return Row(id=ri.id, group=ri.group, kind=ri.kind, model=case.arch.name, gpus=case.gpus,
               layout=describe_layout(case.layout, case.setup.precision), quantity="time_to_train_days", unit="days",
               published=ri.published_days, predicted=days, published_from="train_days",
               assumptions=ri.notes, fits=case.fits, binding=case.binding)


def training_rows(calibration_dir: Path) -> tuple[list[Row], list[SkippedRow]]:
    cases, skipped = training_cases(load_records(calibration_dir))
    rows = [step_row(c) for c in cases if c.record.published_step_time_s is not None]
    return rows, skipped


def time_to_train_rows(calibration_dir: Path) -> tuple[list[Row], list[SkippedRow]]:
    cases, skipped = training_cases(load_records(calibration_dir))
    rows = [r for c in cases if (r := time_to_train_row(c)) is not None]
    return rows, [s for s in skipped if "time-to-train" in s.reason or "ZeRO-3" in s.reason]


__all__ = ["TrainingCase", "compile_record", "describe_layout", "step_row", "time_to_train_row", "training_cases",
           "training_rows"]
