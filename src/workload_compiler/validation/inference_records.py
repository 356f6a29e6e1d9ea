"""`wkc validate --suite inference`: every published inference measurement compiled from the intake
a user would write (validation/inference_intake.py), through `compile_inference`, the path of `wkc
compile`.

  entries              TensorRT-LLM perf-overview rows (trtllm-bench offline max throughput):
                       output tokens/s per GPU; groups `trtllm_dense` and `trtllm_moe` (H100/H200,
                       FP8 checkpoints) and `trtllm_fp4_dense` / `trtllm_fp4_moe` (B200, NVFP4).
  memory_measurements  serving-engine start-up logs: weights and KV-cache size, group `memory`.
Every row is scored or listed as skipped with the missing feature named. A measurement that ran
and is answered "does not fit" is flagged (`fits = False`). The cases keep the resolved inputs so
tools/fit_inference.py re-evaluates the step model under other constants without compiling again;
nothing here is fitted (the fitted constants live in inference/fitted.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..catalog.loader import Catalog, load_catalog
from ..errors import InputError
from ..inference.compile import ResolvedServing, compile_inference, resolve_inference
from ..inference.engines import Engine
from ..inference.layout import ServingLayout
from ..inference.memory import memory_plan
from ..inference.model import ServedModel
from ..inference.performance import Device
from ..inference.serving import offline_point
from ..intake.inference import InferenceWorkload
from ..intake.load import parse_workload
from ..provenance import Trace
from ..units import GIB
from .inference_intake import FILES as INFERENCE_FILES
from .inference_intake import InferenceRecordIntake, load_inference, memory_intake, throughput_intake
from .report import Row, SkippedRow
from .training_intake import NotCompiled

GENERATIONS = ("Ampere", "Hopper", "Blackwell")   # catalog `architecture` starts with one of them
PRECISION_CLASS = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "int8": "fp8", "fp4": "fp4"}


def generation_of(architecture: str) -> str:
    """Ampere / Hopper / Blackwell from a catalog architecture ("Blackwell Ultra" -> Blackwell)."""
    return next((g for g in GENERATIONS if architecture.startswith(g)), architecture)


def case_kind(generation: str, moe: bool, precision_class: str) -> str:
    """The kind of a case for uncertainty bands: "<generation> <moe|dense> <bf16|fp8|fp4>"."""
    return f"{generation} {'moe' if moe else 'dense'} {precision_class}"


@dataclass(frozen=True, kw_only=True)
class ThroughputCase:
    id: str
    group: str
    model: ServedModel
    device: Device
    layout: ServingLayout
    engine: Engine
    isl: int
    osl: int
    published: float
    assumptions: tuple[str, ...]
    kind: str = ""
    compiled: float | None = None     # what `compile_inference` answered (None: it said "does not fit")
    binding: str | None = None


def _compile(ri: InferenceRecordIntake, catalog: Catalog) -> tuple[ResolvedServing, dict[str, Any]]:
    w = parse_workload(ri.intake)
    assert isinstance(w, InferenceWorkload)
    return resolve_inference(w, catalog, Trace()), compile_inference(w, catalog, Trace())


def _layout(ri: InferenceRecordIntake) -> ServingLayout:
    par = ri.intake["compute"]["parallelism"]
    return ServingLayout.of(tp=par["tp"], pp=par.get("pp", 1), ep=par.get("ep", 1))


def throughput_case(ri: InferenceRecordIntake, catalog: Catalog) -> ThroughputCase:
    r, out = _compile(ri, catalog)
    acc = ri.intake["compute"]["accelerator"]
    dev = r.devices[acc]
    generation = generation_of(catalog.accelerator(acc).architecture)
    s = r.settings
    notes = tuple(n for n in (*ri.notes, dev.ceilings.note) if n)
    published, _ = ri.published["output_tokens_per_s_per_gpu"]
    feasible = bool(out["feasible"])
    return ThroughputCase(
        id=ri.id, group=ri.group, model=r.model, device=dev, layout=_layout(ri), engine=r.engine,
        isl=int(s.isl), osl=int(s.osl), published=published, assumptions=notes,
        kind=case_kind(generation, r.model.arch.is_moe, PRECISION_CLASS[dev.gemm_precision]),
        compiled=float(out["inference"]["output_tokens_per_s_per_gpu"]) if feasible else None,
        binding=None if feasible else str(out["binding_constraint"]))


def throughput_cases(doc: dict[str, Any], catalog: Catalog | None = None,
                     ) -> tuple[list[ThroughputCase], list[SkippedRow]]:
    cat = catalog or load_catalog()
    cases: list[ThroughputCase] = []
    skipped: list[SkippedRow] = []
    for e in doc["entries"]:
        try:
            cases.append(throughput_case(throughput_intake(e, cat), cat))
        except NotCompiled as exc:
            skipped.append(SkippedRow(id=e["id"], group="trtllm", reason=str(exc)))
        except InputError as exc:
            skipped.append(SkippedRow(id=e["id"], group="trtllm", reason=f"does not compile: {exc}"))
    return cases, skipped


def predict_throughput(case: ThroughputCase) -> tuple[float, dict[str, float]]:
    """Offline output tokens/s per GPU and the step breakdown (seconds, batch), from the case's
    resolved inputs: what the compile's offline search evaluates for this one layout."""
    eng = case.engine
    plan = memory_plan(case.model, case.layout, case.device.hw.hbm_bytes, eng)
    pt = offline_point(case.model, case.device, case.layout, plan, case.isl, case.osl,
                       max_batch=eng.max_batch_size, max_num_tokens=eng.max_num_tokens,
                       block_tokens=eng.block_size_tokens)
    st = pt.step
    breakdown = {"decode_batch": float(pt.decode_seqs), "step_s": float(st.total_s),
                 "gemm_s": float(st.gemm_s), "attention_s": float(st.attention_s),
                 "communication_s": float(st.communication_s), "overhead_s": float(st.overhead_s),
                 "kv_capacity_tokens": float(plan.kv_capacity_tokens)}
    return float(pt.output_tokens_per_s_per_gpu), breakdown


def throughput_row(case: ThroughputCase) -> Row:
    value, breakdown = predict_throughput(case)
    lay = case.layout
    return Row(id=case.id, group=case.group, model=case.model.arch.name, gpus=int(lay.gpus),
               layout=f"tp{int(lay.tp)} ep{int(lay.ep)} isl{case.isl} osl{case.osl}",
               quantity="output_tokens_per_s_per_gpu", unit="tokens/s per GPU", published=case.published,
               predicted=case.compiled if case.compiled is not None else value,
               published_from="measured.output_tok_s_per_gpu", assumptions=case.assumptions,
               breakdown=breakdown, kind=case.kind, fits=case.compiled is not None, binding=case.binding)


# the quantities a start-up log publishes (inference_intake.memory_intake), each with its unit
_UNITS = {"kv_cache_tokens": "tokens", "weights_gib": "GiB"}


def memory_rows(doc: dict[str, Any], catalog: Catalog | None = None) -> tuple[list[Row], list[SkippedRow]]:
    """KV-cache tokens (and weights where logged) from the compiled intake of each start-up log."""
    cat = catalog or load_catalog()
    rows: list[Row] = []
    skipped: list[SkippedRow] = []
    for rec in doc.get("memory_measurements", []):
        try:
            ri = memory_intake(rec, cat)
            _, out = _compile(ri, cat)
        except (NotCompiled, InputError) as exc:
            skipped.append(SkippedRow(id=rec["id"], group="memory", reason=str(exc)))
            continue
        tp = int(ri.intake["compute"]["parallelism"]["tp"])
        common = dict(group="memory", model=out["objective"]["model"], gpus=tp, layout=f"tp{tp}",
                      assumptions=ri.notes, fits=bool(out["feasible"]),
                      binding=None if out["feasible"] else str(out["binding_constraint"]))
        if not out["feasible"]:
            for quantity, (published, field) in ri.published.items():
                rows.append(Row(id=rec["id"], quantity=quantity, unit=_UNITS[quantity], published=published,
                                predicted=0.0, published_from=field, **common))
            continue
        memory = out["compute"]["memory_breakdown_bytes"]
        predicted = {"kv_cache_tokens": float(out["inference"]["kv_capacity_tokens"]),
                     "weights_gib": float(memory["weights"]) / GIB}
        for quantity, (published, field) in ri.published.items():
            rows.append(Row(id=rec["id"] + ("" if quantity == "kv_cache_tokens" else f"#{quantity.split('_')[0]}"),
                            quantity=quantity, unit=_UNITS[quantity], published=published,
                            predicted=predicted[quantity],
                            published_from=field,
                            breakdown={k + "_gib": float(v) / GIB for k, v in memory.items()}, **common))
    return rows, skipped


def inference_rows(calibration_dir: Path) -> tuple[list[Row], list[SkippedRow]]:
    """All inference rows: throughput (dense, MoE) and memory; a suite for validation/suites.py."""
    doc = load_inference(calibration_dir)
    cases, skipped = throughput_cases(doc)
    rows = [throughput_row(c) for c in cases]
    mem_rows, mem_skipped = memory_rows(doc)
    return rows + mem_rows, skipped + mem_skipped


def inference_validation(calibration_dir: Path) -> list[tuple[str, str, float, float, str]]:
    """(group, record id, published, predicted, note) per row: the brief's flat shape."""
    rows, _ = inference_rows(calibration_dir)
    return [(r.group, r.id, r.published, r.predicted, r.quantity) for r in rows]


__all__ = ["INFERENCE_FILES", "ThroughputCase", "inference_rows", "load_inference", "memory_rows",
           "predict_throughput", "throughput_cases", "throughput_row"]
