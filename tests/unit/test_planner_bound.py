"""Branch and bound (planner/bound.py): the rows a bound on their step time rules out are never
evaluated, and the best k are exactly those of evaluating every layout (`bound=False`)."""

from __future__ import annotations

import numpy as np
import pytest

from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.perf.layout import TrainingSetup
from workload_compiler.perf.step_time import training_step
from workload_compiler.planner.blocks import MEMORY_REASON, UNDEFINED_REASON
from workload_compiler.planner.bound import BOUND_REASON
from workload_compiler.planner.grid import INNER_AXES, build_space, layout_of, rules
from workload_compiler.planner.search import search

CAT = load_catalog()
CASES = [  # (preset, accelerator, GPUs, sequence, global batch, precision, top k): spaces the bound prunes
    ("deepseek-v3", "h100-sxm", 256, 4096, 1920, "fp8", 5),
    ("mixtral-8x7b", "h100-sxm", 64, 4096, 1024, "bf16", 7),
    ("qwen3-30b-a3b", "gb200", 512, 4096, 1024, "fp8", 1),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[2]}")
def test_the_bounded_search_finds_the_exhaustive_searchs_best_and_counts_the_rest(
        case: tuple[str, str, int, int, int, str, int]) -> None:
    preset, accelerator, gpus, seq, gbs, precision, k = case
    arch, hw = preset_arch(preset), CAT.hardware(accelerator)
    setup = TrainingSetup(seq_len=seq, global_batch_size=gbs, precision=precision)
    every = search(arch, setup, hw, gpus, top_k=k, bound=False)
    bounded = search(arch, setup, hw, gpus, top_k=k)
    assert [x.to_dict() for x in bounded.layouts] == [x.to_dict() for x in every.layouts]
    assert len(bounded.layouts) == k
    # every rule is counted over every layout; memory and the step model over the rows evaluated
    # in full; what a bound ruled out is counted under its own reason, so the census adds up
    modelled = (MEMORY_REASON, UNDEFINED_REASON, BOUND_REASON)
    assert {r: c for r, c in bounded.rejected.items() if r not in modelled} == \
        {r: c for r, c in every.rejected.items() if r not in modelled}
    assert sum(bounded.rejected.values()) + bounded.feasible == bounded.evaluated == every.evaluated
    assert bounded.rejected[BOUND_REASON] > 0 and bounded.feasible < every.feasible


def test_a_small_space_is_searched_whole() -> None:
    """Below BOUND_MIN_LAYOUTS after the prefilter the bound costs more than it saves: every layout is
    evaluated (Llama 3.1 405B on 4,096 H100: 0.4M layouts)."""
    arch, hw = preset_arch("llama3.1-405b"), CAT.hardware("h100-sxm")
    setup = TrainingSetup(seq_len=8192, global_batch_size=2048, precision="bf16")
    every = search(arch, setup, hw, 4096, bound=False)
    r = search(arch, setup, hw, 4096)
    assert BOUND_REASON not in r.rejected and r.feasible == every.feasible and r.rejected == every.rejected


def test_deepseek_at_two_thousand_gpus_evaluates_few_rows() -> None:
    """The DeepSeek-V3 deadline example's space at 2,048 H100: 79M layouts, of which most valid ones
    are ruled out by their bound (measured: 10-16 thousand evaluated in full and fit, 3.3M ruled out)."""
    arch, hw = preset_arch("deepseek-v3"), CAT.hardware("h100-sxm")
    setup = TrainingSetup(seq_len=4096, global_batch_size=15360, precision="fp8")
    r = search(arch, setup, hw, 2048)
    assert r.rejected[BOUND_REASON] > 50 * r.feasible > 0


def test_recompute_never_makes_a_step_faster() -> None:
    """The bound's premise, over every layout the rules allow (DeepSeek-V3 on 256 H100, FP8): each
    layout takes at least as long as the same layout without recompute."""
    arch, hw = preset_arch("deepseek-v3"), CAT.hardware("h100-sxm")
    setup = TrainingSetup(seq_len=4096, global_batch_size=1920, precision="fp8")
    space = build_space(arch, setup, hw, 256)
    rule_list = rules(arch, setup, hw, space)
    rc = 1 + INNER_AXES.index("recompute")
    compared = 0
    for r0 in range(0, len(space.rows), 24):
        r1 = min(len(space.rows), r0 + 24)
        values = space.block(r0, r1)
        shape = (r1 - r0, *space.shape[1:])
        alive = np.ones(shape, dtype=bool)
        for _, ok in rule_list:
            alive &= np.broadcast_to(np.asarray(ok(values), dtype=bool), shape)
        with np.errstate(all="ignore"):
            step = np.broadcast_to(training_step(arch, setup, layout_of(values, space), hw).step_time_s, shape)
            none = np.broadcast_to(training_step(arch, setup, layout_of(
                {**values, "recompute": np.zeros((1,) * len(shape), dtype=np.int64)}, space), hw).step_time_s,
                (*shape[:rc], 1, *shape[rc + 1:]))
        valid = alive & np.isfinite(step)
        assert not np.any(valid & (step < none * (1 - 1e-12))), "a recompute mode stepped faster than none"
        compared += int(valid.sum())
    assert compared > 100_000
