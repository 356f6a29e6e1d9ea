"""Training step time: invariants of the breakdown, the pipeline, precision, and the grid path."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_compiler.arch.model import ModelArch
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.perf.fitted import FITTED
from workload_compiler.perf.gemm_precision import gemm_speed
from workload_compiler.perf.layout import Layout, TrainingSetup
from workload_compiler.perf.step_time import STEP_TERMS, training_step

# Llama 3.1 70B (Dubey et al. 2024, Table 3) and GPT-3 175B (Brown et al. 2020, Table 2.1).
LLAMA70B = ModelArch(name="llama-3.1-70b", layers=80, hidden_size=8192, attention_heads=64, kv_heads=8,
                     head_dim=128, ffn_hidden_size=28672, vocab_size=128256, mlp="swiglu")
GPT3 = ModelArch(name="gpt3-175b", layers=96, hidden_size=12288, attention_heads=96, kv_heads=96,
                 head_dim=128, ffn_hidden_size=49152, vocab_size=51200, mlp="gelu")
QWEN_MOE = ModelArch(name="qwen3-30b-a3b", layers=48, hidden_size=2048, attention_heads=32, kv_heads=4,
                     head_dim=128, ffn_hidden_size=6144, vocab_size=151936, mlp="swiglu", moe_experts=128,
                     moe_top_k=8, moe_ffn_hidden_size=768)
H100 = load_catalog().hardware("h100-sxm")
A100 = load_catalog().hardware("a100-sxm-80gb")


def layout(**kw: object) -> Layout:
    base: dict[str, object] = dict(tp=4, pp=4, dp=2, cp=2, ep=1, etp=1, vp=5, mbs=1, recompute=0, sp=True,
                                   zero=1)
    base.update(kw)
    return Layout.of(**base)


SETUP = TrainingSetup(seq_len=8192, global_batch_size=128, precision="bf16")


def test_breakdown_adds_up_and_names_every_term() -> None:
    r = training_step(LLAMA70B, SETUP, layout(), H100)
    assert set(r.breakdown_s) == set(STEP_TERMS)
    assert sum(float(v) for v in r.breakdown_s.values()) == pytest.approx(float(r.step_time_s), rel=1e-12)
    assert all(float(v) >= 0 for v in r.breakdown_s.values())


def test_dgx_cloud_llama70b_is_predicted_near_the_published_step() -> None:
    """NVIDIA dgxc-benchmarking v25.03, Llama 3.1 70B BF16 on 64 H100: 14.61 s per step, 54.5% MFU
    (calibration/training_public.yaml dgxc_v2503_llama_3_1_70b_bf16_64gpu); within 10%, with the TP
    communication overlap the NVIDIA recipes run (the validation suite assumes it for them)."""
    r = training_step(LLAMA70B, dataclasses.replace(SETUP, tp_comm_overlap=True), layout(), H100)
    assert float(r.step_time_s) == pytest.approx(14.61, rel=0.10)
    assert 0.45 < float(r.mfu) < 0.62


def test_fp8_gives_less_than_2x() -> None:
    """Only the GEMMs run at the FP8 peak; attention and memory-bound work do not. DGXC v25.03
    Llama 3.1 70B: 14.61 s BF16 vs 10.46 s FP8 = 1.40x."""
    bf16 = training_step(LLAMA70B, SETUP, layout(), H100)
    fp8 = training_step(LLAMA70B, dataclasses.replace(SETUP, precision="fp8"), layout(), H100)
    speedup = float(bf16.step_time_s / fp8.step_time_s)
    assert 1.2 < speedup < 1.7
    # MFU is quoted against the FP8 peak for FP8 runs (as DGXC does), mfu_bf16 against BF16.
    assert float(fp8.mfu_bf16) == pytest.approx(2 * float(fp8.mfu), rel=1e-3)


def test_fp8_on_a100_is_an_input_error() -> None:
    with pytest.raises(InputError, match="precision"):
        training_step(LLAMA70B, dataclasses.replace(SETUP, precision="fp8"), layout(), A100)


def test_more_micro_batches_lower_the_bubble_share() -> None:
    """Bubble fraction (pp-1)/(vp m) (Narayanan et al. 2021, §2.2): a 4x bigger batch -> 1/4."""
    lay = layout(vp=1, cp=1, dp=4)
    small = training_step(LLAMA70B, dataclasses.replace(SETUP, global_batch_size=32), lay, H100)
    big = training_step(LLAMA70B, dataclasses.replace(SETUP, global_batch_size=128), lay, H100)
    share = [float(r.breakdown_s["pp_bubble"] / r.step_time_s) for r in (small, big)]
    assert share[1] < share[0]
    per_micro_batch = ("compute", "memory_bound", "tp_comm", "cp_comm_exposed", "ep_comm")
    busy = sum(float(small.breakdown_s[n]) for n in per_micro_batch)
    # (pp-1)/m with m = 8 for equal stages; the last stage also runs the output head and the loss,
    # so the slowest stage paces the step and the fill of the other three is a little less
    ratio = float(small.breakdown_s["pp_bubble"]) / busy
    assert 0.8 * 3 / 8 < ratio <= 3 / 8
    interleaved = training_step(LLAMA70B, SETUP, layout(vp=5, cp=1, dp=4), H100)
    assert float(interleaved.breakdown_s["pp_bubble"]) < float(big.breakdown_s["pp_bubble"])


def test_recompute_costs_about_a_third_more_compute() -> None:
    """Full recompute adds one forward to forward + 2x backward: ~4/3 of the GEMM time."""
    none = training_step(GPT3, SETUP, layout(recompute=0), H100)
    full = training_step(GPT3, SETUP, layout(recompute=2), H100)
    sel = training_step(GPT3, SETUP, layout(recompute=1), H100)
    op_sel = training_step(GPT3, SETUP, layout(recompute=3), H100)
    ratio = float(full.breakdown_s["compute"] / none.breakdown_s["compute"])
    assert 1.25 < ratio < 1.34
    assert float(none.step_time_s) < float(sel.step_time_s) < float(op_sel.step_time_s) < float(full.step_time_s)
    assert float(full.mfu) < float(none.mfu)       # MFU counts no recompute


def test_scalar_and_grid_evaluation_are_identical() -> None:
    grid = Layout.of(tp=[1, 2, 4, 8], pp=[8, 4, 2, 1], dp=[2, 2, 2, 2], cp=1, ep=1, etp=1, vp=1,
                     mbs=[1, 2, 1, 2], recompute=[0, 1, 2, 0], sp=True, zero=[0, 1, 3, 1])
    res = training_step(LLAMA70B, SETUP, grid, H100)
    for i in range(4):
        one = training_step(LLAMA70B, SETUP, grid.take(i), H100)
        assert float(one.step_time_s) == float(res.step_time_s[i])
        for name in STEP_TERMS:
            assert float(one.breakdown_s[name]) == float(res.breakdown_s[name][i])


def test_moe_pays_for_all_to_all_across_nodes() -> None:
    """Expert parallelism over 16 GPUs (2 nodes) sends half the dispatched tokens over the NICs."""
    setup = TrainingSetup(seq_len=4096, global_batch_size=1024, precision="fp8")
    in_node = training_step(QWEN_MOE, setup, layout(tp=1, pp=1, dp=16, cp=1, ep=8, vp=1), H100)
    across = training_step(QWEN_MOE, setup, layout(tp=1, pp=1, dp=16, cp=1, ep=16, vp=1), H100)
    assert float(across.breakdown_s["ep_comm"]) > 3 * float(in_node.breakdown_s["ep_comm"])
    dense = training_step(LLAMA70B, SETUP, layout(), H100)
    assert float(dense.breakdown_s["ep_comm"]) == 0.0


def test_ep_overlap_hides_the_all_to_all_under_the_other_micro_batchs_layer() -> None:
    """Megatron-Core --overlap-moe-expert-parallel-comm (combined 1F1B): each layer's all-to-all runs
    beside every kernel of the other micro-batch's layer (core.pipeline_parallel.combined_1f1b: "EP
    A2A in forward step is hidden by the attention/mlp computation in the backward step"). What
    exceeds that window stays exposed; what it covers costs the contention share (the rule of the
    TP and DP overlaps); nothing else in the step moves. Token-dropping routing, so that dropless
    routing's host floor under each layer (perf/fitted.py moe_dropless_host_s) stays out of it."""
    setup = TrainingSetup(seq_len=8192, global_batch_size=1024, precision="fp8", moe_dropless=False)
    lay = layout(tp=1, pp=1, dp=16, cp=1, ep=16, vp=1)
    serial = training_step(QWEN_MOE, setup, lay, H100)
    hidden = training_step(QWEN_MOE, dataclasses.replace(setup, ep_comm_overlap=True), lay, H100)
    ep_serial, ep_hidden = float(serial.breakdown_s["ep_comm"]), float(hidden.breakdown_s["ep_comm"])
    # over 2 nodes at 8k tokens the all-to-all fits under the other micro-batch's whole layer (not
    # under its GEMMs alone: with the GEMMs as the window, some of it stayed exposed), so only
    # contention is left
    assert ep_serial < float(serial.breakdown_s["compute"] + serial.breakdown_s["memory_bound"])
    assert ep_hidden == pytest.approx(FITTED.overlap_contention * ep_serial, rel=1e-9)
    for name in STEP_TERMS:
        if name not in ("ep_comm", "pp_bubble", "dp_comm_exposed"):
            assert float(hidden.breakdown_s[name]) == float(serial.breakdown_s[name])


def test_a_slower_attention_core_widens_the_ep_overlap_window() -> None:
    """Over 4 nodes the all-to-all outlasts the layer's work; a slower attention core (FlashAttention
    v1) lengthens the window and hides more of it, and leaves the serial all-to-all as it was."""
    lay = layout(tp=1, pp=1, dp=32, cp=1, ep=32, vp=1)

    def ep_comm(overlap: bool, attention_speed: float) -> float:
        setup = TrainingSetup(seq_len=4096, global_batch_size=1024, precision="fp8", ep_comm_overlap=overlap,
                              attention_relative_speed=attention_speed)
        return float(training_step(QWEN_MOE, setup, lay, H100).breakdown_s["ep_comm"])

    assert ep_comm(True, 0.5) < ep_comm(True, 1.0) < ep_comm(False, 1.0) == ep_comm(False, 0.5)


def test_unfused_attention_is_slower_than_flash() -> None:
    """Megatron-LM 2021-22 materialized the s x s scores (Korthikanti et al. 2022 §4.2)."""
    flash = training_step(GPT3, SETUP, layout(), H100)
    unfused = training_step(GPT3, dataclasses.replace(SETUP, flash_attention=False), layout(), H100)
    assert float(unfused.breakdown_s["memory_bound"]) > 2 * float(flash.breakdown_s["memory_bound"])


POW2 = st.sampled_from([1, 2, 4, 8])


@settings(max_examples=40, deadline=None)
@given(tp=POW2, pp=POW2, dp=st.sampled_from([1, 2, 8, 64, 512]), cp=st.sampled_from([1, 2, 4]),
       mbs=st.sampled_from([1, 2, 4]), vp=st.sampled_from([1, 2]), rc=st.integers(0, 2),
       zero=st.integers(0, 3), fp8=st.booleans(), e_max=st.floats(0.3, 1.0))
def test_valid_layouts_give_finite_times_and_mfu_below_one(tp: int, pp: int, dp: int, cp: int, mbs: int,
                                                           vp: int, rc: int, zero: int, fp8: bool,
                                                           e_max: float) -> None:
    setup = TrainingSetup(seq_len=8192, global_batch_size=dp * mbs * 16, precision="fp8" if fp8 else "bf16")
    k = dataclasses.replace(FITTED, gemm_e_max=e_max)
    lay = layout(tp=tp, pp=pp, dp=dp, cp=cp, mbs=mbs, vp=vp, recompute=rc, zero=zero)
    r = training_step(LLAMA70B, setup, lay, H100, k)
    values = [r.step_time_s, r.tokens_per_s, r.mfu, r.mfu_bf16, *r.breakdown_s.values()]
    assert all(np.all(np.isfinite(v)) for v in values)
    assert 0 < float(r.mfu) < 1           # against the peak of the run's own GEMM precision
    if not fp8:
        assert float(r.mfu_bf16) == float(r.mfu)


def test_deepep_dispatch_sends_fewer_bytes_across_nodes_and_the_same_inside_one() -> None:
    """ep 16 over two H100 nodes: an all-to-all sends 8 x 1/2 = 4 copies of a token off the node,
    DeepEP / HybridEP one (top-8 of 128 experts lands on the other node with p = 1 - 2^-8)."""
    setup = TrainingSetup(seq_len=4096, global_batch_size=1024, precision="fp8")
    dedup = dataclasses.replace(setup, ep_dispatch_dedup=True)
    across = layout(tp=1, pp=1, dp=16, cp=1, ep=16, vp=1)
    plain_ep = float(training_step(QWEN_MOE, setup, across, H100).breakdown_s["ep_comm"])
    dedup_ep = float(training_step(QWEN_MOE, dedup, across, H100).breakdown_s["ep_comm"])
    assert dedup_ep == pytest.approx(plain_ep / 4.0, rel=0.05)
    inside = layout(tp=1, pp=1, dp=16, cp=1, ep=8, vp=1)
    assert float(training_step(QWEN_MOE, dedup, inside, H100).breakdown_s["ep_comm"]) == pytest.approx(
        float(training_step(QWEN_MOE, setup, inside, H100).breakdown_s["ep_comm"]))


def test_mla_up_proj_recompute_costs_the_up_projections_once_more() -> None:
    """The recompute pays exactly one more forward of the q and kv up-projection GEMMs per layer and
    micro-batch (DeepSeek-V3 config.json: q_lora 1536 -> 128 heads x (128 + 64); kv_lora 512 -> 128 x
    (128 + 128)) at the fitted GEMM efficiency, far less than a full recompute; nothing without MLA."""
    from workload_compiler.arch.resolve import resolve_model
    from workload_compiler.intake.common import ModelIntake
    from workload_compiler.perf.efficiency import gemm_time_s
    from workload_compiler.provenance import Trace

    ds = resolve_model(ModelIntake(preset="deepseek-v3", mtp_layers=0), Trace())
    setup = dataclasses.replace(SETUP, seq_len=4096, precision="fp8", moe_dropless=False)   # no host floor
    lay = dict(tp=1, pp=1, dp=8, cp=1, ep=64, vp=1, sp=False)     # one stage: all 61 layers on it
    none, up, full = (training_step(ds, setup, layout(recompute=r, **lay), H100) for r in (0, 5, 2))
    extra = float(up.breakdown_s["compute"] - none.breakdown_s["compute"])

    e_max = FITTED.gemm_e_max * gemm_speed(H100, setup)     # the fitted ceiling, H100's gap to the median

    def gemm(flops: float) -> float:
        return float(gemm_time_s(flops, peak_flops=H100.peak_flops_fp8, e_max=e_max,
                                 kernel_overhead_s=FITTED.gemm_kernel_overhead_s))

    tok, micro = 4096.0, 128 / 8
    per_layer = gemm(2 * tok * 1536 * 128 * 192) + gemm(2 * tok * 512 * 128 * 256)
    assert extra == pytest.approx(61 * micro * per_layer, rel=1e-9)
    assert float(none.step_time_s) < float(up.step_time_s) < float(full.step_time_s)
    llama = training_step(LLAMA70B, SETUP, layout(recompute=5), H100)
    assert float(llama.step_time_s) == float(training_step(LLAMA70B, SETUP, layout(recompute=0), H100).step_time_s)
