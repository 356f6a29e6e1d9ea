"""A clamped GLU (GPT-OSS's swiglu_limit): read from config.json and the intake, refused on an MLP
without a gate, and charged as Megatron-Core runs it (perf/step_time.py glu_clamp_elements: the
clamps and the concatenation as separate kernels; perf/block_tensors.py: the clamped copy saved)."""

from __future__ import annotations

import dataclasses

import pytest

from workload_compiler.arch.model import ModelArch
from workload_compiler.arch.presets import preset_arch
from workload_compiler.arch.resolve import resolve_model
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.intake.common import ModelIntake
from workload_compiler.perf.activations import Policy, layer_activations
from workload_compiler.perf.efficiency import memory_bound_s
from workload_compiler.perf.layout import Layout, TrainingSetup
from workload_compiler.perf.step_time import training_step
from workload_compiler.provenance import Trace

# openai/gpt-oss-120b config.json: swiglu_limit 7.0 (tests/fixtures/hf/gpt-oss-120b.json)
OSS = preset_arch("gpt-oss-120b")
UNCLAMPED = OSS.model_copy(update={"glu_clamp": 0.0})
H100 = load_catalog().hardware("h100-sxm")
SETUP = TrainingSetup(seq_len=4096, global_batch_size=64, precision="bf16", moe_dropless=False)
RECOMPUTE = {"none": 0, "full": 2, "modules": 4}


def _layout(recompute: str) -> Layout:
    return Layout.of(tp=1, pp=1, dp=8, cp=1, ep=8, etp=1, vp=1, mbs=1, recompute=RECOMPUTE[recompute],
                     sp=False, zero=1)


def _extra_memory_bound_s(recompute: str) -> float:
    clamped = training_step(OSS, SETUP, _layout(recompute), H100).breakdown_s["memory_bound"]
    plain = training_step(UNCLAMPED, SETUP, _layout(recompute), H100).breakdown_s["memory_bound"]
    return float(clamped) - float(plain)


def test_the_presets_carry_the_published_limit() -> None:
    assert OSS.glu_clamp == 7.0
    assert preset_arch("gpt-oss-20b").glu_clamp == 7.0
    assert preset_arch("llama3.1-405b").glu_clamp == 0.0


def test_the_intake_sets_it_and_refuses_it_on_an_mlp_without_a_gate() -> None:
    arch = resolve_model(ModelIntake(preset="qwen3-30b-a3b", glu_clamp=7.0), Trace())
    assert arch.glu_clamp == 7.0
    with pytest.raises(InputError, match=r"model\.glu_clamp.*gated MLP"):
        resolve_model(ModelIntake(preset="gpt3-175b", glu_clamp=7.0), Trace())


@pytest.mark.parametrize(("recompute", "elements"), [("none", 18.0), ("full", 26.0), ("modules", 26.0)])
def test_the_clamps_move_the_counted_bytes(recompute: str, elements: float) -> None:
    """Per routed token copy and element of the expert width: forward 8 (two clamps and the
    concatenation, each read and written), backward 10, the forward again where a recompute reruns
    the activation; 2 B each, over HBM at its sustained rate, no fitted multiplier. One stage of
    36 MoE layers, 64 / 8 = 8 micro-batches of 4,096 tokens, 4 copies of each."""
    tokens = SETUP.global_batch_size / 8 * SETUP.seq_len
    moved = tokens * OSS.layers * OSS.moe_top_k * OSS.moe_ffn_hidden_size * 2.0 * elements
    want = float(memory_bound_s(moved, H100.hbm_bandwidth_bytes_per_s, H100.measured.hbm_bytes_per_s))
    assert _extra_memory_bound_s(recompute) == pytest.approx(want, rel=1e-9)


def test_a_clamp_on_an_mlp_without_a_gate_costs_nothing_in_either_model() -> None:
    """A ModelArch built directly (not through the intake's rule) with a clamp on a GeLU MLP: there
    is no gate to clamp, so neither the step nor the saved tensors change (`ModelArch.clamps_glu`)."""
    gpt3 = preset_arch("gpt3-175b")
    stray = gpt3.model_copy(update={"glu_clamp": 7.0})
    assert not stray.clamps_glu and OSS.clamps_glu
    lay = Layout.of(tp=8, pp=1, dp=1, cp=1, ep=1, etp=1, vp=1, mbs=1, recompute=0, sp=True, zero=1)
    setup = dataclasses.replace(SETUP, seq_len=2048)
    assert float(training_step(stray, setup, lay, H100).step_time_s) == float(
        training_step(gpt3, setup, lay, H100).step_time_s)
    assert layer_activations(stray, moe_layer=False) == layer_activations(gpt3, moe_layer=False)


def test_the_clamped_copy_is_saved_unless_the_activation_is_recomputed() -> None:
    """The fused activation saves the clamped copy of fc1's output beside fc1's output itself (which
    the clamps keep): one more 2 x ffn tensor per routed pair; Megatron-Core's moe_act recompute
    reruns the activation and keeps neither."""
    def per_pair(arch: ModelArch, policy: Policy) -> float:
        return layer_activations(arch, moe_layer=True).stored[policy].expert_hidden

    assert per_pair(OSS, "none") - per_pair(UNCLAMPED, "none") == pytest.approx(2 * 2.0 * OSS.moe_ffn_hidden_size)
    assert per_pair(OSS, "modules") == pytest.approx(per_pair(UNCLAMPED, "modules"))
