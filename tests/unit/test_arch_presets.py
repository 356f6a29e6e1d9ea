"""Model presets: every id loads, cites a source, and its parameter count matches the published one.

Tolerance: a published figure is rounded, so it is checked to half a unit of its last printed
digit ("46.7B" -> +-0.05B), plus 0.2% for what the count leaves out on purpose (biases,
learned position embeddings, QK-norm and attention-sink vectors; see arch/counts.py).
"""

from __future__ import annotations

import pytest

from workload_compiler.arch.counts import param_counts
from workload_compiler.arch.model import ModelArch
from workload_compiler.arch.presets import list_presets, preset_arch, preset_source
from workload_compiler.errors import InputError

UNMODELED = 0.002
REQUIRED_IDS = {
    "gpt3-175b", "megatron-1t", "llama3-8b", "llama3-70b", "llama3.1-405b", "mixtral-8x7b",
    "mixtral-8x22b", "deepseek-v3", "qwen3-30b-a3b", "qwen3-235b-a22b", "nemotron4-15b",
    "nemotron4-340b", "llama2-70b", "llama3.1-8b", "llama3.3-70b", "qwen3-32b", "gpt-oss-120b",
    "llama4-maverick", "deepseek-r1",
}


def near(value: float, published: str, scale: float = 1e9) -> bool:
    """`value` (a count) within rounding of `published` (in billions, as printed) + UNMODELED."""
    decimals = len(published.split(".")[1]) if "." in published else 0
    target = float(published) * scale
    return abs(value - target) <= 0.5 * 10.0**-decimals * scale + UNMODELED * target


def test_all_required_presets_exist_and_cite_a_source() -> None:
    assert set(list_presets()) >= REQUIRED_IDS
    for pid in list_presets():
        arch = preset_arch(pid)
        assert isinstance(arch, ModelArch)
        assert len(preset_source(pid)) > 10, pid
        assert arch.source == preset_source(pid), pid   # the resolved arch carries its citation


def test_unknown_preset_names_the_field_and_lists_the_ids() -> None:
    with pytest.raises(InputError) as exc:
        preset_arch("llama-9000")
    assert exc.value.field == "model.preset"
    assert "llama3.1-405b" in exc.value.allowed


# (preset, published total, published active or None, citation)
PUBLISHED = [
    ("llama3.1-405b", "405.8", None, "Meta Llama 3.1 model card; HF safetensors total 405,853,388,800"),
    ("llama3-70b", "70.55", None, "meta-llama/Meta-Llama-3-70B HF safetensors total 70,553,706,496"),
    ("llama3-8b", "8.03", None, "meta-llama/Meta-Llama-3-8B HF safetensors total 8,030,261,248"),
    ("llama2-70b", "68.98", None, "meta-llama/Llama-2-70b-hf HF safetensors total 68,976,648,192"),
    ("mixtral-8x7b", "46.7", "12.9", "Mistral AI, Mixtral of experts (2023): 46.7B total, 12.9B per token"),
    ("mixtral-8x22b", "141", "39", "Mistral AI, Mixtral 8x22B announcement (2024): 141B total, 39B active"),
    ("qwen3-30b-a3b", "30.5", "3.3", "Qwen/Qwen3-30B-A3B model card: 30.5B total, 3.3B activated"),
    ("qwen3-235b-a22b", "235", "22", "Qwen/Qwen3-235B-A22B model card: 235B total, 22B activated"),
    ("qwen3-32b", "32.8", None, "Qwen/Qwen3-32B model card: 32.8B"),
    # Brown et al. 2020 Table 2.1 prints 175.0B; the same dims count 174.6B in Narayanan et al.
    # 2021 Sec 5.3.2 (vocab 51,200): the paper's figure is rounded up, so check the 174.6B.
    ("gpt3-175b", "174.6", None, "Narayanan et al. 2021, arXiv:2104.04473, Sec 5.3.2 (GPT-3 175B)"),
    ("megatron-1t", "1008.0", None, "Narayanan et al. 2021, arXiv:2104.04473, Table 1"),
    ("llama4-maverick", "400", "17", "Meta, The Llama 4 herd (2025): 17B active, 400B total"),
]


@pytest.mark.parametrize(("pid", "total", "active", "cite"), PUBLISHED)
def test_parameter_counts_match_published(pid: str, total: str, active: str | None, cite: str) -> None:
    c = param_counts(preset_arch(pid))
    assert near(c.total, total), (pid, c.total, cite)
    assert near(c.active, active or total), (pid, c.active, cite)


def test_deepseek_v3_main_model_mtp_and_active() -> None:
    """DeepSeek-V3 (arXiv:2412.19437 Sec 4.2; HF README): 671B main model, 685B with the MTP
    module (whose HF layer stores its own copy of the embedding and head), 37B activated."""
    arch = preset_arch("deepseek-v3")
    c = param_counts(arch)
    assert near(c.total - c.mtp, "671")
    assert near(c.total + c.embedding + c.output_head, "685")
    main = param_counts(arch.model_copy(update={"mtp_layers": 0}))
    assert near(main.active, "37")
    assert param_counts(preset_arch("deepseek-r1")).total == c.total


def test_gpt_oss_120b_counts_match_model_card() -> None:
    """OpenAI gpt-oss model card (arXiv:2508.10925) Table 1: 116.83B total, 5.13B active; its
    active figure counts the unembedding but not the embedding lookup."""
    arch = preset_arch("gpt-oss-120b")
    c = param_counts(arch)
    assert near(c.total, "116.83")
    assert near(c.active - c.embedding, "5.13")
    assert arch.sliding_window == 128 and arch.sliding_window_layers == arch.layers // 2
    assert arch.weight_format == "mxfp4" and arch.weight_format_scope == "experts"


def test_gpt_oss_20b_counts_match_model_card() -> None:
    """OpenAI gpt-oss model card (arXiv:2508.10925) Table 1: 20.91B total, 3.61B active (the
    unembedding counted, the embedding lookup not), 24 layers half of them sliding-window."""
    arch = preset_arch("gpt-oss-20b")
    c = param_counts(arch)
    assert near(c.total, "20.91")
    assert near(c.active - c.embedding, "3.61")
    assert arch.sliding_window_layers == arch.layers // 2 == 12


def test_kimi_k2_counts_near_the_report() -> None:
    """Kimi K2 (arXiv:2507.20534): 1.04T total and 32.6B activated parameters, printed rounded; the
    config's fields (DeepSeek-V3's architecture with 384 experts and 64 MLA heads) count 1.026T."""
    arch = preset_arch("kimi-k2")
    c = param_counts(arch)
    assert abs(c.total / 1.04e12 - 1) < 0.015
    assert abs(c.active / 32.6e9 - 1) < 0.01
    assert arch.is_mla and arch.moe_experts == 384 and arch.mtp_layers == 0


def test_nemotron4_embedding_and_non_embedding_split() -> None:
    """Nemotron-4 15B (arXiv:2402.16819 Sec 2): 3.2B embedding + 12.5B non-embedding;
    Nemotron-4 340B (arXiv:2406.11704 Sec 2.1): 9.4B embedding + 331.6B non-embedding."""
    for pid, emb, body in (("nemotron4-15b", "3.2", "12.5"), ("nemotron4-340b", "9.4", "331.6")):
        arch = preset_arch(pid)
        c = param_counts(arch)
        assert arch.mlp == "squared_relu" and arch.kv_heads < arch.attention_heads
        # the embedding split is rounded to one decimal of a small number: +-0.05B + 2%
        assert abs(c.embedding + c.output_head - float(emb) * 1e9) <= 0.05e9 + 0.02 * float(emb) * 1e9, pid
        assert near(c.total - c.embedding - c.output_head, body), pid


def test_llama4_maverick_alternates_moe_layers() -> None:
    arch = preset_arch("llama4-maverick")
    assert arch.moe_layers == arch.layers // 2
    assert arch.moe_top_k == 1 and arch.moe_shared_experts == 1
