"""HF config.json import: fixtures hand-copied from the public configs (tests/fixtures/hf/)
translate to the same architecture as the presets built from the papers and model cards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from workload_compiler.arch.counts import param_counts
from workload_compiler.arch.hf_config import allowed_architectures, arch_from_hf_dict, load_hf_config
from workload_compiler.arch.presets import preset_arch
from workload_compiler.errors import InputError

FIXTURES = Path(__file__).parent.parent / "fixtures" / "hf"
IGNORED = {"name", "source"}


def _fixture(name: str) -> dict[str, Any]:
    cfg: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return cfg


@pytest.mark.parametrize("stem", ["llama3.1-405b", "mixtral-8x7b", "qwen3-30b-a3b", "qwen3-32b",
                                  "deepseek-v3", "gpt-oss-120b", "llama4-maverick"])
def test_fixture_matches_preset(stem: str) -> None:
    got = load_hf_config(FIXTURES / f"{stem}.json").model_dump(exclude=IGNORED)
    want = preset_arch(stem).model_dump(exclude=IGNORED)
    assert got == want


def test_folder_path_reads_its_config_json(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text((FIXTURES / "mixtral-8x7b.json").read_text())
    assert load_hf_config(tmp_path).moe_experts == 8


def test_gpt2_small_is_124m_with_tied_embeddings() -> None:
    """GPT-2 small: 124M parameters (Radford et al. 2019; HF gpt2 model card) with n_inner null = 4h.
    The count leaves out the 1024 x 768 position embedding (0.79M) and biases (~0.1M)."""
    arch = load_hf_config(FIXTURES / "gpt2.json")
    assert arch.tied_embeddings and arch.ffn_hidden_size == 4 * 768 and arch.mlp == "gelu"
    assert abs(param_counts(arch).total - 124.4e6) < 1.2e6


def test_nemotron_relu2_is_squared_relu_with_explicit_head_dim() -> None:
    arch = load_hf_config(FIXTURES / "minitron-8b.json")
    assert arch.mlp == "squared_relu"
    assert arch.head_dim == 128 and arch.attention_heads * arch.head_dim != arch.hidden_size
    assert arch.kv_heads == 8


def test_mistral_sliding_window_applies_to_every_layer() -> None:
    arch = load_hf_config(FIXTURES / "mistral-7b-v0.1.json")
    assert (arch.sliding_window, arch.sliding_window_layers) == (4096, 32)


def test_defaults_kv_heads_and_head_dim_when_absent() -> None:
    cfg = _fixture("llama3.1-405b.json")
    del cfg["num_key_value_heads"]
    arch = arch_from_hf_dict(cfg)
    assert arch.kv_heads == arch.attention_heads       # HF default: MHA
    assert arch.head_dim == 16384 // 128


def test_qwen_sliding_window_only_when_enabled() -> None:
    cfg = _fixture("qwen3-32b.json") | {"sliding_window": 4096}
    assert arch_from_hf_dict(cfg).sliding_window == 0           # use_sliding_window false
    cfg |= {"use_sliding_window": True, "max_window_layers": 28}
    arch = arch_from_hf_dict(cfg)
    assert (arch.sliding_window, arch.sliding_window_layers) == (4096, 64 - 28)


def test_qwen_sparse_step_and_shared_expert() -> None:
    cfg = _fixture("qwen3-30b-a3b.json") | {"decoder_sparse_step": 2, "shared_expert_intermediate_size": 5632}
    arch = arch_from_hf_dict(cfg)
    assert arch.moe_layers == 24 and arch.moe_dense_layers == 1
    assert arch.moe_shared_experts == 1 and arch.moe_shared_ffn_hidden_size == 5632


def test_unknown_architecture_lists_the_allowed_ones() -> None:
    cfg = _fixture("gpt2.json") | {"architectures": ["BertForMaskedLM"]}
    with pytest.raises(InputError) as exc:
        arch_from_hf_dict(cfg)
    assert exc.value.field == "model.hf_config"
    for name in ("LlamaForCausalLM", "DeepseekV3ForCausalLM", "Llama4ForConditionalGeneration"):
        assert name in exc.value.allowed and name in allowed_architectures()


def test_missing_required_key_is_named() -> None:
    cfg = _fixture("llama3.1-405b.json")
    del cfg["num_hidden_layers"]
    with pytest.raises(InputError, match="lacks 'num_hidden_layers'"):
        arch_from_hf_dict(cfg)


def test_missing_text_config_is_named() -> None:
    cfg = _fixture("llama4-maverick.json")
    del cfg["text_config"]
    with pytest.raises(InputError, match="lacks 'text_config'"):
        arch_from_hf_dict(cfg)


def test_missing_moe_key_is_named() -> None:
    cfg = _fixture("deepseek-v3.json")
    del cfg["moe_intermediate_size"]
    with pytest.raises(InputError, match="lacks 'moe_intermediate_size'"):
        arch_from_hf_dict(cfg)


def test_non_integer_value_is_rejected() -> None:
    cfg = _fixture("llama3.1-405b.json") | {"hidden_size": "16384"}
    with pytest.raises(InputError, match="hidden_size"):
        arch_from_hf_dict(cfg)


def test_missing_file_and_malformed_json_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"readable config\.json"):
        load_hf_config(tmp_path / "absent.json")
    bad = tmp_path / "config.json"
    bad.write_text('{"architectures": ["LlamaForCausalLM"],')
    with pytest.raises(InputError, match="valid JSON"):
        load_hf_config(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="JSON object"):
        load_hf_config(bad)


def test_a_config_without_its_name_is_named_after_where_it_lies() -> None:
    from workload_compiler.arch.hf_config import _name_of_file
    assert _name_of_file("/models/gpt-oss-120b.json") == "gpt-oss-120b"
    assert _name_of_file("/models/Llama-3.1-8B/config.json") == "Llama-3.1-8B"
    # the Hugging Face cache: models--{org}--{name}/snapshots/{commit}/config.json
    assert _name_of_file("/hf/models--openai--gpt-oss-120b/snapshots/b5c939de/config.json") == "openai/gpt-oss-120b"
