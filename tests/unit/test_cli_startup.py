"""The `wkc` process settings (cli/startup.py): a raised gen-0 collector threshold, and pydantic's
plugin discovery off unless the user's environment says otherwise."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import pytest

from workload_compiler.cli.startup import GEN0_THRESHOLD, tune_process


@pytest.fixture
def restore_gc() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    yield before
    gc.set_threshold(*before)


def test_tune_process_raises_gen0_and_keeps_the_older_generations(restore_gc: tuple[int, int, int],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    gc.set_threshold(700, 10, 10)
    tune_process()
    assert gc.get_threshold() == (GEN0_THRESHOLD, 10, 10)
    gc.set_threshold(GEN0_THRESHOLD * 2, 10, 10)      # a higher threshold already set is kept
    tune_process()
    assert gc.get_threshold()[0] == GEN0_THRESHOLD * 2


def test_plugins_off_unless_the_environment_sets_them(restore_gc: tuple[int, int, int],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    tune_process()
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__"
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "")      # the user turns plugins back on
    tune_process()
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == ""
