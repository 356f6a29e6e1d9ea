"""Measured peak memory per GPU: calibration records -> (ModelArch, TrainingSetup, Layout, GiB).

The records with `measured.memory_gib_per_gpu` are torchtitan's Dec 2024 benchmarks
(pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md, Tables 1-6; the number is
`torch.cuda.max_memory_reserved`, max over GPUs). Each layout is built from the record's own
fields plus torchtitan's defaults at the benchmarked commit, which the records do not repeat:
FSDP2 (ZeRO-3) over dp_shard * cp, sequence parallel with TP, `pipeline_parallel_microbatches`
= number of stages (so mbs = local batch / (pp * stages per rank)), two stages per rank for the
interleaved schedule (torchtitan parallelisms/pipeline.py: generate_split_points and
build_pipeline_schedule; the schedule is named in Table 5's row), and the torchtitan framework
profile (catalog/data/frameworks.yaml).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..arch.model import ModelArch
from ..catalog.frameworks import framework_profile
from ..perf.layout import Layout, TrainingSetup

# Table 5 "Interleaved 1F1B": the schedule is in the record's own name.
_INTERLEAVED_SUFFIX = "_interleaved"


@dataclass(frozen=True)
class PeakCase:
    id: str
    arch: ModelArch
    setup: TrainingSetup
    layout: Layout
    measured_gib: float


def measured_peak_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if (r.get("measured") or {}).get("memory_gib_per_gpu")]


def _arch(m: dict[str, Any]) -> ModelArch:
    if m["family"] != "llama3":
        raise ValueError(f"measured-peak record family {m['family']!r}: extend the mapping")
    return ModelArch(name=m["name"], layers=m["layers"], hidden_size=m["hidden"],
                     attention_heads=m["heads"], kv_heads=m["kv_heads"], head_dim=m["hidden"] // m["heads"],
                     ffn_hidden_size=m["ffn"], vocab_size=m["vocab"], mlp="swiglu", tied_embeddings=False)


def peak_case(r: dict[str, Any]) -> PeakCase:
    p, b = r["parallelism"], r["batch"]
    tp, pp, dp, cp = p["tp"] or 1, p["pp"] or 1, p["dp"], p["cp"] or 1
    vp = 2 if r["id"].endswith(_INTERLEAVED_SUFFIX) else 1
    local = b.get("local_batch_per_dp_rank") or b["micro_batch"]
    micro = pp * vp if pp > 1 else 1
    recompute = {"full": 2}.get(r["recompute"], 3)            # "selective (per-op SAC)" -> op_selective
    precision = "fp8" if "Float8" in r["precision"] else "bf16"
    if p["fsdp"] is None:
        raise ValueError(f"{r['id']}: the torchtitan records here all use FSDP2")
    layout = Layout.of(tp=tp, pp=pp, dp=dp, cp=cp, ep=1, etp=1, vp=vp, mbs=local // micro,
                       recompute=recompute, sp=tp > 1, zero=3)
    setup = TrainingSetup(seq_len=r["model"]["seq_len"], global_batch_size=local * dp, precision=precision,
                          framework=framework_profile("torchtitan"))
    return PeakCase(id=r["id"], arch=_arch(r["model"]), setup=setup, layout=layout,
                    measured_gib=float(r["measured"]["memory_gib_per_gpu"]))


__all__ = ["PeakCase", "measured_peak_records", "peak_case"]
