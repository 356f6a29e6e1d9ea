"""Planner searches shared within one compile: the same search is run once.

A compile searches the same (model, run, hardware, GPU count, pins) more than once: the deadline
walks (capped, then uncapped), each alternative the collision engine recompiles (a GPU cap lifted, two
sites) and each point of a sensitivity sweep start from the baseline's counts. `search` is a pure
function of its inputs, so inside `shared_searches()` a repeated call returns the result already
found. The memo lives in a context variable for the duration of the outermost `with`, so nothing
outlives the compile (a long-running workbench holds no searches between requests) and concurrent
compiles in threads do not share one.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_MEMO: ContextVar[dict[Hashable, Any] | None] = ContextVar("wkc_planner_searches", default=None)


@contextmanager
def shared_searches() -> Iterator[None]:
    """Share planner searches among everything run inside (nested uses join the outermost)."""
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def current() -> dict[Hashable, Any] | None:
    """The memo of the enclosing `shared_searches()`, or None outside one."""
    return _MEMO.get()


__all__ = ["current", "shared_searches"]
