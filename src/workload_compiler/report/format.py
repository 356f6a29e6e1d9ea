"""How one value reads in a report, chosen by the unit in its key (`_bytes`, `_s`, `_w`, ...).

The document holds SI numbers; only here do they become "14.00 GB (13.04 GiB)" or "31.2 d".
"""

from __future__ import annotations

import math
from typing import Any

from ..units import format_bytes, format_count, format_duration, format_power

# The document's layers in report order, with their headings (terminal and Markdown alike).
LAYER_TITLES = {
    "objective": "1 · Objective",
    "compute": "2 · Compute",
    "inference": "2b · Serving",
    "hpc": "2b · Simulation",
    "fabric": "3 · Fabric",
    "storage": "4 · Storage",
    "reliability": "4b · Reliability",
    "bottleneck": "Bottleneck: where the step time goes",
    "software": "5 · Software & access",
    "facility": "6 · Facility",
}
# Keys of a layer that a section of their own renders in full (shown once, not twice).
SHOWN_ELSEWHERE = {"software": frozenset({"boundary"})}   # operating_boundary, boundary_register


def layer_data(doc: dict[str, Any], name: str) -> Any:
    """The layer's dump without the keys a section of their own renders."""
    data = doc.get(name)
    skip = SHOWN_ELSEWHERE.get(name)
    return {k: v for k, v in data.items() if k not in skip} if isinstance(data, dict) and skip else data


def _si(value: float, unit: str) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {prefix}{unit}"
    return f"{value:.2f} {unit}"


def format_value(key: str, value: Any) -> str:
    """Format by the key's unit suffix; fall back to a compact plain rendering."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        v = float(value)
        if not math.isfinite(v):
            return "∞" if v > 0 else "—"
        if "bytes_per_s" in key:
            return f"{_si(v, 'B/s')}"
        if "bits_per_s" in key:
            return f"{_si(v, 'b/s')}"
        if key.endswith("_bytes") or "_bytes_per_" in key:
            return format_bytes(v)
        if key.endswith(("_flops", "flops_per_sample")) or key == "total_flops":
            return f"{v:.3e} FLOP"
        if key.endswith("_flops_per_s"):
            return _si(v, "FLOP/s")
        if key.endswith("_per_s") or "_per_s_" in key:   # not _per_sample
            return f"{v:,.4g}/s" if v < 1e4 else f"{format_count(v)}/s"
        if key.endswith("_s"):
            return format_duration(v)
        if key.endswith("_w"):
            return format_power(v)
        if key.endswith(("mfu", "goodput", "_fraction", "_share", "_shares", "_of_step", "_of_run", "efficiency")):
            return f"{100 * v:.1f}%"
        if key.endswith("params") or key.endswith("tokens") or key == "steps":
            return format_count(v)
        if isinstance(value, int) or v.is_integer():
            return f"{int(v):,}"
        return f"{v:,.4g}"
    if isinstance(value, list):
        if not value:
            return "—"
        if all(isinstance(v, dict) for v in value):
            return "\n".join(" · ".join(format_value(k, x) for k, x in v.items()
                                         if x is not None and not isinstance(x, dict | list))
                             for v in value)
        return "; ".join(format_value(key, v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={format_value(key, v)}" for k, v in value.items())
    return str(value)
