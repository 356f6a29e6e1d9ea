"""How sure we are: a band on every headline number, from our own held-out error on published runs
of the same kind (accelerator generation x dense/MoE x precision class).

The table (catalog/data/uncertainty.yaml) is written by the fitting tools: for each kind, the
signed errors e = predicted / published - 1 of the runs each predicted by constants fitted
without their source family (tools/fit_training.py) or their GPU (tools/fit_inference.py). A
prediction x of a time then lies, as the held-out runs did, in [x / (1 + e_high), x / (1 + e_low)];
a rate in [x (1 + e_low), x (1 + e_high)] of the published value's direction, i.e. published =
x / (1 + e). e_low and e_high are the 10th and 90th percentiles where a kind has 10 runs or more,
else the smallest and largest error seen (the basis says which). A kind never validated gets no
band but a sentence saying so: we do not guess how wrong we are.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import Field

from ..catalog.loader import package_yaml
from .result import Doc

TABLE = "uncertainty.yaml"


class Band(Doc):
    """The range the true value lay in for held-out runs of this kind; low/high None = not validated."""

    low: float | None = Field(default=None, description="lower end, in the unit of the number it qualifies")
    high: float | None = Field(default=None, description="upper end, in the unit of the number it qualifies")
    basis: str = Field(description="what the band rests on: the kind, how many held-out runs, their error")


def generation(architecture: str) -> str:
    """'Blackwell Ultra' -> 'Blackwell', 'Hopper (+ Grace CPU, NVLink-C2C)' -> 'Hopper', 'CDNA3' -> 'CDNA3'."""
    m = re.match(r"[A-Za-z]+\d*", architecture.strip().strip("'\""))
    return m.group(0) if m else architecture


def precision_class(precision: str) -> str:
    p = precision.lower()
    if p in ("bf16", "fp16"):
        return "bf16"
    return "fp4" if "fp4" in p else "fp8"


def case_kind(architecture: str, moe: bool, precision: str) -> str:
    """The kind of case a band is looked up by: 'Hopper dense fp8', 'Blackwell moe bf16'."""
    return f"{generation(architecture)} {'moe' if moe else 'dense'} {precision_class(precision)}"


def _section(name: str) -> dict[str, Any]:
    table = package_yaml(TABLE)
    section: dict[str, Any] = table.get(name) or {}
    return section


def error_range(section: str, kind: str) -> tuple[float, float, str] | None:
    """(e_low, e_high, basis) of a kind in a table section, or None when no run of the kind was validated."""
    sec = _section(section)
    entry = (sec.get("kinds") or {}).get(kind)
    if not entry:
        return None
    lo, hi = float(entry["low"]), float(entry["high"])
    how = "10th-90th percentile" if int(entry["n"]) >= 10 else "smallest to largest error"
    basis = (f"{sec.get('method', 'held-out error')} of {entry['n']} published {kind} runs: MAPE "
             f"{float(entry['mape_pct']):.1f}%, {how} {lo * 100:+.0f}% to {hi * 100:+.0f}%")
    return lo, hi, basis


def not_validated(section: str, kind: str) -> Band:
    what = _section(section).get("quantity", section)
    return Band(basis=f"no published {kind} run was validated for {what}: no band, the number is unchecked")


def _published_range(value: float, section: str, kind: str, quantity: str) -> Band:
    """Where the published value lay for held-out runs, for a predicted `value` of a time or a rate.

    A section's errors are defined on a time (e = T_pred / T_pub - 1, so T_pub = T_pred / (1 + e)
    and R_pub = R_pred (1 + e)) or on a rate (e = R_pred / R_pub - 1, the reverse)."""
    r = error_range(section, kind)
    if r is None or not math.isfinite(value):
        return not_validated(section, kind)
    lo, hi, basis = r
    on_time = _section(section).get("defined_on", "time") == "time"
    if (quantity == "time") == on_time:
        return Band(low=value / (1.0 + hi), high=value / (1.0 + lo), basis=basis)
    return Band(low=value * (1.0 + lo), high=value * (1.0 + hi), basis=basis)


def time_band(value: float, section: str, kind: str) -> Band:
    """A duration (step time, time to train)."""
    return _published_range(value, section, kind, "time")


def rate_band(value: float, section: str, kind: str) -> Band:
    """A rate (tokens/s)."""
    return _published_range(value, section, kind, "rate")


def count_band(value: float, section: str, kind: str, step: int) -> Band:
    """A GPU count sized for a rate: it scales as 1 / rate, rounded up to whole `step`s (nodes)."""
    b = _published_range(1.0, section, kind, "rate")
    if b.low is None or b.high is None:
        return b
    return Band(low=step * math.ceil(value / b.high / step), high=step * math.ceil(value / b.low / step),
                basis=b.basis)


__all__ = ["Band", "case_kind", "count_band", "error_range", "generation", "not_validated", "precision_class",
           "rate_band", "time_band"]
