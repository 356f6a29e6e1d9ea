"""The planner's deadline search and hold bound, with stand-in models and with the real ones."""

from __future__ import annotations

import math

from planner_standins import hardware, memory, small_arch, step

from workload_compiler.arch.counts import param_counts
from workload_compiler.arch.model import ModelArch
from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.perf.layout import Hardware, TrainingSetup
from workload_compiler.perf.objective import gpu_ladder, time_to_train_s
from workload_compiler.planner import fewest_gpus_to_hold, plan_for_deadline, search
from workload_compiler.planner.result import PlanResult, PublishedMfu


def _met_just_at_64() -> tuple[ModelArch, TrainingSetup, Hardware, float, float]:
    """A stand-in model, its run, a 4-GPU-node machine, the tokens and a deadline 64 GPUs just meet."""
    arch = small_arch(layers=8, hidden=1024, heads=8)
    setup = TrainingSetup(seq_len=512, global_batch_size=64, precision="bf16")
    hw = hardware(node=4)
    tokens = 1e12
    at_64 = search(arch, setup, hw, 64, top_k=1, memory_fn=memory, step_fn=step).best
    assert at_64 is not None
    return arch, setup, hw, tokens, time_to_train_s(tokens, at_64.tokens_per_s) * 1.01


def test_deadline_plan_is_the_smallest_count_meeting_it() -> None:
    arch, setup, hw, tokens, deadline = _met_just_at_64()
    plan = plan_for_deadline(arch, setup, hw, tokens=tokens, deadline_s=deadline, memory_fn=memory,
                             step_fn=step)
    assert plan.gpus is not None and plan.plan is not None and plan.plan.gpus == plan.gpus
    assert plan.best_time_s <= deadline
    # Every smaller rung of the ladder misses (brute force over the whole ladder below the answer).
    for n in gpu_ladder(hw.gpus_per_node, 1, plan.gpus - 1):
        best = search(arch, setup, hw, n, top_k=1, memory_fn=memory, step_fn=step).best
        assert best is None or time_to_train_s(tokens, best.tokens_per_s) > deadline
    assert plan.gpus <= 64


def test_a_walk_answered_from_earlier_searches_still_carries_its_plan() -> None:
    """A second walk over the searches a first one ran (the capped and uncapped walks of a compile
    share them) finds its answer among them without searching again, and returns that search."""
    arch, setup, hw, tokens, deadline = _met_just_at_64()
    searched: dict[int, PlanResult] = {}
    first = plan_for_deadline(arch, setup, hw, tokens=tokens, deadline_s=deadline, memory_fn=memory,
                              step_fn=step, searched=searched)
    again = plan_for_deadline(arch, setup, hw, tokens=tokens, deadline_s=deadline, memory_fn=memory,
                              step_fn=step, searched=searched)
    assert first.gpus is not None and again.gpus == first.gpus
    assert again.plan is searched[first.gpus]


def test_hold_bound_is_a_true_lower_bound_with_standins() -> None:
    arch = small_arch(layers=8, hidden=2048, heads=16)
    setup = TrainingSetup(seq_len=256, global_batch_size=64, precision="bf16")
    hw = hardware(hbm_bytes=4e9, node=1)
    hold = fewest_gpus_to_hold(arch, setup, hw, memory_fn=memory)
    assert hold.gpus == math.ceil(18 * param_counts(arch).total / 4e9)   # stand-in: 2 + 4 + 12 B/param
    below = search(arch, setup, hw, hold.gpus - 1, memory_fn=memory, step_fn=step)
    assert not below.layouts
    assert hold.binding_term == "optimizer"
    assert "optimizer state" in hold.shortfall(hold.gpus - 1)


def test_gpt3_on_a100_below_the_hold_bound_has_no_layout() -> None:
    """GPT-3 175B (Brown et al. 2020) with mixed-precision Adam: ~3.1 TB of model state; 80 GB A100s."""
    arch = preset_arch("gpt3-175b")
    hw = load_catalog().hardware("a100-sxm-80gb")
    setup = TrainingSetup(seq_len=2048, global_batch_size=1536, precision="bf16")
    hold = fewest_gpus_to_hold(arch, setup, hw)
    assert hold.gpus is not None and 36 <= hold.gpus <= 48
    assert not search(arch, setup, hw, 32).layouts
    # 8 x the 79.25 GiB an A100 80GB exposes to a process (catalog memory_visible_bytes)
    assert "8 x a100-sxm-80gb hold 680.75 GB" in hold.shortfall(8)


def test_the_first_probe_is_the_flop_bound_at_the_typical_mfu_when_one_is_given() -> None:
    """The walk's first probe is the ladder rung at the FLOP bound over the best published MFU; an
    MoE model's walk uses the MoE figure (`typical_mfu`, published_mfu.yaml `moe: true`), which
    starts it higher. Either way the answer is the same: the estimate is a probe, never a bound."""
    arch, setup, hw, tokens, deadline = _met_just_at_64()

    def mfu(value: float) -> PublishedMfu:
        return PublishedMfu(accelerator="test-gpu", precision="bf16", mfu=value, record="r", source="s",
                            flops_definition="d")

    dense = plan_for_deadline(arch, setup, hw, tokens=tokens, deadline_s=deadline, memory_fn=memory, step_fn=step,
                              published_mfu=mfu(0.9))
    typical = plan_for_deadline(arch, setup, hw, tokens=tokens, deadline_s=deadline, memory_fn=memory, step_fn=step,
                                published_mfu=mfu(0.9), typical_mfu=mfu(0.05))
    assert dense.gpus == typical.gpus
    ladder = gpu_ladder(hw.gpus_per_node, dense.start_gpus, dense.max_gpus)
    for plan, basis in ((dense, 0.9), (typical, 0.05)):
        first = next(iter(plan.searches))
        assert first == next(n for n in ladder if n >= dense.flops_bound_gpus / basis)
