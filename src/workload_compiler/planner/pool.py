"""The planner's threads: one shared pool per thread count, and blocks mapped over it in order.

Blocks of a search run on a few threads (NumPy releases the GIL inside its array operations); the
results come back in block order, so a search merges them as a single thread would.
"""

from __future__ import annotations

import collections
import itertools
import os
import threading
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from ..errors import InputError

T = TypeVar("T")
X = TypeVar("X")
# Threads that evaluate blocks. Between array operations the models hold the GIL, so threads beyond
# the cores only wait. Measured on the DeepSeek-V3 deadline example's search at 3,072 H100 on a
# 2-core machine: 1 thread 1.73-1.79 s, 2 threads 1.24-1.33 s (identical census and ranking).
# WKC_PLANNER_THREADS overrides (1: the single-threaded walk, e.g. to compare).
MAX_THREADS = 8


def planner_threads() -> int:
    """WKC_PLANNER_THREADS if set (a positive integer), else the CPUs this process may run on, at
    most MAX_THREADS."""
    raw = os.environ.get("WKC_PLANNER_THREADS", "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise InputError("WKC_PLANNER_THREADS", raw, "a positive integer (threads for the planner's blocks)")
        return int(raw)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(MAX_THREADS, cpus))


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _forget_pools() -> None:
    """In a forked child: the parent's pool threads do not exist there, so it starts its own."""
    global _POOLS_LOCK
    _POOLS.clear()
    _POOLS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def _shared_pool(threads: int) -> ThreadPoolExecutor:
    """One pool per thread count for the whole process: concurrent compiles (the workbench's
    requests) share its threads instead of each starting its own. Measured with bench_web's load
    (10 clients recompiling llama3-70b-plan at once, 2 cores), recompile p50: one thread per search
    4.8-4.9 s; a pool per search 6.0-6.2 s; this shared pool 3.8 s."""
    with _POOLS_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            pool = _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="wkc-planner")
        return pool


def in_order(fn: Callable[[X], T], items: Iterable[X], threads: int) -> Generator[T, None, None]:
    """fn over items, the results in order: in this thread, or on the shared pool with at most
    2 x threads of this search's blocks queued or running, so concurrent searches take turns on the
    pool's queue rather than one waiting behind all of another's blocks. When the caller stops early
    (an error, a timeout, Ctrl-C) the blocks still queued are cancelled: nothing runs on after it."""
    if threads <= 1:
        yield from map(fn, items)
        return
    pool, rest = _shared_pool(threads), iter(items)
    pending = collections.deque(pool.submit(fn, x) for x in itertools.islice(rest, 2 * threads))
    try:
        while pending:
            result = pending.popleft().result()
            pending.extend(pool.submit(fn, x) for x in itertools.islice(rest, 1))
            yield result
    finally:
        for future in pending:
            future.cancel()


__all__ = ["MAX_THREADS", "in_order", "planner_threads"]
