"""Published inference measurements -> model inputs -> published vs predicted rows.

Reads calibration/inference_public.yaml and calibration/inference_added.yaml (same format):
  entries              TensorRT-LLM perf-overview rows (trtllm-bench offline max throughput):
                       output tokens/s per GPU; groups `trtllm_dense` and `trtllm_moe` (H100/H200,
                       FP8 checkpoints) and `trtllm_fp4_dense` / `trtllm_fp4_moe` (B200, NVFP4).
  memory_measurements  serving-engine start-up logs: weights and KV-cache size, group `memory`.
Every row is scored or listed as skipped with the missing feature named. Every value the record
leaves implicit is filled by a named rule (below) and listed in the row's assumptions; nothing
here is fitted (the fitted constants live in inference/fitted.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..arch.presets import preset_arch
from ..catalog.loader import load_catalog
from ..inference.device import serving_device
from ..inference.engines import Engine, engine
from ..inference.layout import ServingLayout
from ..inference.memory import GIB, memory_plan, visible_memory_bytes
from ..inference.model import KV_DTYPE_BYTES, ServedModel, served_model
from ..inference.performance import Device
from ..inference.serving import offline_point
from .report import Row, SkippedRow

INFERENCE_FILES = ("inference_public.yaml", "inference_added.yaml")
MODEL_PRESETS = {"Llama 3.3 70B": "llama3.3-70b", "Llama 3.1 405B": "llama3.1-405b",
                 "Llama 3.1 8B": "llama3.1-8b", "Qwen3-235B-A22B": "qwen3-235b-a22b"}
# The hardware names the perf-overview uses ("B200 180GB (DGX B200)") -> catalog accelerator ids.
ACCELERATORS = {"H200-SXM-141GB": "h200-sxm", "H100-SXM-80GB": "h100-sxm", "B200-180GB": "b200"}
# Record `precision` -> (linear-layer weight format, KV dtype, what the checkpoint holds). The
# ModelOpt checkpoints NVIDIA publishes for these tables: nvidia/*-FP8 (per-tensor FP8 W8A8) and
# nvidia/*-FP4 (NVFP4 W4A4: E2M1 values, one E4M3 scale per 16; arch/weight_formats.py), both with
# hf_quant_config kv_cache_quant_algo FP8, embedding and lm_head left BF16.
CHECKPOINTS: dict[str, tuple[str, str, str]] = {
    "fp8": ("fp8", "fp8", "weights FP8 (ModelOpt checkpoint: linear layers FP8, embedding and lm_head BF16)"),
    "fp4": ("nvfp4", "fp8", "weights NVFP4 (ModelOpt checkpoint: linear layers NVFP4 = 0.5 B + 1/16 B "
                            "scale per weight, embedding and lm_head BF16)"),
}
# tensorrt_llm/bench/build/tuning.py BYTES_PER_ELEM: what trtllm-bench counts per parameter when
# it estimates the engine size for its batch heuristic (NVFP4 0.5: the scales are not counted).
TUNING_BYTES_PER_PARAM = {"fp8": 1.0, "nvfp4": 0.5}
GENERATIONS = ("Ampere", "Hopper", "Blackwell")   # catalog `architecture` starts with one of them
PRECISION_CLASS = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "int8": "fp8", "fp4": "fp4"}
# perf-overview.md: "In many cases, we also use ... --kv_cache_free_gpu_mem_fraction 0.95".
TRTLLM_BENCH_KV_FRACTION = 0.95
# tensorrt_llm/bench/build/tuning.py calc_engine_setting(kv_cache_gpu_mem_fraction=0.95): the
# share of (GPU memory - engine size) trtllm-bench's batch and token heuristic fills with KV.
TUNING_KV_FRACTION = 0.95
ASSUMPTIONS = (
    "KV cache FP8 (ModelOpt hf_quant_config kv_cache_quant_algo FP8)",
    "kv_cache_free_gpu_mem_fraction 0.95 (perf-overview.md: 'in many cases')",
    "max_batch_size / max_num_tokens from trtllm-bench's tuning heuristic (bench/build/tuning.py)",
)
MOE_ASSUMPTION = "MoE: ep = tp (the doc's MoE command passes --ep; value not stated), no attention DP"


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


def load_inference(calibration_dir: Path) -> dict[str, Any]:
    """Both inference files merged: `entries` and `memory_measurements` concatenated, in file order.
    A file that is absent contributes nothing (inference_added.yaml is newer than the first set)."""
    merged: dict[str, Any] = {"entries": [], "memory_measurements": [], "kv_cache_per_token": []}
    for name in INFERENCE_FILES:
        path = Path(calibration_dir) / name
        if not path.is_file():
            continue
        with path.open(encoding="utf-8") as fh:
            doc: dict[str, Any] = yaml.safe_load(fh) or {}
        for key in merged:
            merged[key].extend(doc.get(key) or [])
    return merged


def trtllm_bench_caps(m: ServedModel, tp: int, pp: int, isl: int, osl: int,
                      device_memory_bytes: float) -> tuple[int, int]:
    """(max_batch_size, max_num_tokens) as trtllm-bench sets them (tensorrt_llm/bench/build/
    tuning.py, calc_engine_setting + finetune_setting): requests that fit 0.95 x (GPU memory -
    engine size) at ISL+OSL each, capped at 4096 and rounded up; tokens = batch x (1 + ISL/OSL)
    capped at 32768 and rounded up (minimum 2048)."""
    a = m.arch
    kv_heads = max(tp, a.kv_heads)   # tuning.py sizes the KV of TP-replicated heads (GQA models only)
    kv_per_token = 2 * a.layers * kv_heads * a.head_dim * KV_DTYPE_BYTES[m.kv_dtype]
    per_param = TUNING_BYTES_PER_PARAM.get(m.weights, m.linear_bytes_per_param)
    engine_bytes = m.total_params * per_param   # tuning.py: params x BYTES_PER_ELEM
    free = visible_memory_bytes(device_memory_bytes) * tp * pp - engine_bytes
    requests = TUNING_KV_FRACTION * free / (kv_per_token * (isl + osl))
    raw_bs = min(requests, 4096) / pp
    if raw_bs < 256:
        max_bs = max(64, 32 * math.ceil(raw_bs / 32))
    elif raw_bs < 1024:
        max_bs = 128 * math.ceil(raw_bs / 128)
    else:
        max_bs = 256 * math.ceil(raw_bs / 256)
    raw_tokens = min(raw_bs * (1 + isl / osl), 32768)
    if raw_tokens < 4096:
        tokens = max(2048, 256 * math.ceil(raw_tokens / 256))
    elif raw_tokens < 8192:
        tokens = 512 * math.ceil(raw_tokens / 512)
    else:
        tokens = 1024 * math.ceil(raw_tokens / 1024)
    return max_bs, tokens


def _unsupported(e: dict[str, Any]) -> str | None:
    """The feature a row needs that the suite cannot express, or None."""
    if e.get("model") not in MODEL_PRESETS:
        return f"model {e.get('model')!r} has no architecture preset (catalog/data/models)"
    if e.get("hardware") not in ACCELERATORS:
        return f"hardware {e.get('hardware')!r} is not mapped to a catalog accelerator"
    if e.get("precision") not in CHECKPOINTS:
        return f"precision {e.get('precision')!r} has no checkpoint rule (known: {', '.join(CHECKPOINTS)})"
    if e.get("pp") not in (1, None):
        return f"pipeline parallelism pp={e.get('pp')} in the offline benchmark is not modelled"
    if e.get("attention_dp"):
        return "attention data parallelism of the record is not modelled in the offline benchmark"
    return None


def throughput_cases(doc: dict[str, Any]) -> tuple[list[ThroughputCase], list[SkippedRow]]:
    cases: list[ThroughputCase] = []
    skipped: list[SkippedRow] = []
    catalog = load_catalog()
    for e in doc["entries"]:
        reason = _unsupported(e)
        if reason is not None:
            skipped.append(SkippedRow(id=e["id"], group="trtllm", reason=reason))
            continue
        arch = preset_arch(MODEL_PRESETS[e["model"]])
        weights, kv, weight_note = CHECKPOINTS[e["precision"]]
        acc = ACCELERATORS[e["hardware"]]
        model = served_model(arch, weights, kv)
        tp = int(e["tp"])
        ep = int(e["ep"]) if e.get("ep") else (tp if arch.is_moe else 1)
        choice = serving_device(catalog, acc, None, weights, kv)
        dev = choice.device
        bs, tokens = trtllm_bench_caps(model, tp, 1, int(e["isl"]), int(e["osl"]), dev.hw.hbm_bytes)
        eng = replace(engine("trtllm"), memory_fraction=TRTLLM_BENCH_KV_FRACTION,
                      max_batch_size=bs, max_num_tokens=tokens)
        generation = generation_of(catalog.accelerator(acc).architecture)
        precision_class = PRECISION_CLASS[dev.gemm_precision]
        group = "trtllm_" + ("fp4_" if precision_class == "fp4" else "") + ("moe" if arch.is_moe else "dense")
        notes = [n for n in (choice.note, dev.ceilings.note) if n]
        cases.append(ThroughputCase(
            id=e["id"], group=group, model=model, device=dev,
            layout=ServingLayout.of(tp=tp, pp=1, ep=ep), engine=eng, isl=int(e["isl"]), osl=int(e["osl"]),
            published=float(e["measured"]["output_tok_s_per_gpu"]),
            assumptions=(weight_note, *ASSUMPTIONS, *((MOE_ASSUMPTION,) if arch.is_moe and not e.get("ep") else ()),
                         *notes),
            kind=case_kind(generation, arch.is_moe, precision_class)))
    return cases, skipped


def predict_throughput(case: ThroughputCase) -> tuple[float, dict[str, float]]:
    """Offline output tokens/s per GPU and the step breakdown (seconds, batch)."""
    eng = case.engine
    plan = memory_plan(case.model, case.layout, case.device.hw.hbm_bytes, eng,
                       step_tokens=eng.max_num_tokens, logit_rows=eng.max_batch_size)
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
               quantity="output_tokens_per_s_per_gpu", published=case.published, predicted=value,
               published_from="measured.output_tok_s_per_gpu", assumptions=case.assumptions,
               breakdown=breakdown, kind=case.kind)


# --- memory_measurements ---------------------------------------------------------------------

_MEMORY_CASES: dict[str, dict[str, Any]] = {
    # vLLM V0 (Jan 2025) profiles a step of max_num_batched_tokens = max_model_len = 8192 tokens
    # and takes logits of all of them (the 9.37 GiB peak in the log is ~8192 x vocab x 10 B).
    "vllm-issue-12330/llama3-8b/A100-40GB": dict(
        preset="llama3-8b", weights="bf16", kv="bf16", accelerator="a100-sxm-40gb", tp=1,
        engine="vllm", fraction=0.9, step_tokens=8192, logit_rows=8192, reserve=0.1 * GIB,
        published_kv_tokens="kv_tokens", published_weights_gib="weights_gib"),
    # vLLM V1 with gpu_memory_utilization 0.98 and max_model_len 2048; the GPU is not named: the
    # record says >= 80 GB, an H100-SXM-80GB is assumed. V1 samples max_num_seqs (256) rows.
    "vllm-pr-12569/llama3.1-70b-w8a8/1gpu": dict(
        preset="llama3.3-70b", weights="int8", kv="bf16", accelerator="h100-sxm", tp=1,
        engine="vllm", fraction=0.98, step_tokens=2048, logit_rows=256, reserve=1.0e9,
        published_kv_tokens="kv_tokens", published_weights_gib="weights_gb"),
    # SGLang --mem-fraction-static 0.93 on 4 x H100 (Qwen3-235B-A22B-FP8, BF16 KV).
    "vllm-issue-21348/qwen3-235b-a22b-fp8/H100x4": dict(
        preset="qwen3-235b-a22b", weights="fp8-block128", kv="bf16", accelerator="h100-sxm", tp=4,
        engine="sglang", fraction=0.93, step_tokens=None, logit_rows=None, reserve=None,
        published_kv_tokens="sglang_kv_tokens", published_weights_gib=None),
}


def memory_rows(doc: dict[str, Any]) -> tuple[list[Row], list[SkippedRow]]:
    """KV-cache tokens (and weights where logged) predicted from the engine's sizing rule."""
    rows: list[Row] = []
    skipped: list[SkippedRow] = []
    catalog = load_catalog()
    for rec in doc.get("memory_measurements", []):
        spec = _MEMORY_CASES.get(rec["id"])
        if spec is None:
            skipped.append(SkippedRow(id=rec["id"], group="memory", reason="no mapping"))
            continue
        model = served_model(preset_arch(spec["preset"]), spec["weights"], spec["kv"])
        lay = ServingLayout.of(tp=spec["tp"])
        eng = replace(engine(spec["engine"]), memory_fraction=spec["fraction"])
        if spec["reserve"] is not None:
            eng = replace(eng, runtime_reserve_bytes=spec["reserve"])
        acc = catalog.accelerator(spec["accelerator"])
        plan = memory_plan(model, lay, acc.memory_bytes, eng, step_tokens=spec["step_tokens"],
                           logit_rows=spec["logit_rows"])
        notes = (f"{spec['engine']} fraction {spec['fraction']}, {acc.id}, tp{spec['tp']}",
                 f"weights {spec['weights']}, KV {spec['kv']}")
        measured = rec["measured"]
        rows.append(Row(id=rec["id"], group="memory", model=model.arch.name, gpus=int(spec["tp"]),
                        layout=f"tp{spec['tp']}", quantity="kv_cache_tokens",
                        published=float(measured[spec["published_kv_tokens"]]),
                        predicted=float(np.asarray(plan.kv_capacity_tokens)),
                        published_from=f"measured.{spec['published_kv_tokens']}", assumptions=notes,
                        breakdown={"weights_gib": float(plan.weights_bytes) / GIB,
                                   "activation_gib": float(plan.activation_bytes) / GIB,
                                   "kv_cache_gib": float(plan.kv_cache_bytes) / GIB}))
        if spec["published_weights_gib"]:
            rows.append(Row(id=rec["id"] + "#weights", group="memory", model=model.arch.name,
                            gpus=int(spec["tp"]), layout=f"tp{spec['tp']}", quantity="weights_gib",
                            published=float(measured[spec["published_weights_gib"]]),
                            predicted=float(plan.weights_bytes) / GIB,
                            published_from=f"measured.{spec['published_weights_gib']} (GiB as vLLM logs it)",
                            assumptions=notes))
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
