"""Kernel ceilings: the share of a GPU's datasheet peaks that the serving kernels sustain.

A loader and a lookup over catalog/data/kernel_ceilings.yaml (medians of TensorRT-LLM kernel
micro-benchmarks per GPU and precision, from AIConfigurator's measured database; the file's
header gives the reduction). Three numbers per GPU, each a fraction of the catalog's peak:

    gemm_compute[p]       FLOP-bound GEMMs at precision p       (FLOP/s = peak(p) * fraction)
    gemm_stream[p]        weight streaming of decode GEMMs      (bytes/s = HBM bandwidth * fraction)
    kv_stream[kv]         decode attention reading the KV cache (bytes/s = HBM bandwidth * fraction)
    attention_compute[kv] prefill attention math, FP8 FMHA over an FP8 KV cache, else BF16
                          (FLOP/s = BF16 peak * fraction)

They carry what a datasheet does not: an NVFP4 GEMM on a B200 sustains 0.39 of the 9 PFLOP/s
dense FP4 peak where an FP8 GEMM on an H100 sustains 0.62 of its 1,979 TFLOP/s. A GPU or precision
without a measurement takes, as an assumption, its own measured kv_stream scaled to a weight stream
(gemm_stream only: catalog/kernel_ceilings.py STREAM_KV_WIDTH), else the median of the measured GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.kernel_ceilings import PARTS, ceiling_table, estimate


@dataclass(frozen=True, kw_only=True)
class KernelCeilings:
    """Sustained fractions of the datasheet peaks for one GPU, GEMM precision and KV dtype."""

    gemm_compute: float      # at the GEMM precision
    gemm_stream: float       # at the GEMM precision
    head_compute: float      # BF16 GEMMs (output head, attention math)
    head_stream: float       # BF16 weights (output head)
    kv_stream: float         # at the KV dtype
    attention_compute: float  # prefill attention at the KV dtype's FMHA, of the BF16 peak
    note: str | None         # which fractions are medians of other GPUs, or None
    source: str


def _kv_key(kv_dtype: str) -> str:
    return "bf16" if kv_dtype in ("bf16", "fp16") else "fp8"    # int8 KV streams like FP8: 1 byte


def kernel_ceilings(accelerator_id: str, gemm_precision: str, kv_dtype: str) -> KernelCeilings:
    """The ceilings the serving step runs at (GEMM precision: bf16 | fp8 | fp4 | int8)."""
    gemm_key = "fp8" if gemm_precision == "int8" else gemm_precision   # INT8 GEMMs: FP8's share
    kv_key = _kv_key(kv_dtype)
    asked = {"gemm_compute": gemm_key, "gemm_stream": gemm_key, "kv_stream": kv_key, "attention_compute": kv_key}
    values: dict[str, float] = {}
    unmeasured: dict[str, set[str]] = {"own kv_stream": set(), "median": set()}
    for part, p in [*asked.items(), ("head_compute", "bf16"), ("head_stream", "bf16")]:
        table_part = part.replace("head_", "gemm_")
        assert table_part in PARTS
        values[part], how = estimate(accelerator_id, table_part, p)
        if how != "measured":
            unmeasured[how].add(f"{table_part}[{p}]")
    clauses = []
    if unmeasured["own kv_stream"]:
        clauses.append(f"{', '.join(sorted(unmeasured['own kv_stream']))} from its own measured kv_stream times the "
                       "median gemm_stream / kv_stream ratio of the GPUs measured for both")
    if unmeasured["median"]:
        clauses.append(f"{', '.join(sorted(unmeasured['median']))} the median of the measured GPUs at that precision")
    note = None
    if clauses:
        note = (f"no TensorRT-LLM kernel measurement of {accelerator_id} for those ceilings; assumed: "
                + "; ".join(clauses) + " (catalog/data/kernel_ceilings.yaml)")
    return KernelCeilings(note=note, source=ceiling_table()[1], **values)
