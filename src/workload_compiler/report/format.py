"""How one value reads in a report, chosen by the unit its field declares (`quantity()`).

The document holds SI numbers; only here do they become "14.00 GB (13.04 GiB)", "2.00 fs" or
"31.2 d". `format_quantity(value, unit)` is the one formatter; the renderers take the unit from
the model's field metadata (report/rows.py), never from a key's spelling.
"""

from __future__ import annotations

import math
from typing import Any

from ..units import format_bytes_binary, format_bytes_decimal, format_power

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

_SI = ((1e24, "Y"), (1e21, "Z"), (1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def _sig(v: float, digits: int = 3) -> str:
    """`digits` significant figures, without exponent for everyday magnitudes: 0.0123, 12.3, 1,234."""
    if v == 0:
        return "0"
    if abs(v) >= 1e15 or abs(v) < 1e-4:
        return f"{v:.{digits - 1}e}"
    if abs(v) >= 10 ** digits:
        return f"{v:,.0f}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    return f"{v:.{decimals}f}"


def si(v: float, unit: str, digits: int = 3) -> str:
    """'67.0 TFLOP/s', '250 GB/s', '40.0 kW' (decimal prefixes)."""
    for scale, prefix in _SI:
        if abs(v) >= scale:
            return f"{_sig(v / scale, digits)} {prefix}{unit}"
    return f"{_sig(v, digits)} {unit}"


def duration(s: float) -> str:
    """From femtoseconds to years: '2.00 fs', '50.0 ms', '87.3 s', '31.8 d', '3.2 years'."""
    a = abs(s)
    if a == 0:
        return "0 s"
    if a < 60:
        for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"), (1e-12, "ps"), (1e-15, "fs")):
            if a >= scale * 0.9995:
                return f"{_sig(s / scale)} {unit}"
        return f"{s:.2e} s"
    for scale, unit, threshold in ((365 * 86400.0, "years", 365 * 86400.0), (86400.0, "d", 2 * 86400.0),
                                   (3600.0, "h", 2 * 3600.0), (60.0, "min", 120.0)):
        if a >= threshold:
            return f"{s / scale:.1f} {unit}"
    return f"{_sig(s)} s"


def byte_size(b: float) -> str:
    """Both units where they differ, since people confuse them: '14.0 GB (13.0 GiB)'; '55 B'."""
    if abs(b) < 1000:
        return f"{b:.0f} B" if float(b).is_integer() else f"{b:.3g} B"
    return f"{format_bytes_decimal(b)} ({format_bytes_binary(b)})"


def count(n: float) -> str:
    """'1,024', '95,367', '174.6 billion', '14.8 trillion' (words, not K/M/B: B is bytes here)."""
    if abs(n) >= 1e18:
        return f"{n:.3g}"
    for scale, word in ((1e15, "quadrillion"), (1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if abs(n) >= scale:
            return f"{_sig(n / scale, 4 if abs(n) / scale >= 100 else 3)} {word}"
    if float(n).is_integer():
        return f"{int(n):,}"
    return f"{n:,.1f}" if abs(n) >= 100 else _sig(n)


def _usd(v: float) -> str:
    return f"${v:,.2f}" if abs(v) < 1e6 else f"${_sig(v / 1e6)}M"


_FORMATS: dict[str, Any] = {
    "s": duration,
    "B": byte_size,
    "B/s": lambda v: si(v, "B/s"),
    "bit/s": lambda v: si(v, "b/s"),
    "W": lambda v: format_power(v),
    "Wh": lambda v: si(v, "Wh"),
    "J": lambda v: si(v, "J"),
    "FLOP": lambda v: f"{_sig(v) if abs(v) < 1e6 else f'{v:.3g}'} FLOP",   # '1,000 FLOP', '3.77e+24 FLOP'
    "FLOP/s": lambda v: si(v, "FLOP/s"),
    "TFLOP/s": lambda v: f"{_sig(v)} TFLOP/s",
    "FLOP/B": lambda v: f"{_sig(v)} FLOP/B",
    "fraction": lambda v: f"{100 * v:.1f}%",
    "1": _sig,
    "count": count,
    "tokens": lambda v: f"{count(v)} tokens",
    "tokens/s": lambda v: f"{count(round(v)) if abs(v) >= 100 else _sig(v)} tokens/s",
    "requests/s": lambda v: f"{_sig(v)} req/s",
    "items/s": lambda v: f"{count(round(v)) if abs(v) >= 100 else _sig(v)}/s",   # "12,345/s", "1.23 million/s"
    "1/s": lambda v: f"{_sig(v)}/s",
    "1/day": lambda v: f"{_sig(v)}/day",
    "USD": _usd,
    "USD/h": lambda v: f"{_usd(v)}/h",
    "USD/kWh": lambda v: f"${_sig(v)}/kWh",
    "USD/Mtoken": lambda v: f"${_sig(v)} per 1M tokens",
    "B/token": lambda v: f"{byte_size(v)}/token",
    "m2": lambda v: f"{_sig(v)} m²",
    "m3/s": lambda v: f"{_sig(v)} m³/s",
    "m3/h": lambda v: f"{_sig(v)} m³/h",
    "L/min": lambda v: f"{_sig(v)} L/min",
    "K": lambda v: f"{_sig(v)} K",
    "degC": lambda v: f"{_sig(v)} °C",
    "m": lambda v: si(v, "m"),
    "nm": lambda v: f"{_sig(v)} nm",
    "Hz": lambda v: si(v, "Hz"),
    "ns/day": lambda v: f"{_sig(v)} ns/day",
    "years/day": lambda v: f"{_sig(v)} years/day",
    "cfm": lambda v: f"{v:,.0f} cfm",
    "U": lambda v: f"{v:.0f} U",
}


def format_quantity(value: Any, unit: str | None = None) -> str:
    """One value as it reads in a report, by its declared unit (None: a plain rendering)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        v = float(value)
        if not math.isfinite(v):
            return "unreachable"
        if unit in _FORMATS:
            return str(_FORMATS[unit](v))
        return f"{int(v):,}" if float(v).is_integer() and abs(v) < 1e15 else _sig(v, 4)
    if isinstance(value, list):
        return "; ".join(format_quantity(v, unit) for v in value) if value else "—"
    if isinstance(value, dict):
        return ", ".join(f"{k} {format_quantity(v, unit)}" for k, v in value.items()) if value else "—"
    return str(value)


_LEGACY_SUFFIXES = (("_bytes_per_s", "B/s"), ("_bits_per_s", "bit/s"), ("_bytes", "B"), ("_flops_per_s", "FLOP/s"),
                    ("_flops", "FLOP"), ("_s", "s"), ("_w", "W"), ("mfu", "fraction"), ("goodput", "fraction"),
                    ("_fraction", "fraction"), ("_share", "fraction"), ("params", "count"), ("tokens", "tokens"),
                    ("gpus", "count"), ("racks", "count"))


def format_value(key: str, value: Any, unit: str | None = None) -> str:
    """Compatibility for callers without the model (a command's own table columns): the unit if
    given, else one guessed from the key's ending. The report renderers never take this path."""
    if unit is None:
        unit = next((u for suffix, u in _LEGACY_SUFFIXES if key.endswith(suffix)), None)
    return format_quantity(value, unit)


__all__ = ["LAYER_TITLES", "byte_size", "count", "duration", "format_quantity", "format_value", "si"]
