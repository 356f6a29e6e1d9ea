"""Weight formats: bits per parameter with block-scale overhead, and the checkpoint sizes."""

from __future__ import annotations

import pytest

from workload_compiler.arch.counts import param_counts
from workload_compiler.arch.presets import preset_arch
from workload_compiler.arch.weight_formats import (
    checkpoint_weight_bytes,
    format_names,
    weight_bytes,
    weight_format,
)
from workload_compiler.errors import InputError


@pytest.mark.parametrize(("name", "bits"), [
    ("fp32", 32), ("bf16", 16), ("fp16", 16), ("fp8", 8), ("int8", 8),
    ("mxfp8", 8 + 8 / 32),     # OCP MX v1.0: 8-bit E8M0 scale shared by 32 elements
    ("mxfp4", 4 + 8 / 32),
    ("nvfp4", 4 + 8 / 16),     # NVIDIA NVFP4: FP8 E4M3 scale per 16 elements
    ("int4", 4 + 32 / 128),    # AWQ/GPTQ g128: FP16 scale + FP16 zero per 128 weights
    ("fp8-block128", 8 + 32 / (128 * 128)),   # DeepSeek-V3: FP32 scale per 128x128 block
])
def test_bits_per_param(name: str, bits: float) -> None:
    fmt = weight_format(name)
    assert fmt.bits_per_param == bits
    assert fmt.source and fmt.scale_note
    assert fmt.includes_scales == (bits != int(bits))


def test_plain_bits_and_aliases() -> None:
    assert weight_format(16).bits_per_param == 16
    assert weight_format("4").bits_per_param == 4 and weight_format("4").name == "4-bit"
    assert weight_format("BF16").name == "bf16" and weight_format("bfloat16").name == "bf16"
    assert weight_format("awq").name == "int4"


@pytest.mark.parametrize("bad", ["fp5", "", 0, -8, 65, "int3x"])
def test_unknown_format_lists_the_formats(bad: str | int) -> None:
    with pytest.raises(InputError) as exc:
        weight_format(bad)
    assert all(n in exc.value.allowed for n in format_names())


def test_seed_003_seven_billion_at_16_bits_is_14_gb() -> None:
    """Seed 003: 7B parameters x 16 bits / 8 = 14e9 bytes = 14 GB = 13.04 GiB."""
    b = weight_bytes(7e9, weight_format(16))
    assert b == 14e9
    assert round(b / 2**30, 2) == 13.04


def test_gpt_oss_checkpoint_is_mxfp4_experts_and_bf16_rest() -> None:
    """openai/gpt-oss-120b ships MXFP4 experts and BF16 attention/embeddings: the model card
    (arXiv:2508.10925 Sec 2) says the checkpoint fits on one 80 GB GPU; HF lists ~65 GB of files."""
    arch = preset_arch("gpt-oss-120b")
    c = param_counts(arch)
    got = checkpoint_weight_bytes(arch)
    assert got == c.expert_params * 4.25 / 8 + c.non_expert_params * 2
    assert 60e9 < got < 70e9
    assert checkpoint_weight_bytes(arch, weight_format("bf16")) == c.total * 2


def test_unquantized_checkpoint_is_bf16() -> None:
    arch = preset_arch("llama3.1-8b")
    assert checkpoint_weight_bytes(arch) == param_counts(arch).total * 2
