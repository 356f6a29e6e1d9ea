"""A compile that passes the delay shows a bar on stderr (a terminal only); a quick one shows none."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

from workload_compiler.cli import common, progress


class _Terminal:
    def __init__(self) -> None:
        self.sink = io.StringIO()

    @property
    def is_terminal(self) -> bool:
        return True

    def get(self) -> Console:
        return Console(file=self.sink, force_terminal=True, width=80)


@pytest.mark.parametrize(("work_s", "shown"), [(0.3, True), (0.0, False)])
def test_bar_only_after_the_delay(monkeypatch: pytest.MonkeyPatch, work_s: float, shown: bool) -> None:
    fake = _Terminal()
    monkeypatch.setattr(progress, "err", fake)
    with progress.progress_after("compiling", delay_s=0.05):
        time.sleep(work_s)
    assert ("compiling" in fake.sink.getvalue()) is shown


def test_no_bar_when_stderr_is_not_a_terminal() -> None:
    assert not common.err.is_terminal   # pytest captures stderr
    with progress.progress_after("compiling", delay_s=0.0):
        time.sleep(0.05)
