"""The planner's blocks (grid.Space.block): broadcast arrays that are the flat layouts in order, and
models that give each layout of a block what they give it alone."""

from __future__ import annotations

from typing import Any

import numpy as np

from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.perf.layout import TrainingSetup
from workload_compiler.perf.memory import training_memory_bytes, training_memory_total
from workload_compiler.perf.step_time import training_step
from workload_compiler.planner.grid import build_space, layout_of

SETUP = TrainingSetup(seq_len=4096, global_batch_size=1024, precision="fp8")


def _block_and_flat(r0: int, r1: int) -> tuple[tuple[Any, Any, Any, Any], dict[str, Any], tuple[int, ...], int]:
    arch = preset_arch("mixtral-8x7b")
    hw = load_catalog().hardware("h100-sxm")
    space = build_space(arch, SETUP, hw, 64)
    inner = int(np.prod(space.shape[1:]))
    block = space.block(r0, r1)
    flat = space.decode(np.arange(r0 * inner, r1 * inner, dtype=np.int64))
    return (arch, hw, space, block), flat, (r1 - r0, *space.shape[1:]), inner


def test_a_block_flattened_in_c_order_is_the_flat_range_of_its_rows() -> None:
    (_, _, _, block), flat, shape, _ = _block_and_flat(3, 9)
    for name, values in flat.items():
        assert np.array_equal(np.broadcast_to(block[name], shape).ravel(), values), name


def test_memory_and_step_time_of_a_block_are_those_of_its_layouts_one_by_one() -> None:
    """Broadcasting changes which intermediates are shared, not the arithmetic of any element:
    bit-identical to the 1-D evaluation (the planner's census and ranking rest on it)."""
    (arch, hw, space, block), flat, shape, _ = _block_and_flat(40, 44)
    with np.errstate(all="ignore"):
        b_lay, f_lay = layout_of(block, space), layout_of(flat, space)
        b_mem = np.broadcast_to(training_memory_bytes(arch, SETUP, b_lay)["total"], shape).ravel()
        f_mem = training_memory_bytes(arch, SETUP, f_lay)["total"]
        b_total = np.broadcast_to(training_memory_total(arch, SETUP, b_lay)["total"], shape).ravel()
        b_step = np.broadcast_to(training_step(arch, SETUP, b_lay, hw).step_time_s, shape).ravel()
        f_step = training_step(arch, SETUP, f_lay, hw).step_time_s
    assert np.array_equal(b_mem, f_mem) and np.array_equal(b_total, f_mem)
    assert np.array_equal(b_step, f_step, equal_nan=True)


def test_threads_give_the_census_and_ranking_of_one_thread(monkeypatch: Any) -> None:
    """Blocks on several threads, merged in block order: every count, the best k (ties included)
    and the leanest layout are those of the single-threaded walk. Small blocks force many."""
    import pytest

    from workload_compiler.errors import InputError
    from workload_compiler.planner.search import search

    arch = preset_arch("mixtral-8x7b")
    hw = load_catalog().hardware("h100-sxm")
    results = []
    for threads in ("1", "3"):
        monkeypatch.setenv("WKC_PLANNER_THREADS", threads)
        results.append(search(arch, SETUP, hw, 64, top_k=7, chunk_size=1 << 10))
    one, many = results
    assert one.evaluated == many.evaluated and one.feasible == many.feasible > 0
    assert one.rejected == many.rejected
    assert one.layouts == many.layouts and len(one.layouts) == 7
    big = preset_arch("deepseek-v3")        # nothing fits on 16 GPUs: the reason names the leanest layout
    reasons = []
    for threads in ("1", "3"):
        monkeypatch.setenv("WKC_PLANNER_THREADS", threads)
        reasons.append(search(big, SETUP, hw, 16, chunk_size=1 << 10).infeasible)
    assert reasons[0] == reasons[1] and reasons[0] is not None and "leanest" in reasons[0][1]
    monkeypatch.setenv("WKC_PLANNER_THREADS", "0")
    with pytest.raises(InputError, match="WKC_PLANNER_THREADS"):
        search(arch, SETUP, hw, 64)


def test_a_search_stopped_by_an_exception_runs_no_queued_block_after_it(monkeypatch: Any) -> None:
    """An error (or a timeout, or Ctrl-C) in one block ends the search: the blocks still queued are
    cancelled, not run to the end behind it."""
    import threading
    import time

    import pytest

    from workload_compiler.planner.search import search

    arch = preset_arch("mixtral-8x7b")
    hw = load_catalog().hardware("h100-sxm")
    lock, calls = threading.Lock(), [0]

    def counting_memory(fail_at: int) -> Any:
        def memory(a: Any, s: Any, layout: Any) -> Any:
            with lock:
                calls[0] += 1
                n = calls[0]
            if n == fail_at:
                raise RuntimeError(f"block {fail_at} fails")
            if 0 < fail_at < n:
                time.sleep(0.02)    # blocks after the failure are slow: the caller sees it first
            return training_memory_bytes(a, s, layout)
        return memory

    monkeypatch.setenv("WKC_PLANNER_THREADS", "2")
    # every block evaluated (no bound): the cancellation is the pool's, whichever blocks it runs
    search(arch, SETUP, hw, 64, chunk_size=1 << 10, memory_fn=counting_memory(-1), bound=False)
    whole, calls[0] = calls[0], 0
    assert whole > 40
    with pytest.raises(RuntimeError, match="block 3 fails"):
        search(arch, SETUP, hw, 64, chunk_size=1 << 10, memory_fn=counting_memory(3), bound=False)
    assert calls[0] <= 3 + 2 * 2      # at most 2 x threads in flight when it failed, not the whole space


def _search_in_child(queue: Any) -> None:
    from workload_compiler.planner.search import search
    queue.put(search(preset_arch("mixtral-8x7b"), SETUP, load_catalog().hardware("h100-sxm"), 64,
                     chunk_size=1 << 10).feasible)


def test_a_forked_child_searches_on_its_own_threads(monkeypatch: Any) -> None:
    """The pool is shared within a process; a child forked after a search has none of its threads
    (multiprocessing's fork start: the fuzz tool's workers). It must start its own, not wait on a
    queue no thread serves (without the fork hook this child hangs)."""
    import multiprocessing

    from workload_compiler.planner.search import search

    monkeypatch.setenv("WKC_PLANNER_THREADS", "2")
    parent = search(preset_arch("mixtral-8x7b"), SETUP, load_catalog().hardware("h100-sxm"), 64,
                    chunk_size=1 << 10).feasible
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_search_in_child, args=(queue,))
    child.start()
    child.join(60)
    hung = child.is_alive()
    if hung:
        child.kill()
    assert not hung and queue.get(timeout=5) == parent
