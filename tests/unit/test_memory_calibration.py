"""Measured peak memory per GPU against the model (perf/memory.py), and the fit of the two
runtime constants (perf/fitted_memory.py), on /work/shared/calibration/training_public.yaml.

The records with `measured.memory_gib_per_gpu` are torchtitan's Dec 2024 benchmarks
(pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md, Tables 1-6; the number is
`torch.cuda.max_memory_reserved`, max over GPUs). Each layout is built from the record's own
fields plus torchtitan's defaults at the benchmarked commit, which the records do not repeat:
FSDP2 (ZeRO-3) over dp_shard * cp, sequence parallel with TP, `pipeline_parallel_microbatches`
= number of stages (so mbs = local batch / (pp * stages per rank)), two stages per rank for
the interleaved schedule (torchtitan parallelisms/pipeline.py: generate_split_points and
build_pipeline_schedule).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import yaml

from shared_data import calibration_dir, require
from workload_compiler.arch.model import ModelArch
from workload_compiler.perf import fitted_memory
from workload_compiler.perf.layout import Layout, TrainingSetup
from workload_compiler.perf.memory import training_memory_bytes

CALIBRATION = calibration_dir() / "training_public.yaml"
GIB = 2.0**30
INTERLEAVED = {"torchtitan_2412_t5_3d_interleaved"}       # Table 5 "Interleaved 1F1B"
MAX_ERROR, MEAN_ERROR = 0.10, 0.05


def _records() -> list[dict[str, Any]]:
    require(CALIBRATION)
    return _load()


@functools.cache
def _load() -> list[dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    recs = yaml.load(CALIBRATION.read_text(), Loader=loader)["records"]
    return [r for r in recs if (r.get("measured") or {}).get("memory_gib_per_gpu")]


def _arch(m: dict[str, Any]) -> ModelArch:
    assert m["family"] == "llama3", "extend the mapping for a new family"
    return ModelArch(name=m["name"], layers=m["layers"], hidden_size=m["hidden"],
                     attention_heads=m["heads"], kv_heads=m["kv_heads"], head_dim=m["hidden"] // m["heads"],
                     ffn_hidden_size=m["ffn"], vocab_size=m["vocab"], mlp="swiglu", tied_embeddings=False)


def _case(r: dict[str, Any]) -> tuple[ModelArch, TrainingSetup, Layout]:
    p, b = r["parallelism"], r["batch"]
    tp, pp, dp, cp = p["tp"] or 1, p["pp"] or 1, p["dp"], p["cp"] or 1
    vp = 2 if r["id"] in INTERLEAVED else 1
    local = b.get("local_batch_per_dp_rank") or b["micro_batch"]
    micro = pp * vp if pp > 1 else 1
    recompute = {"full": 2}.get(r["recompute"], 3)            # "selective (per-op SAC)" -> op_selective
    precision = "fp8" if "Float8" in r["precision"] else "bf16"
    assert p["fsdp"] is not None, "torchtitan records here all use FSDP2"
    layout = Layout.of(tp=tp, pp=pp, dp=dp, cp=cp, ep=1, etp=1, vp=vp, mbs=local // micro,
                       recompute=recompute, sp=tp > 1, zero=3)
    setup = TrainingSetup(seq_len=r["model"]["seq_len"], global_batch_size=local * dp, precision=precision)
    return _arch(r["model"]), setup, layout


def _evaluate() -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    ids, measured, ours, modeled = [], [], [], []
    for r in _records():
        arch, setup, layout = _case(r)
        d = training_memory_bytes(arch, setup, layout)
        ids.append(r["id"])
        measured.append(r["measured"]["memory_gib_per_gpu"])
        ours.append(float(d["total"]) / GIB)
        modeled.append(float(d["total"] - d["runtime"]) / GIB)
    return ids, np.array(measured), np.array(ours), np.array(modeled)


def test_measured_peaks_within_ten_percent() -> None:
    ids, measured, ours, _ = _evaluate()
    err = ours / measured - 1.0
    table = "\n".join(f"{i:45s} measured {m:5.1f} GiB  ours {o:5.1f} GiB  {100 * e:+5.1f}%"
                      for i, m, o, e in zip(ids, measured, ours, err, strict=True))
    summary = f"MAPE {100 * np.mean(np.abs(err)):.2f}%  max {100 * np.max(np.abs(err)):.2f}%"
    print(f"\n{table}\n{summary}")
    assert len(ids) >= 18
    assert np.mean(np.abs(err)) <= MEAN_ERROR, f"{table}\n{summary}"
    assert np.max(np.abs(err)) <= MAX_ERROR, f"{table}\n{summary}"


def test_runtime_constants_are_the_minimax_fit() -> None:
    """Re-run the fit that fitted_memory.py documents: the (fixed GiB, fraction) pair on a
    0.25 GiB x 0.25 % grid minimizing the largest relative error, ties by the mean error."""
    _, measured, _, modeled = _evaluate()
    fixed = np.arange(0.0, 12.0001, 0.25)[:, None, None]
    frac = np.arange(0.0, 0.2001, 0.0025)[None, :, None]
    err = np.abs((modeled * (1.0 + frac) + fixed) / measured - 1.0)
    score = np.round(err.max(axis=2), 6) * 1e3 + err.mean(axis=2)   # lexicographic: max, then mean
    i, j = np.unravel_index(np.argmin(score), score.shape)
    fitted = (fitted_memory.RUNTIME_FIXED_BYTES / GIB, fitted_memory.RUNTIME_FRACTION)
    assert fitted == pytest.approx((float(fixed[i, 0, 0]), float(frac[0, j, 0])))
