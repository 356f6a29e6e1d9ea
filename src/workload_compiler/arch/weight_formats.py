"""Weight storage formats: bits per parameter, scale metadata included.

Block-scaled formats store a shared scale per block of elements; its bits are spread over the
block: bits_per_param = element_bits + scale_bits / block_size. Ideal packed storage is assumed
(no padding, no runtime copies). Weight bytes = parameters * bits_per_param / 8.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from .counts import param_counts
from .model import ModelArch


@dataclass(frozen=True)
class WeightFormat:
    name: str
    bits_per_param: float
    scale_note: str
    source: str
    includes_scales: bool = False   # True when bits_per_param counts block-scale metadata


def _fmt(name: str, element_bits: int, scale_bits: int, block: int, note: str, source: str) -> WeightFormat:
    bits = element_bits + (scale_bits / block if block else 0.0)
    return WeightFormat(name=name, bits_per_param=bits, scale_note=note, source=source,
                        includes_scales=bool(block))


_OCP_MX = "OCP Microscaling Formats (MX) Specification v1.0, 2023 (E8M0 scale per 32-element block)"

_FORMATS: dict[str, WeightFormat] = {f.name: f for f in (
    _fmt("fp32", 32, 0, 0, "no scale", "IEEE 754 binary32"),
    _fmt("bf16", 16, 0, 0, "no scale", "bfloat16 (Google Brain; Kalamkar et al. 2019, arXiv:1905.12322)"),
    _fmt("fp16", 16, 0, 0, "no scale", "IEEE 754 binary16"),
    _fmt("fp8", 8, 0, 0, "one FP32 scale per tensor: negligible, not counted",
         "Micikevicius et al. 2022, FP8 Formats for Deep Learning, arXiv:2209.05433 (E4M3/E5M2)"),
    _fmt("fp8-block128", 8, 32, 128 * 128, "FP32 scale per 128x128 weight block",
         "DeepSeek-V3, arXiv:2412.19437 Sec 3.3.2 (block-wise FP8 weights, weight_block_size [128, 128])"),
    _fmt("int8", 8, 0, 0, "per-output-channel FP16 scales (16/hidden bits): negligible, not counted",
         "Xiao et al. 2023, SmoothQuant W8A8, arXiv:2211.10438 (per-channel weight scales)"),
    _fmt("mxfp8", 8, 8, 32, "E8M0 scale per 32 elements", _OCP_MX),
    _fmt("mxfp6", 6, 8, 32, "E8M0 scale per 32 elements", _OCP_MX),
    _fmt("mxfp4", 4, 8, 32, "E8M0 scale per 32 elements", _OCP_MX),
    _fmt("nvfp4", 4, 8, 16, "FP8 E4M3 scale per 16 elements (+ one FP32 scale per tensor, not counted)",
         "NVIDIA, Introducing NVFP4 for Efficient and Accurate Low-Precision Inference (2025); "
         "Blackwell 2nd-gen Transformer Engine"),
    _fmt("int4", 4, 32, 128, "FP16 scale + FP16 zero point per group of 128 (upper bound: packed "
         "4-bit zeros, as GPTQ stores them, give 4 + 20/128)",
         "AWQ (Lin et al. 2024, arXiv:2306.00978) and GPTQ (Frantar et al. 2023, arXiv:2210.17323), "
         "group size 128"),
)}

_ALIASES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "half": "fp16",
            "fp8-e4m3": "fp8", "fp8_e4m3": "fp8", "e4m3": "fp8", "fp8-e5m2": "fp8", "w8a8": "int8",
            "fp8_block128": "fp8-block128", "awq": "int4", "gptq": "int4", "w4a16": "int4"}

_MAX_PLAIN_BITS = 64.0


def format_names() -> list[str]:
    return sorted(_FORMATS)


def _allowed() -> str:
    return f"one of {', '.join(format_names())}, or a number of bits (0 < bits <= 64)"


def _plain(bits: float, field: str, original: object) -> WeightFormat:
    if not 0 < bits <= _MAX_PLAIN_BITS:
        raise InputError(field, original, _allowed())
    return WeightFormat(name=f"{bits:g}-bit", bits_per_param=float(bits),
                        scale_note="no scale metadata (uniform precision, ideal packed storage)",
                        source="parameters x bits / 8")


def weight_format(name_or_bits: str | float, field: str = "format") -> WeightFormat:
    """A named format ('mxfp4', 'nvfp4', 'int4', ...) or plain bits (16, '4'); else InputError."""
    if isinstance(name_or_bits, bool):
        raise InputError(field, name_or_bits, _allowed())
    if isinstance(name_or_bits, int | float):
        return _plain(float(name_or_bits), field, name_or_bits)
    key = name_or_bits.strip().lower()
    key = _ALIASES.get(key, key)
    if key in _FORMATS:
        return _FORMATS[key]
    try:
        bits = float(key.removesuffix("-bit").removesuffix("bit"))
    except ValueError:
        raise InputError(field, name_or_bits, _allowed()) from None
    return _plain(bits, field, name_or_bits)


def weight_bytes(params: float, fmt: WeightFormat) -> float:
    """Ideal weight storage: params * bits_per_param / 8 (7B at 16 bits = 14e9 bytes)."""
    return params * fmt.bits_per_param / 8.0


def checkpoint_weight_bytes(arch: ModelArch, fmt: WeightFormat | None = None,
                            default: str = "bf16") -> float:
    """Bytes of all weights (total parameters, every expert). With `fmt`, every weight in it;
    without, the checkpoint's own format (`arch.weight_format`) over its scope, the rest in
    `default` (gpt-oss-120b: MXFP4 experts, BF16 attention, router and embeddings)."""
    counts = param_counts(arch)
    if fmt is not None:
        return weight_bytes(counts.total, fmt)
    rest = weight_format(default)
    if arch.weight_format is None:
        return weight_bytes(counts.total, rest)
    native = weight_format(arch.weight_format, "model.weight_format")
    if arch.weight_format_scope == "all":
        return weight_bytes(counts.total, native)
    return weight_bytes(counts.expert_params, native) + weight_bytes(counts.non_expert_params, rest)
