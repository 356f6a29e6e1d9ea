"""The measured kernel ceilings of catalog/data/kernel_ceilings.yaml: the share of a GPU's datasheet
peak its vendor kernels sustain, per precision (medians of kernel micro-benchmarks; the file's
header gives the source and the reduction). Read by the serving model (inference/kernels.py) and
by the training step model (perf/step_time.py: the GEMM ceiling at the training precision).
"""

from __future__ import annotations

from functools import cache
from statistics import median
from typing import Any

from .loader import package_yaml

PARTS = ("gemm_compute", "gemm_stream", "kv_stream", "attention_compute")


@cache
def ceiling_table() -> tuple[dict[str, dict[str, Any]], str]:
    doc = package_yaml("kernel_ceilings.yaml")
    return {str(e["accelerator"]): e for e in doc["ceilings"]}, str(doc["source"])


# Decode GEMMs stream their weights through the same memory system the decode attention kernels
# stream the KV cache through: a GPU measured for kv_stream but not for gemm_stream takes its own
# kv_stream at the KV width below, times the median ratio gemm_stream / kv_stream of the GPUs
# measured for both (nearly one number per precision: fp8 0.95-1.01 over seven GPUs, fp4 0.74-0.78
# over four, bf16 1.06-1.09 over six and 1.21 on H200).
STREAM_KV_WIDTH = {"bf16": "bf16", "fp8": "fp8", "fp4": "fp8"}


def estimate(accelerator_id: str, part: str, precision: str) -> tuple[float, str]:
    """(fraction, basis) of `part` at `precision` on the GPU. basis 'measured': this GPU's own
    measurement; 'own kv_stream': gemm_stream from its measured kv_stream (STREAM_KV_WIDTH);
    'median': the median of the measured GPUs at that precision (at bf16 where none is measured)."""
    table, _ = ceiling_table()
    own = table.get(accelerator_id, {}).get(part, {})
    if precision in own:
        return float(own[precision]), "measured"
    from_kv = _stream_from_kv(table, accelerator_id, part, precision)
    if from_kv is not None:
        return from_kv, "own kv_stream"
    others = [float(e[part][precision]) for e in table.values() if precision in e.get(part, {})]
    if not others:
        others = [float(e[part]["bf16"]) for e in table.values() if "bf16" in e.get(part, {})]
    return float(median(others)), "median"


def fraction(accelerator_id: str, part: str, precision: str) -> tuple[float, bool]:
    """(fraction, measured): `estimate` with its basis reduced to whether this GPU was measured."""
    value, basis = estimate(accelerator_id, part, precision)
    return value, basis == "measured"


def _stream_from_kv(table: dict[str, dict[str, Any]], accelerator_id: str, part: str, precision: str) -> float | None:
    """kv_stream[width] of this GPU x median(gemm_stream[precision] / kv_stream[width]) of the GPUs
    measured for both; None where either is missing."""
    width = STREAM_KV_WIDTH.get(precision)
    own_kv = table.get(accelerator_id, {}).get("kv_stream", {})
    if part != "gemm_stream" or width is None or width not in own_kv:
        return None
    ratios = [float(e["gemm_stream"][precision]) / float(e["kv_stream"][width]) for e in table.values()
              if precision in e.get("gemm_stream", {}) and width in e.get("kv_stream", {})]
    return float(own_kv[width]) * float(median(ratios)) if ratios else None
