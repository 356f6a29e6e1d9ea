"""A published training run -> the memory model's inputs through the user's path, and the GPU's memory.

For the invariant that a run that ran is judged to fit (tests/unit/test_memory_fit_records.py).
Each record becomes the intake a user would write (validation/training_intake.py `record_intake`:
the model preset, the run, every parallel degree the record states, its source's defaults and
`training.framework`: the source's, else the one the record's `framework` text names); the intake
is resolved by the spine's `resolve_training`, the
same function compile and plan call, so the ModelArch, TrainingSetup (with the framework profile)
and Hardware (whose `hbm_bytes` is the memory the GPU exposes to a process) are the product's own.
The layout is the intake's parallelism: what it leaves open takes the framework's default (ZeRO
stage, sequence parallelism with TP), and a recompute the *record* does not state is judged with
every mode the framework offers (the planner's recompute axis), since a source default for it is a
guess about the run. Pinned pipeline splits (first/last stage, layout strings) are not applied: the
even split of perf/stages.py is charged. A model given by its fields ties its embeddings where the
record's stated parameter count matches the tied model better.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..arch.counts import param_counts
from ..arch.model import ModelArch
from ..arch.resolve import resolve_model
from ..catalog.loader import load_catalog
from ..errors import InputError
from ..intake.load import parse_workload
from ..intake.training import TrainingWorkload
from ..perf.framework import FrameworkProfile
from ..perf.layout import RECOMPUTE_CODES, Layout, TrainingSetup, recompute_modes_for
from ..perf.memory import training_memory_bytes
from ..perf.offload import applies, most_layers, offload_possible
from ..provenance import Trace
from ..spine.training import resolve_training
from ..spine.training_defaults import resolve_run
from .training_intake import NotCompiled, load_records, record_intake


@dataclass(frozen=True, kw_only=True)
class MemoryCase:
    id: str
    arch: ModelArch
    setup: TrainingSetup
    layout: Layout
    hbm_bytes: float
    accelerator: str
    framework: FrameworkProfile
    recompute_codes: tuple[int, ...]      # the stated one, or every mode the framework offers
    notes: tuple[str, ...]
    offload_allowed: bool = False         # the planner may offload layers here (perf/offload.py offload_possible)


class NotExpressible(Exception):
    """The record lacks what the memory check needs (the reason is the message)."""


def states_layout_and_micro_batch(rec: dict[str, Any]) -> bool:
    """The records the invariant covers: a micro-batch, and a dp degree or an FSDP strategy."""
    p, b = rec.get("parallelism") or {}, rec.get("batch") or {}
    return b.get("micro_batch") is not None and bool(p.get("dp") or p.get("fsdp"))


def memory_case(rec: dict[str, Any]) -> MemoryCase:
    """The memory model's inputs for one record; NotExpressible with the reason otherwise."""
    if not states_layout_and_micro_batch(rec):
        raise NotExpressible("no micro-batch or no data-parallel layout stated")
    try:
        ri = record_intake(rec)
    except NotCompiled as exc:
        raise NotExpressible(str(exc)) from None
    intake = copy.deepcopy(ri.intake)
    notes = list(ri.notes)
    w = parse_workload(intake)
    assert isinstance(w, TrainingWorkload)
    arch, setup, hbm, acc, offload_allowed = _resolve(w, notes)
    arch = _tied_if_stated(arch, rec, intake, notes)
    fw = setup.framework
    par = w.compute.parallelism
    tp, pp, cp = par.tp or 1, par.pp or 1, par.cp or 1
    zero = par.zero_stage if par.zero_stage is not None else fw.default_zero_stage
    sp = par.sequence_parallel if par.sequence_parallel is not None else (tp > 1 and fw.sequence_parallel)
    stated = rec.get("recompute")
    code = RECOMPUTE_CODES[par.recompute] if par.recompute is not None else fw.default_recompute
    codes = (code,) if stated else recompute_modes_for(arch.is_mla, fw.recompute_modes)
    if not stated:
        notes.append("recompute not stated by the record: judged with each mode the framework offers")
    layout = Layout.of(tp=tp, pp=pp, dp=par.dp, cp=cp, ep=par.ep or 1, etp=par.etp or 1, vp=par.vp or 1,
                       mbs=par.micro_batch_size or 1, recompute=code, sp=bool(sp), zero=zero)
    return MemoryCase(id=ri.id, arch=arch, setup=setup, layout=layout, hbm_bytes=hbm, accelerator=acc,
                      framework=fw, recompute_codes=tuple(codes), notes=tuple(notes),
                      offload_allowed=offload_allowed and par.activation_offload_layers is None)


def _resolve(w: TrainingWorkload, notes: list[str]) -> tuple[ModelArch, TrainingSetup, float, str, bool]:
    """The spine's resolution, and whether the planner may offload layers there; where the catalog
    cannot build the accelerator's performance view (a number the step-time model needs is
    unpublished), the memory model still runs: the same model and run resolution and the
    accelerator's memory, noted (and no offload: no host link)."""
    catalog = load_catalog()
    try:
        r = resolve_training(w, catalog)
        return (r.arch, r.setup, r.hardware.hbm_bytes, r.hardware.accelerator_id,
                offload_possible(r.setup, r.hardware))
    except InputError as exc:
        if exc.field != "compute.accelerator" or w.compute.accelerator is None:
            raise NotExpressible(f"intake not resolved: {exc}") from None
        missing = exc.allowed.split(";")[0]
    acc = catalog.accelerator(w.compute.accelerator)
    notes.append(f"{acc.id}: no performance view in the catalog ({missing}); memory only")
    trace = Trace()
    arch = resolve_model(w.model, trace, "model")
    run = resolve_run(w, arch, trace)
    setup = TrainingSetup(seq_len=run.seq_len, global_batch_size=run.global_batch_size, precision=run.precision,
                          flash_attention=w.training.attention_kernel != "unfused", framework=run.framework)
    return arch, setup, acc.process_memory_bytes, acc.id, False


def _tied_if_stated(arch: ModelArch, rec: dict[str, Any], intake: dict[str, Any], notes: list[str]) -> ModelArch:
    """A model given by its fields ties its embeddings where the record's stated parameter count
    matches the tied model better (MPT: modeling_mpt.py 'only supports tied word embeddings')."""
    stated = (rec.get("model") or {}).get("params_b")
    if "preset" in intake["model"] or "tied_embeddings" in intake["model"] or not stated or arch.tied_embeddings:
        return arch
    tied = arch.model_copy(update={"tied_embeddings": True})
    n = float(stated) * 1e9
    if abs(param_counts(tied).total - n) < abs(param_counts(arch).total - n):
        notes.append("tied embeddings (the record's parameter count matches the tied model)")
        return tied
    return arch


def load_training_records(calibration_dir: Path) -> list[dict[str, Any]]:
    """Every record of training_public.yaml and training_added.yaml."""
    return load_records(calibration_dir)


def memory_cases(records: list[dict[str, Any]]) -> tuple[list[MemoryCase], list[tuple[str, str]]]:
    """The records that state a layout and a micro-batch, as cases; those that cannot be expressed
    as (id, reason)."""
    cases: list[MemoryCase] = []
    skipped: list[tuple[str, str]] = []
    for rec in records:
        if not states_layout_and_micro_batch(rec):
            continue
        try:
            cases.append(memory_case(rec))
        except NotExpressible as exc:
            skipped.append((str(rec["id"]), str(exc)))
    return cases, skipped


def least_memory(case: MemoryCase) -> tuple[dict[str, float], int]:
    """The memory terms (bytes per GPU, the most loaded rank) under the case's recompute modes that
    needs the least, and that mode's code. Where the planner may offload layers (pp 1, no
    recompute), the leanest offload (every layer but one) is among the candidates, as it is the
    planner's: the invariant judges with the rules compile uses."""
    best: tuple[dict[str, float], int] | None = None
    most = most_layers(case.arch.layers)
    for code in case.recompute_codes:
        layout = dataclasses.replace(case.layout, recompute=np.asarray(code, dtype=np.int64))
        candidates = [layout]
        if case.offload_allowed and most is not None and bool(applies(layout.pp, layout.recompute)):
            candidates.append(dataclasses.replace(layout, offload=np.asarray(most)))
        for candidate in candidates:
            terms = {k: float(v) for k, v in training_memory_bytes(case.arch, case.setup, candidate).items()}
            if best is None or terms["total"] < best[0]["total"]:
                best = (terms, code)
    assert best is not None
    return best
