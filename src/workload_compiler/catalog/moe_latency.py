"""Measured latency of TensorRT-LLM's fused MoE op, by GPU, weight format, expert shape and degrees.

catalog/data/moe_op_latency.json.gz (tools/moe_op_table.py): AIConfigurator 0.12.0's measurements of
the whole op (routing, token permutation, both grouped GEMMs, activation, finalize) with the CUTLASS
backend, TensorRT-LLM's default, under balanced routing, at 27 token counts from 1 to 16,384 (the
tokens of one step entering the op across its expert-parallel group). Between measured counts the
latency is interpolated in log-log; above the largest it grows in proportion to the tokens (the op
is then throughput-bound); below the smallest it is the smallest's.
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from typing import Any

import numpy as np

from .loader import DATA_DIR

FILE = DATA_DIR / "moe_op_latency.json.gz"
Key = tuple[str, str, int, int, int, int, int, int]


@cache
def _table() -> tuple[dict[Key, list[float | None]], np.ndarray, str]:
    """The measured rows by key, left as read: a compile looks up one or two of the ~10,000."""
    with gzip.open(FILE, "rt", encoding="utf-8") as fh:
        doc: dict[str, Any] = json.load(fh)
    rows: dict[Key, list[float | None]] = {
        (t["accelerator"], t["weights"], *(int(v) for v in t["shape"])): t["latency_us"] for t in doc["tables"]}
    return rows, np.asarray(doc["tokens"], dtype=np.float64), str(doc["source"])


@cache
def _curve(key: Key) -> tuple[np.ndarray, np.ndarray] | None:
    """(log tokens, log seconds) at the measured counts of one row; None if it is not in the table
    or has fewer than two."""
    rows, grid, _ = _table()
    raw = rows.get(key)
    if raw is None:
        return None
    lat = np.array([np.nan if v is None else v for v in raw], dtype=np.float64)
    ok = ~np.isnan(lat)
    return (np.log(grid[ok]), np.log(lat[ok] * 1e-6)) if ok.sum() >= 2 else None


def source() -> str:
    return _table()[2]


def measured(accelerator_id: str, weights: str, hidden: int, inter: int, experts: int, top_k: int,
             moe_tp: int, moe_ep: int) -> bool:
    """Whether the op was measured for this GPU, weight format, expert shape and degrees."""
    return _curve((accelerator_id, weights, hidden, inter, experts, top_k, moe_tp, moe_ep)) is not None


def moe_op_seconds(accelerator_id: str, weights: str, hidden: int, inter: int, experts: int, top_k: int,
                   moe_tp: int, moe_ep: int, tokens: Any) -> np.ndarray | None:
    """Seconds of one MoE op over `tokens` (array); None where the op was not measured."""
    entry = _curve((accelerator_id, weights, hidden, inter, experts, top_k, moe_tp, moe_ep))
    if entry is None:
        return None
    log_n, log_t = entry
    n = np.maximum(np.asarray(tokens, dtype=np.float64), float(np.exp(log_n[0])))
    inside = np.exp(np.interp(np.log(n), log_n, log_t))
    top = float(np.exp(log_n[-1]))
    return np.asarray(inside * np.maximum(n / top, 1.0))


__all__ = ["FILE", "measured", "moe_op_seconds", "source"]
