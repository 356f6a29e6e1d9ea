"""LoRA fine-tuning (arch/lora.py, intake `training.lora`): frozen weights take no weight gradients,
gradients or optimizer states; the adapters are trained.

Sources of the numbers checked: LoRA (Hu et al. 2021, arXiv:2106.09685 §4.1), an adapter of rank r on a
d_in x d_out layer has r (d_in + d_out) parameters; Megatron-Bridge's / NeMo's LoRA defaults (peft/lora.py):
dim 32 on linear_qkv, linear_proj, linear_fc1, linear_fc2; Llama 2 70B's shape (hidden 8192, 8 KV heads
of 128, SwiGLU 28672, 80 layers: the llama2-70b preset).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared_data import calibration_dir, require
from small_runs import llama8b_on_8_h100
from workload_compiler.arch.counts import forward_flops_per_token, training_flops_per_token
from workload_compiler.arch.lora import LoraSpec, adapter_params_per_layer, lora_adapter_params
from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.frameworks import framework_profile
from workload_compiler.errors import InputError
from workload_compiler.perf.model_states import state_bytes
from workload_compiler.validation.suites import find_calibration_dir
from workload_compiler.validation.training_intake import load_records, record_intake


def test_adapter_parameters_are_rank_times_the_targets_widths() -> None:
    a = preset_arch("llama2-70b", "model.preset")
    qkv, proj, fc1, fc2 = (8192 + 10240), (8192 + 8192), (8192 + 2 * 28672), (28672 + 8192)
    assert adapter_params_per_layer(a, LoraSpec(rank=32)) == 32 * (qkv + proj + fc1 + fc2)
    assert adapter_params_per_layer(a, LoraSpec(rank=16, targets=("qkv",))) == 16 * qkv
    assert lora_adapter_params(a, None) is None


def test_a_lora_token_costs_two_forwards_and_the_adapters() -> None:
    a = preset_arch("llama2-70b", "model.preset")
    adapters = float(lora_adapter_params(a, LoraSpec(rank=32)) or 0.0)
    forward = forward_flops_per_token(a, 4096)
    assert training_flops_per_token(a, 4096, adapter_params=adapters) == pytest.approx(2 * forward + 6 * adapters)
    assert training_flops_per_token(a, 4096) == pytest.approx(3 * forward)


def _llama_7b(lora: dict[str, Any] | None) -> Any:
    return llama8b_on_8_h100(framework="nemo", lora=lora)


def test_frozen_weights_hold_no_gradients_or_optimizer_state() -> None:
    """Only the adapters' gradients and optimizer states remain, at the framework's bytes per parameter
    (kept whole on every GPU: they are ~1% of the model)."""
    full, lora = _llama_7b(None), _llama_7b({})
    f, lo = full.compute.memory_breakdown_bytes, lora.compute.memory_breakdown_bytes
    assert lo["weights"] >= f["weights"]                      # the same frozen copy, plus the adapters
    adapters = float(lora_adapter_params(preset_arch("llama3.1-8b", "model.preset"), LoraSpec(rank=32)) or 0.0)
    per_param = state_bytes("fp8", framework_profile("nemo"))
    assert lo["gradients"] == pytest.approx(per_param.gradients * adapters, rel=1e-6)
    assert lo["optimizer"] == pytest.approx(per_param.optimizer * adapters, rel=1e-6)
    assert lo["gradients"] + lo["optimizer"] < 0.1 * (f["gradients"] + f["optimizer"])


def test_a_lora_step_skips_the_weight_gradients_and_their_reduction() -> None:
    full, lora = _llama_7b(None), _llama_7b({"rank": 16})
    fb, lb = full.compute.step_breakdown_s, lora.compute.step_breakdown_s
    assert lb["compute"] < 0.8 * fb["compute"]                 # 2 GEMM passes of 3 (the attention core stays)
    assert lb["dp_comm_exposed"] < 0.05 * max(fb["dp_comm_exposed"], 1e-9) + 1e-6
    assert lora.objective.flops_per_token < full.objective.flops_per_token
    assert lora.provenance["training.lora.rank"].source == "given"
    assert lora.provenance["training.lora.targets"].source == "assumed"


def test_an_unknown_lora_target_names_the_allowed_ones() -> None:
    with pytest.raises(InputError) as exc:
        _llama_7b({"targets": ["q_proj"]})
    assert exc.value.field.startswith("training.lora.targets") and "qkv" in str(exc.value)


def test_the_published_lora_runs_compile_as_lora() -> None:
    """NeMo 24.07's and Megatron-Bridge 26.06's LoRA rows (training_public.yaml) name the method in the
    id and the framework: their intakes set training.lora and they are a kind of their own."""
    recs = load_records(Path(find_calibration_dir(require(calibration_dir()))))
    lora = [r for r in recs if "lora" in r["id"]]
    assert len(lora) >= 4
    for rec in lora:
        ri = record_intake(rec)
        assert ri.intake["training"]["lora"] == {} and ri.kind.endswith(" lora")
