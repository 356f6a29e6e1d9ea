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


def fraction(accelerator_id: str, part: str, precision: str) -> tuple[float, bool]:
    """(fraction, measured) of `part` at `precision` on the GPU; the median of the measured GPUs
    when this one has no measurement (measured False)."""
    table, _ = ceiling_table()
    own = table.get(accelerator_id, {}).get(part, {})
    if precision in own:
        return float(own[precision]), True
    others = [float(e[part][precision]) for e in table.values() if precision in e.get(part, {})]
    if not others:
        others = [float(e[part]["bf16"]) for e in table.values() if "bf16" in e.get(part, {})]
    return float(median(others)), False


