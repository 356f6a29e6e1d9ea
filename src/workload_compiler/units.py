"""Quantities at the boundary: parse "7B", "80GiB", "2.5MW", "30d", "20/s"; print GB and GiB.

Inside the tool every quantity is a float in SI base units (bytes, W, s, FLOP, 1/s). GB = 10^9
bytes and GiB = 2^30 bytes are kept apart everywhere.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema

from .errors import InputError

GIB = 2.0**30   # bytes in a GiB; GB = 1e9 bytes is written as 1e9

_NUMBER = r"([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"

_COUNT_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "b": 1e9, "B": 1e9, "G": 1e9,
                 "t": 1e12, "T": 1e12, "P": 1e15,
                 # the words the reports write ('174.6 billion', '14.8 trillion tokens') read back
                 "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "quadrillion": 1e15}
_BYTE_UNIT = {"b": 1.0, "": 1.0, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15,
              "kib": 2.0**10, "mib": 2.0**20, "gib": GIB, "tib": 2.0**40, "pib": 2.0**50}
_POWER_UNIT = {"w": 1.0, "": 1.0, "kw": 1e3, "mw": 1e6, "gw": 1e9}
_TIME_UNIT = {"": 1.0, "s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "ps": 1e-12,
              "fs": 1e-15, "min": 60.0,
              "m": 60.0, "h": 3600.0, "hr": 3600.0, "d": 86400.0, "day": 86400.0, "days": 86400.0,
              "w": 7 * 86400.0, "wk": 7 * 86400.0, "weeks": 7 * 86400.0, "week": 7 * 86400.0,
              "hours": 3600.0, "hour": 3600.0, "minutes": 60.0, "seconds": 1.0,
              # the year the reports write ('3.2 years'): 365 days
              "y": 365 * 86400.0, "year": 365 * 86400.0, "years": 365 * 86400.0}


_GROUPS = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?=\D|$)")   # a leading number with thousands separators
_WORDS = frozenset(k for k in _COUNT_SUFFIX if len(k) > 1)     # 'thousand' ... 'quadrillion'


def ungrouped(text: str) -> str:
    """`text` with the thousands separators of its leading number taken out, as the reports write
    numbers ('1,024 GPUs' -> '1024 GPUs'); a decimal comma ('1,5') is left, to be refused."""
    return _GROUPS.sub(lambda m: m.group(0).replace(",", ""), text.strip())


def _split(text: str, field: str, what: str) -> tuple[float, str]:
    match = re.fullmatch(_NUMBER + r"\s*([^\d\s].*)?", ungrouped(text))
    if not match:
        raise InputError(field, text, f"expected {what}")
    return float(match.group(1)), (match.group(2) or "").strip()


def _float(value: int | float, field: str) -> float:
    """float(value); an integer too large for a float is refused, not an OverflowError."""
    try:
        return float(value)
    except OverflowError:
        raise InputError(field, value, "a finite quantity (this integer is beyond a float's range)") from None


def _finite_nonnegative(value: float, field: str, original: Any) -> float:
    if not math.isfinite(value) or value < 0:
        raise InputError(field, original, "expected a finite, non-negative quantity")
    return value


def parse_count(value: Any, field: str = "value") -> float:
    """'7B' -> 7e9, '405e9' -> 4.05e11, '300B' (tokens) -> 3e11, '1.5M' -> 1.5e6, 42 -> 42."""
    if isinstance(value, bool):
        raise InputError(field, value, "expected a number such as 7B, 405e9 or 1024")
    if isinstance(value, int | float):
        return _finite_nonnegative(_float(value, field), field, value)
    if not isinstance(value, str):
        raise InputError(field, value, "expected a number such as 7B, 405e9 or 1024")
    number, unit = _split(value, field, "a number such as 7B, 405e9 or 1024")
    unit = unit.removesuffix(" tokens").removesuffix("tokens").strip()
    unit = unit.lower() if unit.lower() in _WORDS else unit
    if unit not in _COUNT_SUFFIX:
        raise InputError(field, value, f"unknown suffix {unit!r}; use one of K, M, B, T, or a word: "
                                       + ", ".join(sorted(_WORDS, key=_COUNT_SUFFIX.__getitem__)))
    return _finite_nonnegative(number * _COUNT_SUFFIX[unit], field, value)


def _parse_with(value: Any, field: str, table: dict[str, float], what: str) -> float:
    if isinstance(value, bool):
        raise InputError(field, value, f"expected {what}")
    if isinstance(value, int | float):
        return _finite_nonnegative(_float(value, field), field, value)
    if not isinstance(value, str):
        raise InputError(field, value, f"expected {what}")
    number, unit = _split(value, field, what)
    key = unit.lower() if unit.lower() in table else unit
    if key not in table:
        raise InputError(field, value, f"unknown unit {unit!r}; expected {what}")
    return _finite_nonnegative(number * table[key], field, value)


def parse_bytes(value: Any, field: str = "value") -> float:
    """'80GiB' -> 85899345920, '141 GB' -> 1.41e11 (GB = 1e9, GiB = 2^30)."""
    return _parse_with(value, field, _BYTE_UNIT, "a size such as 141 GB or 80 GiB")


def parse_power(value: Any, field: str = "value") -> float:
    """'2.5MW' -> 2.5e6 W, '40kW' -> 4e4 W."""
    return _parse_with(value, field, _POWER_UNIT, "a power such as 40kW or 2.5MW")


def parse_duration(value: Any, field: str = "value") -> float:
    """'30d' -> 2592000 s, '24h', '50ms', '2s', '90min'. A bare number is seconds."""
    return _parse_with(value, field, _TIME_UNIT, "a duration such as 30d, 24h, 2s or 50ms")


def parse_rate(value: Any, field: str = "value") -> float:
    """'20/s' -> 20 per second, '1200/min', '5/h'. A bare number is per second."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _finite_nonnegative(_float(value, field), field, value)
    if not isinstance(value, str):
        raise InputError(field, value, "expected a rate such as 20/s or 1200/min")
    text = value.strip()
    if "/" not in text:
        return parse_count(text, field)
    number, per = text.split("/", 1)
    # what is counted may be named, as the reports write it: '20.0 req/s', '5 requests/min'
    number = re.sub(r"\s*(req|reqs|requests?|items?|samples?)$", "", number.strip(), flags=re.IGNORECASE)
    return parse_count(number, field) / _per(per, field, "a rate such as 20/s or 1200/min")


def parse_byte_rate(value: Any, field: str = "value") -> float:
    """'250GB/s' -> 2.5e11 bytes/s, '2 GiB/s', '9TB/h'; a bare number is bytes/s."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return parse_bytes(value, field)
    if not isinstance(value, str):
        raise InputError(field, value, "expected a bandwidth such as 250GB/s or 9TB/h")
    text = value.strip()
    if "/" not in text:
        return parse_bytes(text, field)
    size, per = text.split("/", 1)
    return parse_bytes(size, field) / _per(per, field, "a bandwidth such as 250GB/s or 9TB/h")


def _per(per: str, field: str, what: str) -> float:
    """The denominator of a rate in seconds: 's' is 1 s, '2s' 2 s, 'min' 60 s (a bare unit is one
    of it; a number in front counts: '20/2s' is 10 per second)."""
    per = per.strip()
    seconds = _parse_with(per if per[:1].isdigit() or per[:1] == "." else "1" + per, field, _TIME_UNIT, what)
    if seconds <= 0:
        raise InputError(field, per, f"a positive time in the denominator; expected {what}")
    return seconds


_BIT_RATE_UNIT = {"": 1.0, "b/s": 1.0, "bps": 1.0, "kb/s": 1e3, "kbps": 1e3, "k": 1e3, "mb/s": 1e6, "mbps": 1e6,
                  "m": 1e6, "gb/s": 1e9, "gbps": 1e9, "gbit/s": 1e9, "g": 1e9, "tb/s": 1e12, "tbps": 1e12, "t": 1e12}


def parse_bit_rate(value: Any, field: str = "value") -> float:
    """A link rate in bits per second: '400Gb/s', '400G', '400 Gbps', '800Gbit/s'; a bare number is bits/s.
    Bytes are not accepted here (a NIC's speed is quoted in bits: 400G NDR = 50 GB/s)."""
    if isinstance(value, str) and re.search(r"[0-9.]\s*[kmgtKMGT]?B(/s|ps)", value):
        raise InputError(field, value, "a link rate in bits per second such as 400Gb/s (not bytes)")
    return _parse_with(value, field, _BIT_RATE_UNIT, "a link rate such as 400Gb/s, 400G or 200Gbps")


def validated_by(parser: Any) -> BeforeValidator:
    """A pydantic validator that parses a quantity at the boundary and lets None through."""
    return BeforeValidator(lambda v: v if v is None else parser(v))


def typed_as_text(quantity: str, *examples: str) -> WithJsonSchema:
    """The exported JSON Schema of a quantity: a number in SI units or the text a person types
    ("7B", "2.5MW"), marked `x-quantity` so editors and the web form know units are accepted."""
    return WithJsonSchema({"anyOf": [{"type": "number", "minimum": 0}, {"type": "string", "minLength": 1}],
                           "x-quantity": quantity, "examples": list(examples)}, mode="validation")


Count = Annotated[float, validated_by(parse_count), typed_as_text("count", "7B", "300B", "1024")]
Bytes = Annotated[float, validated_by(parse_bytes), typed_as_text("bytes", "80GiB", "141GB")]
Watts = Annotated[float, validated_by(parse_power), typed_as_text("power", "2.5MW", "40kW")]
Seconds = Annotated[float, validated_by(parse_duration), typed_as_text("duration", "30d", "24h", "50ms")]
PerSecond = Annotated[float, validated_by(parse_rate), typed_as_text("rate", "20/s", "1200/min")]
BytesPerSecond = Annotated[float, validated_by(parse_byte_rate), typed_as_text("byte_rate", "250GB/s", "2GiB/s")]
BitsPerSecond = Annotated[float, validated_by(parse_bit_rate), typed_as_text("bit_rate", "400Gb/s", "800Gbps")]


def _scaled(value: float, steps: list[tuple[float, str]], digits: int) -> str:
    for scale, unit in steps:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}f} {unit}"
    scale, unit = steps[-1]
    return f"{value / scale:.{digits}f} {unit}"


def format_bytes_decimal(n: float, digits: int = 2) -> str:
    return _scaled(n, [(1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1, "B")], digits)


def format_bytes_binary(n: float, digits: int = 2) -> str:
    return _scaled(n, [(2.0**50, "PiB"), (2.0**40, "TiB"), (2.0**30, "GiB"), (2.0**20, "MiB"),
                       (2.0**10, "KiB"), (1, "B")], digits)


def format_bytes(n: float, digits: int = 2) -> str:
    """Both units, since people confuse them: '14.00 GB (13.04 GiB)'."""
    return f"{format_bytes_decimal(n, digits)} ({format_bytes_binary(n, digits)})"


def format_power(w: float, digits: int = 2) -> str:
    return _scaled(w, [(1e9, "GW"), (1e6, "MW"), (1e3, "kW"), (1, "W")], digits)


def format_duration(s: float) -> str:
    if not math.isfinite(s):
        return "∞"
    if s >= 2 * 86400:
        return f"{s / 86400:.1f} d"
    if s >= 2 * 3600:
        return f"{s / 3600:.1f} h"
    if s >= 120:
        return f"{s / 60:.1f} min"
    if s >= 1:
        return f"{s:.2f} s"
    return f"{s * 1e3:.2f} ms"


def counted(n: float, noun: str) -> str:
    """'1 replica', '1,024 GPUs': a count with thousands separators and its noun, plural unless it
    reads as one (0.6 prints '1', so it is singular too)."""
    shown = f"{n:,.0f}"
    return f"{shown} {noun}{'' if shown == '1' else 's'}"


def format_count(n: float, digits: int = 2) -> str:
    return _scaled(n, [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"), (1, "")], digits).strip()
