"""The planner's grid and census against a brute-force Python enumeration of the same rules.

The rules are the module docstring of planner/grid.py (Megatron-Core's constraints: TP divides
heads, KV heads and the MLP width within one scale-up domain; PP x VP divides the layers; the
interleaved schedule needs micro-batches divisible by PP; CP splits the sequence in 2 CP chunks;
ZeRO > 0 needs dp > 1; MoE folding: ep x etp divides tp x cp x dp). Here they are written again,
one layout at a time, and the vectorized planner must find exactly the same feasible set.
"""

from __future__ import annotations

import itertools
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from planner_standins import hardware, memory, small_arch, step

from workload_compiler.arch.model import ModelArch
from workload_compiler.intake.common import ParallelismIntake
from workload_compiler.perf.layout import RECOMPUTE_CODES, Hardware, Layout, TrainingSetup
from workload_compiler.planner.grid import _factorizations, build_space, divisors
from workload_compiler.planner.search import search

Key = tuple[int, ...]   # tp, pp, dp, cp, ep, etp, vp, mbs, recompute, zero, first/middle/last stage layers


def _split(a: ModelArch, pp: int, vp: int, split: str) -> tuple[int, int, int] | None:
    """(first, middle, last) decoder layers of a split, or None where the rules of perf/stages.py
    and planner/grid.py reject it: `even` needs pp x vp | L; `balanced` counts the embedding and the
    loss as a layer each (L + 2 slots, extras to the middle ranks first, then rank 0), needs
    pp > 1 and (L + 2) // pp >= vp, and is dropped where it gives the even split's counts."""
    L = a.layers
    even_ok = L % (pp * vp) == 0
    even = (L // pp, L // pp if pp >= 3 else 0, L // pp if pp >= 2 else 0)
    if split == "even":
        return even if even_ok else None
    if pp == 1 or (L + 2) // pp < vp:
        return None
    slots = [(L + 2) // pp] * pp
    order = [*range(1, pp - 1), 0, pp - 1]
    for r in order[:(L + 2) % pp]:
        slots[r] += 1
    first, last = slots[0] - 1, slots[-1] - 1
    mid = max(slots[1:-1]) if pp >= 3 else 0
    if even_ok and (first, mid, last) == even:
        return None
    return first, mid, last


def _ok(a: ModelArch, s: TrainingSetup, hw: Hardware, tp: int, pp: int, dp: int, cp: int, ep: int, etp: int,
        vp: int, mbs: int, zero: int, sp_pin: bool | None, zero_pinned: bool) -> bool:
    sp = tp > 1 and sp_pin is not False
    if tp > hw.scale_up_domain_gpus or a.attention_heads % tp or a.kv_heads % tp:
        return False
    if a.dense_mlp_layers and a.ffn_hidden_size % tp:      # an all-MoE model has no dense MLP to split
        return False
    if pp > a.layers or (vp > 1 and pp == 1):
        return False
    if cp > 1 and s.seq_len % (2 * cp):
        return False
    if sp and (s.seq_len // cp) % tp:
        return False
    if s.global_batch_size % (dp * mbs):
        return False
    if vp > 1 and (s.global_batch_size // (dp * mbs)) % pp:
        return False
    if zero > 0 and dp == 1 and not zero_pinned:   # a free zero > 0 repeats zero 0 at dp 1; a pinned one stays
        return False
    if a.is_moe:
        return not (a.moe_experts % ep or etp > hw.scale_up_domain_gpus or a.moe_ffn_hidden_size % etp
                    or (tp * cp * dp) % (ep * etp))
    return ep == 1 and etp == 1


def reference(a: ModelArch, s: TrainingSetup, hw: Hardware, gpus: int,
              pins: ParallelismIntake) -> tuple[int, set[Key]]:
    """(layouts enumerated, feasible layouts) by plain loops over the documented candidate sets."""
    def axis(pin: int | None, values: list[int]) -> list[int]:
        return [pin] if pin is not None else values

    divs = [d for d in range(1, gpus + 1) if gpus % d == 0]
    pow2 = [m for m in (1, 2, 4, 8, 16, 32, 64) if m <= s.global_batch_size]
    eps = axis(pins.ep, [e for e in range(1, a.moe_experts + 1) if a.moe_experts % e == 0]
               if a.is_moe else [1])
    etps = axis(pins.etp, [e for e in (1, 2, 4, 8) if e <= hw.scale_up_domain_gpus] if a.is_moe else [1])
    vps = axis(pins.vp, sorted({v for v in range(1, a.layers + 1) if a.layers % v == 0}
                               | set(range(1, min(a.layers, 8) + 1))))
    recs = [RECOMPUTE_CODES[pins.recompute]] if pins.recompute else [
        c for c in sorted(RECOMPUTE_CODES.values()) if a.is_mla or c != RECOMPUTE_CODES["mla_up_proj"]]
    zeros = axis(pins.zero_stage, [0, 1, 2, 3])
    mbss = axis(pins.micro_batch_size, pow2)
    enumerated, feasible = 0, set[Key]()
    for tp, pp, cp in itertools.product(divs, repeat=3):
        if gpus % (tp * pp * cp):
            continue
        dp = gpus // (tp * pp * cp)
        if any(pin is not None and pin != v for pin, v in ((pins.tp, tp), (pins.pp, pp), (pins.cp, cp),
                                                               (pins.dp, dp))):
            continue
        for ep, etp, vp, mbs, rec, zero, split in itertools.product(eps, etps, vps, mbss, recs, zeros,
                                                                    ("even", "balanced")):
            enumerated += 1
            stages = _split(a, pp, vp, split)
            if stages is None or not _ok(a, s, hw, tp, pp, dp, cp, ep, etp, vp, mbs, zero, pins.sequence_parallel,
                                          pins.zero_stage is not None and pins.zero_stage > 0):
                continue
            sp = tp > 1 and pins.sequence_parallel is not False
            one = Layout.of(tp=tp, pp=pp, dp=dp, cp=cp, ep=ep, etp=etp, vp=vp, mbs=mbs, recompute=rec, sp=sp,
                            zero=zero)
            if float(memory(a, s, one)["total"]) <= hw.hbm_bytes:
                feasible.add((tp, pp, dp, cp, ep, etp, vp, mbs, rec, zero, *(stages if pp > 1 else (a.layers, 0, 0))))
    return enumerated, feasible


@st.composite
def cases(draw: st.DrawFn) -> tuple[ModelArch, TrainingSetup, Hardware, int, ParallelismIntake]:
    heads = draw(st.sampled_from([1, 2, 4, 6, 8]))
    kv = draw(st.sampled_from(divisors(heads)))
    moe = draw(st.booleans())
    arch = small_arch(layers=draw(st.sampled_from([1, 2, 3, 4, 6, 8])), hidden=32 * heads, heads=heads,
                      kv_heads=kv, ffn=draw(st.sampled_from([96, 128, 192])),
                      experts=draw(st.sampled_from([2, 4, 6])) if moe else 0, top_k=1 if moe else 0)
    setup = TrainingSetup(seq_len=draw(st.sampled_from([32, 48, 64, 96])),
                          global_batch_size=draw(st.integers(1, 12 if moe else 24)), precision="bf16")
    # The stand-in runtime is 2 GB; a margin of a few MB makes memory bind for some layouts only.
    hw = hardware(hbm_bytes=2e9 + draw(st.sampled_from([1e5, 2e6, 8e6, 1e12])),
                  domain=draw(st.sampled_from([1, 2, 4, 8])))
    gpus = draw(st.sampled_from([1, 2, 3, 4, 6, 8] if moe else [1, 2, 3, 4, 6, 8, 12, 16]))
    pin_names = draw(st.sets(st.sampled_from(["tp", "pp", "cp", "vp", "micro_batch_size", "recompute",
                                              "zero_stage", "sequence_parallel"]), max_size=2))
    values = {"tp": 2, "pp": 2, "cp": 1, "vp": 2, "micro_batch_size": 2, "recompute": "full", "zero_stage": 1,
              "sequence_parallel": False}
    pins = ParallelismIntake(**{k: values[k] for k in pin_names})
    return arch, setup, hw, gpus, pins


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_planner_finds_exactly_the_layouts_the_rules_allow(
        case: tuple[ModelArch, TrainingSetup, Hardware, int, ParallelismIntake]) -> None:
    arch, setup, hw, gpus, pins = case
    enumerated, feasible = reference(arch, setup, hw, gpus, pins)
    result = search(arch, setup, hw, gpus, pins, top_k=10**6, memory_fn=memory, step_fn=step, chunk_size=97)
    assert result.evaluated == enumerated
    assert result.feasible == len(feasible)
    assert sum(result.rejected.values()) + result.feasible == result.evaluated
    found = {(r.tp, r.pp, r.dp, r.cp, r.ep, r.etp, r.vp, r.micro_batch_size, RECOMPUTE_CODES[r.recompute],
              r.zero_stage, r.first_stage_layers, r.middle_stage_layers, r.last_stage_layers) for r in result.layouts}
    assert len(found) == len(result.layouts)    # no layout is enumerated twice
    assert found == feasible
    times = [r.step_time_s for r in result.layouts]
    assert times == sorted(times)
    for r in result.layouts:   # pinned axes are honoured
        for name, attr in (("tp", "tp"), ("pp", "pp"), ("cp", "cp"), ("vp", "vp"),
                           ("micro_batch_size", "micro_batch_size"), ("recompute", "recompute"),
                           ("zero_stage", "zero_stage")):
            pin = getattr(pins, name)
            assert pin is None or getattr(r, attr) == pin
        assert r.sequence_parallel == (r.tp > 1 and pins.sequence_parallel is not False)
        assert r.memory_per_gpu_bytes <= hw.hbm_bytes
    if not result.layouts:
        assert result.infeasible is not None and result.infeasible[0]


def test_space_size_is_the_product_of_the_axes() -> None:
    """GPT-3 175B shape on 1024 GPUs: (tp, pp, cp) over the 11 divisors of 1024 with product | 1024
    is C(13, 3) = 286 ordered factorizations (stars and bars over the 10 factors of 2)."""
    arch = small_arch(layers=96, hidden=12288, heads=96)
    setup = TrainingSetup(seq_len=2048, global_batch_size=1536, precision="bf16")
    space = build_space(arch, setup, hardware(), 1024)
    assert len(space.factors) == 286
    assert (space.factors.prod(axis=1) == 1024).all()
    # vp: the 12 divisors of 96 and 1..8 (5 and 7 are new); split: even and balanced
    assert list(space.vp) == [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 96]
    assert list(space.split) == [0, 1]
    assert len(space.rows) == 286 * 14 * 2
    assert list(space.mbs) == [1 << k for k in range(11)]   # 1 ... 1024 <= 1536
    assert space.size == 286 * 14 * 2 * 11 * 5 * 4   # rows x mbs x recompute modes x zero


def test_mla_up_proj_recompute_is_searched_for_mla_models_only() -> None:
    """Megatron-Core's mla_up_proj mode recomputes multi-latent attention's up-projections: a model
    with MLA gets it as a sixth mode, one without would search `none` twice."""
    setup = TrainingSetup(seq_len=2048, global_batch_size=256, precision="bf16")
    plain = small_arch()
    mla = plain.model_copy(update={"mla_q_lora_rank": 64, "mla_kv_lora_rank": 32, "mla_qk_nope_head_dim": 32,
                                   "mla_qk_rope_head_dim": 16, "mla_v_head_dim": 32})
    up = RECOMPUTE_CODES["mla_up_proj"]
    assert up not in build_space(plain, setup, hardware(), 8).recompute
    assert up in build_space(mla, setup, hardware(), 8).recompute


def test_pins_fix_axes_and_a_pin_that_cannot_divide_is_infeasible() -> None:
    arch = small_arch(layers=8, heads=8)
    setup = TrainingSetup(seq_len=64, global_batch_size=16, precision="bf16")
    pins = ParallelismIntake(tp=2, pp=2, recompute="full", zero_stage=1)
    space = build_space(arch, setup, hardware(), 16, pins)
    assert set(space.factors[:, 0]) == {2} and set(space.factors[:, 1]) == {2}
    assert list(space.recompute) == [2] and list(space.zero) == [1]
    r = search(arch, setup, hardware(), 16, ParallelismIntake(tp=3), memory_fn=memory, step_fn=step)
    assert r.evaluated == 0 and not r.layouts
    assert r.infeasible is not None and r.infeasible[0] == "pinned parallelism"


@pytest.mark.parametrize("chunk", [1, 7, 1000, 1 << 18])
def test_chunking_does_not_change_the_answer(chunk: int) -> None:
    arch = small_arch(layers=4, heads=4)
    setup = TrainingSetup(seq_len=64, global_batch_size=8, precision="bf16")
    base = search(arch, setup, hardware(), 8, top_k=7, memory_fn=memory, step_fn=step)
    r = search(arch, setup, hardware(), 8, top_k=7, memory_fn=memory, step_fn=step, chunk_size=chunk)
    assert [x.to_dict() for x in r.layouts] == [x.to_dict() for x in base.layouts]
    assert r.rejected == base.rejected and r.feasible == base.feasible


def test_uneven_pipeline_stages_are_searched_with_interleaving() -> None:
    """A prime layer count (DeepSeek-V3 has 61) still gets pipeline parallelism and interleaving:
    the balanced split (embedding and loss as a layer each, 7 + 2 = 9 slots on pp 4: 2, 3, 2, 2 ->
    decoder layers 1, 3 (middle), 1) expressed as a Megatron-Core layout string; the even split
    (which needs pp x vp | 7) is rejected."""
    arch = small_arch(layers=7, heads=8)
    setup = TrainingSetup(seq_len=128, global_batch_size=64, precision="bf16")
    r = search(arch, setup, hardware(), 16, ParallelismIntake(pp=4, tp=1, cp=1), top_k=500,
               memory_fn=memory, step_fn=step)
    assert r.layouts and all(layout.pp == 4 for layout in r.layouts)
    assert {layout.vp for layout in r.layouts} == {1, 2}          # (7 + 2) // 4 = 2 slots per rank
    assert all((x.first_stage_layers, x.middle_stage_layers, x.last_stage_layers) == (1, 3, 1) for x in r.layouts)
    assert all(x.pipeline_layout and x.pipeline_layout.count("t") + x.pipeline_layout.count("*") >= 1
               for x in r.layouts)
    assert "even split needs pp x vp to divide the layers" in r.rejected


def test_factorizations_of_a_huge_count_do_not_overflow() -> None:
    """2^40 GPUs: the product of three of its divisors reaches 2^120, past int64. Every
    (tp, pp, cp, dp) must still multiply to the count, and there are C(43, 3) of them (the ways
    to split 40 twos over four factors)."""
    gpus = 1 << 40
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = _factorizations(gpus, ParallelismIntake())
    assert all(int(a) * int(b) * int(c) * int(d) == gpus for a, b, c, d in rows)
    assert len(rows) == 43 * 42 * 41 // 6
