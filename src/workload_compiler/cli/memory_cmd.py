"""`wkc memory --params 7B --bits 16`: ideal weight storage, in GB and GiB, and what it leaves out.

bytes = parameters x bits per parameter / 8 (seed 003: 7B x 16 bit = 14e9 bytes = 14.00 GB =
13.04 GiB). Block-scaled formats (mxfp4, nvfp4, int4, ...) include their scale bits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated

import typer

from ..arch.counts import param_counts
from ..arch.presets import preset_arch
from ..arch.weight_formats import checkpoint_weight_bytes, weight_bytes, weight_format
from ..errors import InputError
from ..report.format import count
from ..units import GIB, format_bytes_binary, format_bytes_decimal, parse_count
from .common import out, user_errors

BAR_WIDTH = 32
REFERENCE_BITS = 32.0   # the bar is relative to 32-bit storage of the same parameters

EXCLUDES = ("activations", "KV cache", "gradients", "optimizer state",
            "runtime allocations (CUDA context, workspace, fragmentation)")


@dataclass(frozen=True)
class WeightMemory:
    params: float
    bits_per_param: float
    weight_bytes: float
    format: str
    note: str
    includes_scales: bool


def _from_args(params: str | None, bits: int | None, fmt: str | None, preset: str | None) -> WeightMemory:
    if (params is None) == (preset is None):
        raise InputError("--params", params, "give either --params (e.g. 7B, 405e9) or --preset")
    if bits is not None and fmt is not None:
        raise InputError("--format", fmt, "give either --bits or --format, not both")
    chosen = None
    if bits is not None:
        chosen = weight_format(bits, "--bits")
    elif fmt is not None:
        chosen = weight_format(fmt, "--format")
    if preset is not None:
        arch = preset_arch(preset, "--preset")
        n = param_counts(arch).total
        if chosen is None and arch.weight_format is not None:
            experts = arch.weight_format_scope == "experts"
            scope = "routed experts; the rest bf16" if experts else "all weights"
            total = checkpoint_weight_bytes(arch)
            native = weight_format(arch.weight_format)
            return WeightMemory(n, total * 8 / n, total, f"{arch.weight_format} ({scope})",
                                "the published checkpoint's format", native.includes_scales)
    else:
        n = parse_count(params, "--params")
        if n <= 0:
            raise InputError("--params", params, "a positive parameter count such as 7B")
    note = ""
    if chosen is None:
        chosen, note = weight_format(16), "assumed: no --bits or --format given"
    return WeightMemory(n, chosen.bits_per_param, weight_bytes(n, chosen), chosen.name,
                        note or chosen.scale_note, chosen.includes_scales)


def _bar(fraction: float) -> str:
    filled = round(min(fraction, 1.0) * BAR_WIDTH)
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def _excludes(m: WeightMemory) -> list[str]:
    """What the figure leaves out; block-scaled formats already count their scales."""
    meta = [] if m.includes_scales else ["quantization metadata (scales, zero points)"]
    return [*EXCLUDES, *meta]


_Params = Annotated[str | None, typer.Option("--params", help="parameter count, e.g. 7B or 405e9")]
_Bits = Annotated[int | None, typer.Option("--bits", help="bits per parameter, e.g. 16, 8, 4")]
_Format = Annotated[str | None, typer.Option("--format", help="fp32, bf16, fp8, int8, mxfp4, nvfp4, int4")]
_Preset = Annotated[str | None, typer.Option("--preset", "--model",
                                              help="a model preset id instead of --params (--model, as in wkc fit)")]
_Json = Annotated[bool, typer.Option("--json", help="print the figures as JSON")]


def memory_command(params: _Params = None, bits: _Bits = None, fmt: _Format = None,
                   preset: _Preset = None, as_json: _Json = False) -> None:
    """Weight storage of a model: parameters x bits / 8, in GB (1e9) and GiB (2^30)."""
    with user_errors():
        m = _from_args(params, bits, fmt, preset)
    reference = m.params * REFERENCE_BITS / 8
    if as_json:
        doc = {"params": m.params, "bits_per_param": m.bits_per_param, "weight_bytes": m.weight_bytes,
               "weight_gb": m.weight_bytes / 1e9, "weight_gib": m.weight_bytes / GIB, "format": m.format,
               "fp32_bytes": reference, "excludes": _excludes(m)}
        print(json.dumps(doc, indent=2, sort_keys=True))
        return
    lines = [
        f"Weight storage: {count(m.params)} parameters x {m.bits_per_param:.4g} bits / 8"   # words: B is bytes here
        f"  [{m.format}: {m.note}]",
        f"  {format_bytes_decimal(m.weight_bytes)}  ({format_bytes_binary(m.weight_bytes)})",
        f"  {_bar(m.weight_bytes / reference)} {m.weight_bytes / reference:.0%} of 32-bit storage "
        f"({format_bytes_decimal(reference)})",
        f"Excludes: {', '.join(_excludes(m))}.",
        "Weight storage only: it does not establish whether a model fits on a GPU.",
    ]
    for line in lines:
        out.print(line, markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    app.command("memory")(memory_command)
