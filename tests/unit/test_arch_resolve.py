"""Intake -> ModelArch: precedence (given > preset/config > rule), provenance, validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workload_compiler.arch.counts import param_counts
from workload_compiler.arch.presets import preset_arch
from workload_compiler.arch.resolve import MEGATRON_TABLE1, SHAPE_RULE, resolve_model, shape_from_params
from workload_compiler.errors import InputError
from workload_compiler.intake.common import ModelIntake
from workload_compiler.provenance import Source, Trace

FIXTURES = Path(__file__).parent.parent / "fixtures" / "hf"


def _resolve(**fields: Any) -> tuple[Any, Trace]:
    trace = Trace()
    return resolve_model(ModelIntake(**fields), trace), trace


def test_preset_values_are_derived_with_the_preset_and_its_source() -> None:
    arch, trace = _resolve(preset="llama3.1-405b")
    assert arch == preset_arch("llama3.1-405b")
    prov = trace.provenance["model.layers"]
    assert prov.source is Source.DERIVED
    assert prov.formula is not None and prov.formula.startswith("preset llama3.1-405b (")
    assert "config.json" in prov.formula
    assert not trace.assumptions


def test_given_field_overrides_preset_and_is_recorded_as_given() -> None:
    arch, trace = _resolve(preset="llama3-8b", layers=16, moe={"experts": 8, "top_k": 2,
                                                               "expert_ffn_hidden_size": 14336})
    assert arch.layers == 16 and arch.hidden_size == 4096
    assert arch.moe_experts == 8 and arch.moe_shared_experts == 0
    assert trace.provenance["model.layers"].source is Source.GIVEN
    assert trace.provenance["model.moe_experts"].source is Source.GIVEN
    assert trace.provenance["model.hidden_size"].source is Source.DERIVED
    assert "overridden" in arch.source


def test_moe_override_keeps_unset_preset_fields() -> None:
    arch, _ = _resolve(preset="deepseek-v3", moe={"experts": 64, "top_k": 6, "expert_ffn_hidden_size": 1408})
    assert arch.moe_experts == 64 and arch.moe_shared_experts == 1 and arch.moe_dense_layers == 3


def test_reshaping_a_preset_rederives_head_dim() -> None:
    arch, trace = _resolve(preset="llama3-8b", hidden_size=2048, attention_heads=16, kv_heads=4)
    assert arch.head_dim == 128
    assert trace.provenance["model.head_dim"].formula == "hidden_size / attention_heads"


def test_hf_config_is_a_base_like_a_preset() -> None:
    arch, trace = _resolve(hf_config=FIXTURES / "mixtral-8x7b.json")
    assert arch.moe_experts == 8
    formula = trace.provenance["model.moe_top_k"].formula
    assert formula is not None and "mixtral-8x7b.json" in formula


def test_fields_only_fill_rules_are_assumptions_with_reasons() -> None:
    arch, trace = _resolve(layers=24, hidden_size=2048, attention_heads=16)
    assert (arch.kv_heads, arch.head_dim, arch.mlp, arch.ffn_hidden_size) == (16, 128, "gelu", 8192)
    assumed = {a.field: a for a in trace.assumptions}
    assert {"model.kv_heads", "model.head_dim", "model.mlp", "model.ffn_hidden_size", "model.vocab_size",
            "model.tied_embeddings"} <= set(assumed)
    assert "MHA" in assumed["model.kv_heads"].why
    assert trace.provenance["model.layers"].source is Source.GIVEN


def test_swiglu_ffn_rule_rounds_to_256() -> None:
    """LLaMA: 8/3 x 4096 = 10922.7 -> 11008 with multiple_of 256 (Touvron et al. 2023, Llama 2 7B); the
    vocabulary assumed is LLaMA-3's 128,256 (meta-llama/Meta-Llama-3-8B config.json)."""
    arch, _ = _resolve(layers=32, hidden_size=4096, attention_heads=32, mlp="swiglu")
    assert arch.ffn_hidden_size == 11008 and arch.vocab_size == 128256


@pytest.mark.parametrize(("fields", "field"), [
    ({"hidden_size": 4096, "attention_heads": 32}, "model.layers"),
    ({"layers": 32, "attention_heads": 32}, "model.hidden_size"),
    ({"layers": 32, "hidden_size": 4100, "attention_heads": 32}, "model.hidden_size"),   # 4100 % 32 != 0
    ({"layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 5}, "model.kv_heads"),
    ({"preset": "llama3-8b", "moe": {"experts": 4, "top_k": 8, "expert_ffn_hidden_size": 1}},
     "model.moe.top_k"),
    ({"preset": "llama3-8b", "sliding_window_layers": 40, "sliding_window": 128},
     "model.sliding_window_layers"),
    ({"preset": "nope"}, "model.preset"),
    ({"preset": "llama3-8b", "params": "400B"}, "model.params"),
    ({"params": "1M"}, "model.params"),          # the 51,200 x h embedding alone exceeds it
    ({"preset": "llama3-8b", "hf_config": "x.json"}, "model.hf_config"),
])
def test_bad_input_names_the_field(fields: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as exc:
        _resolve(**fields)
    assert exc.value.field == field


def test_params_only_builds_megatron_1t_shape_for_1t() -> None:
    """Seed question "a 1T model": the nearest Narayanan Table 1 row is the 1008B GPT
    (128 layers, h=25600, 160 heads); the rule keeps its shape and lands on ~1T parameters."""
    arch, trace = _resolve(params="1T")
    assert (arch.hidden_size, arch.attention_heads) == (25600, 160)
    assert abs(arch.layers - 128) <= 1
    assert abs(param_counts(arch).total / 1e12 - 1) < 0.01
    assert trace.provenance["model.layers"].why == SHAPE_RULE
    assert trace.provenance["model.params"].source is Source.GIVEN
    assert arch.source == SHAPE_RULE


@pytest.mark.parametrize("params", [1.7e9, 7e9, 70e9, 175e9, 530e9])
def test_shape_from_params_hits_the_count_and_a_table_aspect_ratio(params: float) -> None:
    layers, hidden, heads = shape_from_params(params)
    arch, _ = _resolve(params=params)
    assert (arch.layers, arch.hidden_size, arch.attention_heads) == (layers, hidden, heads)
    # one layer of 12 h^2 is the rounding step: the total is within half a layer
    assert abs(param_counts(arch).total - params) <= 0.5 * 12 * hidden**2 + 2 * hidden
    ratios = [h / layer for _, layer, h, _ in MEGATRON_TABLE1]
    assert min(ratios) * 0.8 <= hidden / layers <= max(ratios) * 1.2


def test_params_consistent_with_preset_is_accepted() -> None:
    arch, trace = _resolve(preset="llama2-70b", params="70B")
    assert arch.layers == 80 and trace.provenance["model.params"].source is Source.GIVEN


def test_the_mlp_kind_follows_the_shape_given() -> None:
    # LLaMA 2 13B's shape without its MLP kind (Touvron et al. 2023, Table 1 / config.json): ffn 13,824 =
    # 2.7 x hidden is a gated MLP's width; read as GeLU it would lose a third of the MLP's parameters
    llama, trace = _resolve(layers=40, hidden_size=5120, attention_heads=40, ffn_hidden_size=13824, vocab_size=32000)
    assert llama.mlp == "swiglu" and "2.70" in str(trace.provenance["model.mlp"].why)
    assert param_counts(llama).total == pytest.approx(13.0e9, rel=0.01)
    gpt, _ = _resolve(layers=96, hidden_size=12288, attention_heads=96, ffn_hidden_size=4 * 12288)
    assert gpt.mlp == "gelu"                                   # GPT-3: 4 x hidden
    gqa, _ = _resolve(layers=32, hidden_size=4096, attention_heads=32, kv_heads=8)
    assert gqa.mlp == "swiglu" and gqa.ffn_hidden_size == 11008   # 8/3 x 4096 rounded up to 256: LLaMA 2 7B's
    mha, _ = _resolve(layers=24, hidden_size=2048, attention_heads=16)
    assert mha.mlp == "gelu" and mha.ffn_hidden_size == 4 * 2048
