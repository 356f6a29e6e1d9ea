"""Searches shared within one compile (planner/memo.py): a repeated search runs once, and only inside."""

from __future__ import annotations

from planner_standins import hardware, memory, small_arch, step

from workload_compiler.perf.layout import Layout, TrainingSetup
from workload_compiler.planner import search
from workload_compiler.planner.memo import current, shared_searches

SETUP = TrainingSetup(seq_len=512, global_batch_size=64, precision="bf16")


def _counting() -> tuple[list[int], object]:
    calls: list[int] = []

    def counted(arch: object, setup: TrainingSetup, layout: Layout) -> object:
        calls.append(1)
        return memory(arch, setup, layout)  # type: ignore[arg-type]
    return calls, counted


def test_a_repeated_search_runs_once_inside_and_every_time_outside() -> None:
    arch, hw = small_arch(layers=8, hidden=1024, heads=8), hardware(node=4)
    calls, counted = _counting()
    kwargs = {"top_k": 3, "memory_fn": counted, "step_fn": step}
    first = search(arch, SETUP, hw, 16, **kwargs)  # type: ignore[arg-type]
    per_search = len(calls)
    assert per_search > 0 and current() is None
    with shared_searches():
        a = search(arch, SETUP, hw, 16, **kwargs)  # type: ignore[arg-type]
        with shared_searches():                    # a nested use joins the outer one
            b = search(arch, SETUP, hw, 16, **kwargs)  # type: ignore[arg-type]
        assert b is a and len(calls) == 2 * per_search
        search(arch, SETUP, hw, 32, **kwargs)  # type: ignore[arg-type]   # another count: searched
        assert len(calls) > 2 * per_search
        other = search(arch, SETUP, hw, 16, **{**kwargs, "top_k": 1})  # type: ignore[arg-type]
        assert len(other.layouts) == 1
    assert current() is None
    again = search(arch, SETUP, hw, 16, **kwargs)  # type: ignore[arg-type]
    assert again is not a and [x.step_time_s for x in again.layouts] == [x.step_time_s for x in first.layouts]
