"""perf/objective.py: training FLOPs, time to train, the GPU ladder, the deadline search, the hold bound."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from planner_standins import hardware

from workload_compiler.arch.counts import param_counts
from workload_compiler.arch.presets import preset_arch
from workload_compiler.errors import InputError
from workload_compiler.perf.layout import TrainingSetup
from workload_compiler.perf.objective import (
    finer_rungs,
    gpu_ladder,
    gpus_for_deadline,
    min_gpus_for_flops,
    min_gpus_to_hold,
    time_to_train_s,
    total_training_flops,
)
from workload_compiler.planner.capacity import fewest_gpus_to_hold

DAY = 86400.0


def test_training_flops_match_narayanan_with_causal_attention() -> None:
    """Narayanan et al. 2021 (arXiv:2104.04473) model FLOPs per token without recompute:
    72 l h^2 (1 + s/(6h) + V/(12 l h)) counts the attention scores non-causal; causal attention
    (what FlashAttention computes, and our MFU numerator) halves that term: s/(12h)."""
    a = preset_arch("gpt3-175b")
    s, n_layers, h, v = 2048, a.layers, a.hidden_size, a.vocab_size
    per_token = 72 * n_layers * h**2 * (1 + s / (12 * h) + v / (12 * n_layers * h))
    assert total_training_flops(a, 300e9, s) == pytest.approx(per_token * 300e9, rel=2e-3)


def test_time_to_train_reproduces_narayanan_equation_4() -> None:
    """Eq. 4: T_train ~= 8 T P / (n X); 300B tokens, 175B params, 1024 GPUs at 140 TFLOP/s: 34 days
    (the paper's number). 8 T P FLOPs at n X FLOP/s is a throughput of n X / (8 P) tokens/s."""
    tokens_per_s = 1024 * 140e12 / (8 * 175e9)
    assert time_to_train_s(300e9, tokens_per_s) / DAY == pytest.approx(34.0, abs=0.5)
    assert time_to_train_s(1e9, 0.0) == math.inf
    with pytest.raises(InputError):
        time_to_train_s(-1.0, 10.0)


def test_flops_bound_is_the_ceiling_at_full_peak() -> None:
    assert min_gpus_for_flops(1e24, 30 * DAY, 1e15) == math.ceil(1e24 / (30 * DAY * 1e15))
    n = min_gpus_for_flops(1e24, 30 * DAY, 1e15)
    assert (n - 1) * 30 * DAY * 1e15 < 1e24 <= n * 30 * DAY * 1e15


def test_hold_bound_is_the_ceiling_of_state_over_usable_hbm() -> None:
    assert min_gpus_to_hold(3.2e12, 80e9) == 40
    assert min_gpus_to_hold(3.2e12 + 1, 80e9) == 41
    assert min_gpus_to_hold(1e12, 80e9, runtime_bytes=30e9) == 20
    assert min_gpus_to_hold(1e12, 80e9, runtime_bytes=80e9) is None


def test_one_trillion_parameters_need_the_tools_own_bytes_per_parameter() -> None:
    """The seed says a 1T model "needs ~512 GPUs minimum" and that "1T in FP8 with optimizer is ~4 TB".
    The tool derives its own figures: mixed-precision Adam keeps bf16 weights (2 B), fp32 gradients
    (4 B) and fp32 master weights + Adam moments (12 B) per parameter (Megatron-Core
    distributed-optimizer docs; ZeRO, arXiv:1910.02054 §3): 18 B x 1.0T = 18 TB, not 4 TB, and FP8
    training adds FP8 weight copies on top rather than shrinking the optimizer state. Held on
    80 GB GPUs that is >= 227 GPUs for the state alone; activations and buffers push a real
    layout above it (the planner finds where)."""
    a = preset_arch("megatron-1t")
    bf16 = fewest_gpus_to_hold(a, TrainingSetup(seq_len=2048, global_batch_size=512, precision="bf16"),
                               hardware())
    fp8 = fewest_gpus_to_hold(a, TrainingSetup(seq_len=2048, global_batch_size=512, precision="fp8"),
                              hardware())

    params = param_counts(a).total
    assert bf16.state_bytes / params == pytest.approx(18.0)
    assert fp8.state_bytes >= bf16.state_bytes > 4e12 * 4
    assert bf16.binding_term == "optimizer"
    assert bf16.gpus == math.ceil(bf16.state_bytes / 80e9)
    assert 200 < bf16.gpus < 512
    assert "optimizer state" in bf16.shortfall(8) and "8 x test-gpu hold 640.00 GB" in bf16.shortfall(8)


@given(st.sampled_from([1, 4, 8, 72]), st.integers(1, 5000), st.integers(1, 200_000))
@settings(max_examples=50, deadline=None)
def test_ladder_is_whole_nodes_of_2a_or_3x2a_close_together(node: int, start: int, cap: int) -> None:
    ladder = gpu_ladder(node, start, cap)
    assert ladder == sorted(set(ladder))
    for n in ladder:
        k = n // node
        assert n % node == 0 and start <= n <= cap
        assert k & (k - 1) == 0 or (k % 3 == 0 and (k // 3) & (k // 3 - 1) == 0)
    for a, b in itertools.pairwise(ladder):
        assert b / a <= (2.0 if a == node else 1.5)   # 1 -> 2 nodes, then 2, 3, 4, 6, 8, 12 ...


def _scanned(ladder: list[int], node: int, start: int, meets: Callable[[int], bool]) -> int | None:
    """The answer by brute force: the first ladder count that meets, then the finer rung below it
    if that one meets too."""
    hit = next((n for n in ladder if meets(n)), None)
    if hit is None:
        return None
    below = max((n for n in ladder if n < hit), default=start - 1)
    return next((n for n in finer_rungs(node, below, hit) if meets(n)), hit)


@given(st.sampled_from([1, 4, 8, 72]), st.integers(1, 5000), st.integers(1, 200_000))
@settings(max_examples=50, deadline=None)
def test_finer_rungs_halve_each_gap_past_four_nodes(node: int, start: int, cap: int) -> None:
    """Between consecutive ladder counts from four nodes on (4, 6, 8, 12 ... x node) lies exactly
    one count of 5 x 2^a or 7 x 2^a nodes, at most 1.25x above the lower one; none below four nodes."""
    ladder = gpu_ladder(node, start, cap)
    for a, b in itertools.pairwise(ladder):
        finer = finer_rungs(node, a, b)
        if a >= 4 * node:
            assert len(finer) == 1 and a < finer[0] < b and finer[0] / a <= 1.25 and finer[0] % node == 0
            k = finer[0] // node
            assert k % 5 == 0 or k % 7 == 0
        else:
            assert finer == []


@given(node=st.sampled_from([1, 8]), start=st.integers(1, 300), exponent=st.floats(0.6, 1.0),
       rate=st.floats(1.0, 1e4), deadline=st.floats(10.0, 1e7), holes=st.sets(st.integers(0, 30), max_size=8),
       estimate=st.one_of(st.just(0.0), st.floats(1.0, 1e6)))
@settings(max_examples=80, deadline=None)
def test_deadline_search_returns_the_smallest_ladder_count(
        node: int, start: int, exponent: float, rate: float, deadline: float, holes: set[int],
        estimate: float) -> None:
    """A throughput that grows with the GPU count (sub-linearly) and has holes (counts with no layout):
    the search must return exactly what a scan of the whole ladder returns, in few probes, whatever
    the caller's first guess (estimate_gpus, too low or too high)."""
    cap = 100_000
    ladder = gpu_ladder(node, start, cap)
    hole_counts = {ladder[i] for i in holes if i < len(ladder)}
    tokens = 1e9

    def tps(n: int) -> float:
        return 0.0 if n in hole_counts else rate * n**exponent

    expected = _scanned(ladder, node, start, lambda n: time_to_train_s(tokens, tps(n)) <= deadline)
    found = gpus_for_deadline(tokens, deadline, tps, node_gpus=node, start_gpus=start, max_gpus=cap,
                              estimate_gpus=estimate)
    assert found.gpus == expected
    if expected is not None:
        assert found.time_to_train_s <= deadline
        # the walk and bisection of both sub-ladders, the holes, and the finer rung
        assert len(found.probes) <= 2 * math.ceil(math.log2(len(ladder) + 1)) + len(hole_counts) + 3


@given(node=st.sampled_from([1, 8]), start=st.integers(1, 300), exponent=st.floats(0.6, 1.2),
       penalty=st.floats(0.4, 1.0), deadline=st.floats(10.0, 1e7),
       estimate=st.one_of(st.just(0.0), st.floats(1.0, 1e6)))
@settings(max_examples=80, deadline=None)
def test_deadline_search_is_exact_when_3x2a_counts_factor_worse(
        node: int, start: int, exponent: float, penalty: float, deadline: float, estimate: float) -> None:
    """3 x 2^a nodes slower than the 2^a nodes below them (time not monotone along the ladder, as
    with real layouts: 96 GPUs can train slower than 64): still exactly what a scan returns."""
    cap = 100_000
    ladder = gpu_ladder(node, start, cap)

    def tps(n: int) -> float:
        k = n // node
        return 1e3 * n**exponent * (1.0 if k & (k - 1) == 0 else penalty)

    expected = _scanned(ladder, node, start, lambda n: time_to_train_s(1e9, tps(n)) <= deadline)
    found = gpus_for_deadline(1e9, deadline, tps, node_gpus=node, start_gpus=start, max_gpus=cap,
                              estimate_gpus=estimate)
    assert found.gpus == expected


def test_deadline_search_reports_none_when_the_cap_is_too_small() -> None:
    found = gpus_for_deadline(1e12, DAY, lambda n: 10.0 * n, node_gpus=8, start_gpus=8, max_gpus=64)
    assert found.gpus is None and set(found.probes) <= set(gpu_ladder(8, 8, 64))
    assert found.time_to_train_s == pytest.approx(1e12 / 640)


def test_a_second_pass_at_a_shorter_deadline_reuses_the_first_ones_misses() -> None:
    """A second walk (another fabric, or the uncapped one after a cap binds) reuses what the first
    searched: what missed the longer deadline misses the shorter one; the walk starts from the
    largest known miss and probes no count below it again, and still answers exactly."""
    asked: list[int] = []

    def tps(n: int) -> float:
        asked.append(n)
        return 1e3 * n**0.8

    first = gpus_for_deadline(1e11, 1e5, tps, node_gpus=8, start_gpus=8, max_gpus=100_000)
    asked.clear()
    second = gpus_for_deadline(1e11, 0.3e5, tps, node_gpus=8, start_gpus=8, max_gpus=100_000,
                               known=first.probes)
    ladder = gpu_ladder(8, 8, 100_000)
    assert second.gpus == _scanned(ladder, 8, 8, lambda n: time_to_train_s(1e11, 1e3 * n**0.8) <= 0.3e5)
    largest_miss = max(n for n, t in first.probes.items() if t > 0.3e5)
    assert asked and all(n > largest_miss for n in asked)
    assert not set(asked) & set(first.probes)


def _linear_recording(per_gpu: float) -> tuple[list[int], Callable[[int], float]]:
    """A throughput of `per_gpu` tokens/s per GPU that records each count asked for."""
    asked: list[int] = []

    def tps(n: int) -> float:
        asked.append(n)
        return per_gpu * n

    return asked, tps


def test_the_second_sub_ladder_starts_where_the_first_ones_misses_point() -> None:
    """A miss at n GPUs in t names n x t / deadline GPUs (linear scaling): the 3 x 2^a walk starts
    there instead of at its lowest rung. At 10 tokens/s per GPU the deadline needs 1,000 GPUs: the
    power-of-two walk answers 1,024, and of the 3 x 2^a rungs below it only 768 is searched."""
    asked, tps = _linear_recording(10.0)
    found = gpus_for_deadline(1e12, 1e12 / (10.0 * 1000), tps, node_gpus=8, start_gpus=8, max_gpus=100_000)
    assert found.gpus == 1024
    three = [n for n in asked if (n // 8) & (n // 8 - 1)]
    assert three == [768, 896]      # and the finer rung below the answer, 7 x 16 nodes: it misses


def test_the_walk_goes_up_the_whole_ladder_then_certifies_each_sub_ladder_below_its_hit() -> None:
    """Starting at 20 GPUs (10 tokens/s per GPU, the deadline needs 700): 24 misses and names 700,
    so the walk jumps to 768, which meets it. Each sub-ladder is then certified at or below 768: of
    the power-of-two rungs only the top one, 512, is searched (it misses, so every power below does),
    and of the 3 x 2^a rungs the one below the hit, 384. 1,024 is never searched."""
    asked, tps = _linear_recording(10.0)
    found = gpus_for_deadline(1e12, 1e12 / (10.0 * 700), tps, node_gpus=8, start_gpus=20, max_gpus=100_000)
    assert found.gpus == 768
    assert asked == [24, 768, 512, 384, 640]    # 640 = 5 x 16 nodes, the finer rung below 768: it misses
