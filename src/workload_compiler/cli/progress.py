"""A progress bar on stderr for work that outlasts half a second: shown only on a terminal (never
in pipes, CI or captured --json), started by a timer so quick commands never pay for rich.

The compile passes do not report steps, so the bar is indeterminate (a pulse with the elapsed
time); `wkc plan` reports layouts searched and shows a real bar (plan_cmd.LazyProgress).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .common import err

DELAY_S = 0.5


@contextmanager
def progress_after(label: str, delay_s: float = DELAY_S) -> Iterator[None]:
    if not err.is_terminal:
        yield
        return
    state: dict[str, Any] = {}
    lock = threading.Lock()

    def start() -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        with lock:
            if state.get("done"):
                return
            bar = Progress(TextColumn(label), BarColumn(), TimeElapsedColumn(), console=err.get(), transient=True)
            bar.add_task(label, total=None)
            bar.start()
            state["bar"] = bar

    timer = threading.Timer(delay_s, start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            state["done"] = True
            if "bar" in state:
                state["bar"].stop()
