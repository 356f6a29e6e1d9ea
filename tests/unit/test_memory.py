"""Training memory per GPU (perf/memory.py): model states against Megatron-LM and the ZeRO paper,
what a pipeline stage holds, the pipeline's in-flight micro-batches, vectorization, bad input."""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from shared_data import calibration_dir
from workload_compiler.arch.counts import param_counts
from workload_compiler.arch.model import ModelArch
from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.frameworks import framework_names, framework_profile
from workload_compiler.errors import InputError
from workload_compiler.perf.activations import LAYOUT_POLICIES, layer_activations, layer_bytes
from workload_compiler.perf.layout import Layout, TrainingSetup
from workload_compiler.perf.memory import (
    MEMORY_TERMS,
    StateBytes,
    held_bytes_per_param,
    state_bytes,
    training_memory_bytes,
    training_memory_detail,
)

CALIBRATION = calibration_dir() / "training_public.yaml"
GB = 1e9

GPT3 = ModelArch(name="gpt3-175b", layers=96, hidden_size=12288, attention_heads=96, kv_heads=96,
                 head_dim=128, ffn_hidden_size=4 * 12288, vocab_size=51200, mlp="gelu")
LLAMA70 = ModelArch(name="llama3-70b", layers=80, hidden_size=8192, attention_heads=64, kv_heads=8,
                    head_dim=128, ffn_hidden_size=28672, vocab_size=128256, mlp="swiglu")
MOE = ModelArch(name="dsv3-like", layers=12, hidden_size=2048, attention_heads=16, kv_heads=16,
                head_dim=128, ffn_hidden_size=8192, vocab_size=32000, mlp="swiglu", moe_experts=64,
                moe_top_k=6, moe_ffn_hidden_size=1024, moe_shared_experts=1, moe_dense_layers=2,
                mla_q_lora_rank=768, mla_kv_lora_rank=256, mla_qk_nope_head_dim=64,
                mla_qk_rope_head_dim=32, mla_v_head_dim=64, mtp_layers=1, tied_embeddings=True)
SETUP = TrainingSetup(seq_len=4096, global_batch_size=1024, precision="bf16")
DEFAULT: dict[str, Any] = dict(tp=1, pp=1, dp=8, cp=1, ep=1, etp=1, vp=1, mbs=1, recompute=2, sp=False,
                               zero=0)


def lay(**kw: Any) -> Layout:
    return Layout.of(**{**DEFAULT, **kw})


def one(d: dict[str, Any], key: str) -> float:
    return float(np.asarray(d[key]))


# ---------------------------------------------------------------- model states

@functools.cache
def _megatron_record() -> dict[str, dict[str, str]]:
    """Calibration record megatron_dist_optimizer_bytes_per_param (Megatron-Core docs,
    dist_optimizer.md, 'theoretical number of bytes per parameter'); the published table if absent."""
    if CALIBRATION.exists():
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        recs = yaml.load(CALIBRATION.read_text(), Loader=loader)["records"]
        rec = next(r for r in recs if r["id"] == "megatron_dist_optimizer_bytes_per_param")
        return {k: {kk: str(vv) for kk, vv in v.items()} for k, v in rec["measured"]["other"].items()}
    return {"bf16_params_fp32_grads": {"non_distributed": "18", "distributed": "6 + 12/d"},
            "fp16_params_fp16_grads": {"non_distributed": "20", "distributed": "4 + 16/d"}}


def _bytes(expr: str, d: int) -> float:
    m = re.fullmatch(r"\s*(\d+)\s*(?:\+\s*(\d+)\s*/\s*d)?\s*", expr)
    assert m, expr
    return float(m[1]) + (float(m[2]) / d if m[2] else 0.0)


@pytest.mark.parametrize(("row", "precision"), [("bf16_params_fp32_grads", "bf16"),
                                                ("fp16_params_fp16_grads", "fp16")])
@pytest.mark.parametrize("d", [1, 8, 64])
def test_megatron_bytes_per_param(row: str, precision: str, d: int) -> None:
    """18 B/param plain, 6 + 12/d with the distributed optimizer (ZeRO-1), bf16; 20 and 4 + 16/d fp16;
    through the helper and through the whole model (weights + grads + optimizer / params held)."""
    table = _megatron_record()[row]
    for zero, key in ((0, "non_distributed"), (1, "distributed")):
        expected = _bytes(table[key], d)
        assert sum(float(x) for x in held_bytes_per_param(np.asarray(zero), d, state_bytes(precision))) \
            == pytest.approx(expected)
        setup = TrainingSetup(seq_len=2048, global_batch_size=512, precision=precision)
        r = training_memory_detail(GPT3, setup, lay(tp=8, pp=8, dp=d, zero=zero))
        states = one(r, "weights") + one(r, "gradients") + one(r, "optimizer")
        held = one(r, "params_last") if one(r, "binding_stage_is_last") else one(r, "params_first")
        assert states / held == pytest.approx(expected)


def test_zero_paper_figure_1() -> None:
    """Rajbhandari et al. 2020 (arXiv:1910.02054) Figure 1: 7.5B parameters, N_d = 64, K = 12,
    fp16 weights and gradients: baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB."""
    psi, nd = 7.5e9, 64
    fig1 = StateBytes(weights=2, gradients=2, optimizer=12)
    got = [psi * sum(float(x) for x in held_bytes_per_param(np.asarray(z), nd, fig1)) / GB for z in range(4)]
    assert [round(g, 1) for g in got] == [120.0, 31.4, 16.6, 1.9]


def test_first_stage_params_match_megatron_most_loaded_shard() -> None:
    """Megatron-LM theoretical_memory_usage.py: (transformer block / pp + embedding) / tp on the
    most loaded shard, + the untied head when pp == 1."""
    c = param_counts(GPT3)
    block = c.total - c.embedding - c.output_head
    for tp, pp in ((8, 8), (8, 1), (4, 12)):
        expected = (block / pp + c.embedding + (c.output_head if pp == 1 else 0.0)) / tp
        got = one(training_memory_detail(GPT3, SETUP, lay(tp=tp, pp=pp)), "params_first")
        assert got == pytest.approx(expected, rel=1e-5)   # Megatron spreads the final norm over pp


@pytest.mark.parametrize(("tp", "ep", "etp"), [(1, 8, 1), (2, 4, 2), (4, 16, 1)])
def test_moe_experts_sharded_by_ep_times_etp(tp: int, ep: int, etp: int) -> None:
    """Routed experts / (ep * etp), everything else / tp (Megatron-LM PR #4687: dividing experts
    by tp under-reports MoE memory whenever etp * ep != tp)."""
    c = param_counts(MOE)
    got = one(training_memory_detail(MOE, SETUP, lay(tp=tp, dp=16, ep=ep, etp=etp)), "params_first")
    assert got == pytest.approx(c.non_expert_params / tp + c.expert_params / (ep * etp), rel=1e-12)


def test_fp8_adds_two_bytes_per_gemm_weight() -> None:
    bf16 = training_memory_detail(LLAMA70, SETUP, lay(tp=8, pp=4))
    fp8 = training_memory_detail(LLAMA70, TrainingSetup(seq_len=4096, global_batch_size=1024,
                                                        precision="fp8"), lay(tp=8, pp=4))
    extra = one(fp8, "weights_first") - one(bf16, "weights_first")
    c = param_counts(LLAMA70)
    gemm = 20 * (c.attention_per_layer + c.dense_mlp_per_layer) / 8
    assert extra == pytest.approx(2 * gemm)


# ---------------------------------------------------------------- pipeline and activations

def test_1f1b_first_stage_holds_l_layers_of_activations() -> None:
    """Korthikanti §4.2.3: the first stage keeps pp micro-batches of L/pp layers = L layers."""
    a = training_memory_detail(LLAMA70, SETUP, lay(pp=1))
    b = training_memory_detail(LLAMA70, SETUP, lay(pp=8))
    assert one(b, "chunks_in_flight_first") == 8
    assert one(b, "activations_stored_first") == pytest.approx(one(a, "activations_stored_first"))


def test_interleaved_memory_penalty() -> None:
    """Korthikanti §4.2.3 / Megatron theoretical_memory_usage.py: x (1 + (pp - 1) / (pp * vp))."""
    pp, vp = 4, 5
    base = one(training_memory_detail(LLAMA70, SETUP, lay(pp=pp)), "activations_stored_first")
    inter = one(training_memory_detail(LLAMA70, SETUP, lay(pp=pp, vp=vp)), "activations_stored_first")
    assert inter / base == pytest.approx(1 + (pp - 1) / (pp * vp))


def test_in_flight_capped_by_microbatches() -> None:
    """global batch / (dp * mbs) = 2 micro-batches: only 2 can be in flight on an 8-stage pipeline."""
    setup = TrainingSetup(seq_len=4096, global_batch_size=32, precision="bf16")
    r = training_memory_detail(LLAMA70, setup, lay(pp=8, dp=8, mbs=2))
    assert one(r, "microbatches") == 2
    assert one(r, "chunks_in_flight_first") == 2


def test_full_recompute_keeps_layer_inputs() -> None:
    """2sbh per layer (Korthikanti Table 2), / t with sequence parallelism."""
    s, b, h, L = SETUP.seq_len, 2, LLAMA70.hidden_size, LLAMA70.layers
    for tp, sp in ((1, False), (8, False), (8, True)):
        r = training_memory_detail(LLAMA70, SETUP, lay(tp=tp, sp=sp, mbs=b, recompute=2))
        assert one(r, "activations_stored_first") == pytest.approx(L * 2 * s * b * h / (tp if sp else 1))


@pytest.mark.parametrize("recompute", [0, 1, 2, 3])
def test_grid_activations_follow_the_per_layer_formula(recompute: int) -> None:
    """perf/memory.py evaluates the ActivationCoefficients formula on grids by its own code; on one
    stage (pp = 1: one micro-batch in flight) it must give L x activations.layer_bytes per layer
    stored, and layer_bytes of (recomputed + gradients) as the backward working set."""
    s, b, L = SETUP.seq_len, 2, LLAMA70.layers
    la = layer_activations(LLAMA70, moe_layer=False)
    policy = LAYOUT_POLICIES[recompute]
    for tp, sp in ((1, False), (8, False), (8, True)):
        r = training_memory_detail(LLAMA70, SETUP, lay(tp=tp, sp=sp, mbs=b, recompute=recompute))
        stored = layer_bytes(la.stored[policy], tokens=s * b, ctx=s, tp=tp, sp=sp)
        work = layer_bytes(la.recomputed[policy] + la.gradients, tokens=s * b, ctx=s, tp=tp, sp=sp)
        assert one(r, "activations_stored_first") == pytest.approx(L * stored, rel=1e-12)
        assert one(r, "activations_working_set") == pytest.approx(work, rel=1e-12)


def test_context_parallel_divides_the_sequence() -> None:
    long = TrainingSetup(seq_len=2 * SETUP.seq_len, global_batch_size=1024, precision="bf16")
    for rc in (0, 1, 2):
        a = training_memory_detail(LLAMA70, SETUP, lay(recompute=rc))
        b = training_memory_detail(LLAMA70, long, lay(cp=2, dp=4, recompute=rc))
        for key in ("activations_stored_first", "activations_working_set", "loss_peak"):
            assert one(b, key) == pytest.approx(one(a, key))


def test_loss_peak_per_logit() -> None:
    s, v = SETUP.seq_len, LLAMA70.vocab_size
    assert one(training_memory_detail(LLAMA70, SETUP, lay()), "loss_peak") == 12 * s * v
    assert one(training_memory_detail(LLAMA70, SETUP, lay(tp=8, sp=True)), "loss_peak") == 16 * s * v / 8


def test_terms_add_up_and_shapes_broadcast() -> None:
    r = training_memory_bytes(MOE, SETUP, Layout.of(**{**DEFAULT, "tp": [[1], [2], [4]], "pp": [1, 2, 3, 4],
                                                       "ep": 4, "zero": 1}))
    assert r["total"].shape == (3, 4)
    assert np.allclose(sum(r[k] for k in MEMORY_TERMS), r["total"], rtol=1e-12)
    assert training_memory_bytes(MOE, SETUP, lay())["total"].shape == ()


def test_bad_input_is_named() -> None:
    with pytest.raises(InputError, match="precision"):
        training_memory_bytes(LLAMA70, TrainingSetup(seq_len=4096, global_batch_size=8, precision="int3"),
                              lay())
    with pytest.raises(InputError, match=r"layout\.tp"):
        training_memory_bytes(LLAMA70, SETUP, lay(tp=[1, 0]))
    with pytest.raises(InputError, match=r"layout\.recompute"):
        training_memory_bytes(LLAMA70, SETUP, lay(recompute=6))
    with pytest.raises(InputError, match=r"layout\.zero"):
        training_memory_bytes(LLAMA70, SETUP, lay(zero=-1))


# ---------------------------------------------------------------- properties

degrees = st.sampled_from([1, 2, 4, 8])
archs = st.sampled_from([GPT3, LLAMA70, MOE])
layouts = st.fixed_dictionaries(dict(
    tp=degrees, pp=st.sampled_from([1, 2, 3, 4, 8]), dp=degrees, cp=st.sampled_from([1, 2]),
    ep=st.sampled_from([1, 2, 4]), etp=st.sampled_from([1, 2]), vp=st.sampled_from([1, 2]),
    mbs=st.sampled_from([1, 2, 4]), recompute=st.integers(0, 3), sp=st.booleans(), zero=st.integers(0, 3)))
precisions = st.sampled_from(["bf16", "fp8", "fp16", "nvfp4"])
frameworks = st.sampled_from(framework_names())


def _valid(kw: dict[str, Any]) -> bool:
    """ep * etp must divide tp * cp * dp (Megatron-Core MoE parallel folding)."""
    return bool((kw["tp"] * kw["cp"] * kw["dp"]) % (kw["ep"] * kw["etp"]) == 0)


def _setup(precision: str) -> TrainingSetup:
    return TrainingSetup(seq_len=2048, global_batch_size=256, precision=precision)


@settings(max_examples=60, deadline=None)
@given(arch=archs, kw=layouts, precision=precisions, framework=frameworks)
def test_more_tp_never_raises_weight_bytes(arch: ModelArch, kw: dict[str, Any], precision: str,
                                           framework: str) -> None:
    """HABITS: more TP never increases per-GPU weight bytes, for every ZeRO stage, pipeline depth
    and framework profile, including MoE with ZeRO-3 and pp > 1 where tp 1 -> 2 turns a one-rank
    expert data-parallel group into a two-rank one (ZeRO-3 keeps its gathered copy either way:
    perf/model_states.py)."""
    tps = [1, 2, 4, 8, 16]
    setup = dataclasses.replace(_setup(precision), framework=framework_profile(framework))
    r = training_memory_detail(arch, setup, Layout.of(**{**kw, "tp": tps}))
    for key in ("weights_first", "weights_last"):
        assert np.all(np.diff(r[key]) <= 1e-9 * np.max(r[key]))


def test_moe_zero3_pipelined_tp1_to_tp2_issue_example() -> None:
    """Issue 7's example: Mixtral 8x7B (preset), pp 2, dp 2, ep 2, ZeRO-3. Before the fix the model
    said 24.96 GB of weights per GPU at tp 1 and 35.03 GB at tp 2, omitting at tp 1 the gathered
    copy of the stage's experts that FSDP2 keeps beside the (one-rank) shard (pytorch/pytorch#114299:
    every FSDPParam holds a sharded and an unsharded tensor; #152710: a one-rank shard group still
    copies in and out). Now tp 1 holds shard + gathered stage, tp 2 half a shard + gathered stage."""
    a = preset_arch("mixtral-8x7b")
    d = [training_memory_detail(a, SETUP, lay(tp=tp, pp=2, dp=2, ep=2, zero=3, sp=tp > 1)) for tp in (1, 2)]
    w = [one(x, "weights_first") for x in d]
    assert w[0] > w[1]
    assert w[1] == pytest.approx(35.03e9, rel=1e-3)      # unchanged: the issue's tp 2 figure
    ex = param_counts(a).expert_params / 2 / 2            # the stage's experts (half the layers) / ep
    dense = [one(x, "params_first") - ex for x in d]      # non-expert parameters per GPU
    # generic profile: bf16 storage 2 B / group size + the gathered bf16 stage 2 B; dense group dp = 2,
    # expert group tp * dp / ep = tp
    assert w[0] == pytest.approx((2 / 2 + 2) * dense[0] + (2 / 1 + 2) * ex, rel=1e-9)
    assert w[1] == pytest.approx((2 / 2 + 2) * dense[1] + (2 / 2 + 2) * ex, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(arch=archs, kw=layouts, precision=precisions)
def test_more_pp_never_raises_weight_bytes(arch: ModelArch, kw: dict[str, Any], precision: str) -> None:
    """Holds for every ZeRO stage except the step pp = 1 -> 2 at ZeRO-3: with pipelining, FSDP
    keeps the stage unsharded between micro-batches (documented in perf/memory.py)."""
    pps = [1, 2, 3, 4, 6, 8, 12]
    r = training_memory_detail(arch, _setup(precision), Layout.of(**{**kw, "pp": pps}))
    for key in ("weights_first", "weights_last"):
        steps = np.diff(r[key])
        if kw["zero"] == 3:
            steps = steps[1:]
        assert np.all(steps <= 0)


@settings(max_examples=25, deadline=None)
@given(arch=archs, kw=layouts, precision=precisions)
def test_higher_zero_stage_never_costs_more(arch: ModelArch, kw: dict[str, Any], precision: str) -> None:
    """ZeRO 0 -> 1 never raises the total. 1 -> 2 -> 3 never raises it without pipelining; with
    it, ZeRO-2's per-layer gradient buffer can outweigh the saving on a one-layer stage, and
    ZeRO-3 keeps the stage gathered (see test_more_pp_never_raises_weight_bytes). On a one-rank
    group there is nothing to shard and ZeRO-2/3 only add their buffers (FSDP2 still copies in and
    out on a one-rank shard group, pytorch/pytorch#152710), so the group has two ranks or more."""
    assume(_valid(kw) and kw["dp"] * kw["cp"] >= 2
           and (not arch.is_moe or kw["tp"] * kw["cp"] * kw["dp"] >= 2 * kw["ep"] * kw["etp"]))
    r = training_memory_bytes(arch, _setup(precision), Layout.of(**{**kw, "zero": [0, 1, 2, 3]}))
    steps = np.diff(r["total"]) if kw["pp"] == 1 else np.diff(r["total"][:2])
    assert np.all(steps <= 1e-9 * r["total"].max())


@settings(max_examples=10, deadline=None)
@given(arch=archs, rows=st.lists(layouts, min_size=2, max_size=12), precision=precisions)
def test_grid_equals_elementwise(arch: ModelArch, rows: list[dict[str, Any]], precision: str) -> None:
    grid = Layout.of(**{k: [r[k] for r in rows] for k in rows[0]})
    setup = _setup(precision)
    vec = training_memory_detail(arch, setup, grid)
    for i in range(len(rows)):
        single = training_memory_detail(arch, setup, grid.take(i))
        for key, value in single.items():
            assert float(value) == pytest.approx(float(vec[key][i]), rel=1e-12, abs=0), key


# ---------------------------------------------------------------- speed

def test_one_million_layouts_at_once() -> None:
    """The planner evaluates ~1e6 layouts per call: one vectorized pass, finite everywhere (the speed
    goal is benchmarks/bench_planner.py's, not a timed unit test on a shared machine)."""
    n = 1_000_000
    rng = np.random.default_rng(0)
    grid = Layout.of(tp=2 ** rng.integers(0, 4, n), pp=2 ** rng.integers(0, 5, n),
                     dp=2 ** rng.integers(0, 8, n), cp=2 ** rng.integers(0, 2, n), ep=1, etp=1,
                     vp=rng.integers(1, 3, n),
                     mbs=2 ** rng.integers(0, 3, n), recompute=rng.integers(0, 4, n),
                     sp=rng.integers(0, 2, n).astype(bool), zero=rng.integers(0, 4, n))
    r = training_memory_bytes(LLAMA70, SETUP, grid)
    assert r["total"].shape == (n,) and np.isfinite(r["total"]).all()
