"""Searches kept on disk between processes (planner/search_cache.py): read back equal, keyed by
every input and the code, never stale, never a failure when the disk is not there."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from planner_standins import hardware, memory, small_arch, step

from workload_compiler.intake.common import ParallelismIntake
from workload_compiler.perf.layout import TrainingSetup
from workload_compiler.planner import search, search_cache
from workload_compiler.planner.result import PlanResult

SEARCH_MODULE = importlib.import_module("workload_compiler.planner.search")
SETUP = TrainingSetup(seq_len=512, global_batch_size=64, precision="bf16")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("WKC_CACHE", raising=False)
    monkeypatch.setenv("WKC_CACHE_DIR", str(tmp_path / "searches"))
    return tmp_path / "searches"


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many searches really ran (not read back)."""
    ran: list[int] = []
    real: Callable[..., PlanResult] = SEARCH_MODULE._search

    def counted(*args: Any, **kwargs: Any) -> PlanResult:
        ran.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(SEARCH_MODULE, "_search", counted)
    return ran


def _search(gpus: int = 16, **kwargs: Any) -> PlanResult:
    return search(small_arch(layers=8, hidden=1024, heads=8), SETUP, hardware(node=4), gpus, top_k=3, **kwargs)


def test_a_search_is_read_back_equal_in_every_field(cache: Path, runs: list[int]) -> None:
    first = _search()
    assert len(runs) == 1 and len(list(cache.glob("*.json"))) == 1 and not first.from_cache
    again = _search()
    assert len(runs) == 1 and again.from_cache
    assert again.layouts and dataclasses.replace(again, from_cache=False) == first   # seconds: the original's


def test_each_input_is_part_of_the_key(cache: Path, runs: list[int]) -> None:
    arch = small_arch(layers=8, hidden=1024, heads=8)
    _search()
    _search(gpus=32)
    search(arch, dataclasses.replace(SETUP, seq_len=1024), hardware(node=4), 16, top_k=3)           # the run
    search(arch, SETUP, hardware(node=4, hbm_bytes=40e9), 16, top_k=3)                               # the machine
    search(small_arch(layers=8, hidden=1024, heads=8, kv_heads=2), SETUP, hardware(node=4), 16, top_k=3)  # the model
    search(arch, SETUP, hardware(node=4), 16, ParallelismIntake(tp=2), top_k=3)                      # the pins
    _search(memory_margin=0.05)
    search(arch, SETUP, hardware(node=4), 16, top_k=2)
    assert len(runs) == 8 and len(list(cache.glob("*.json"))) == 8


def test_the_code_is_part_of_the_key(cache: Path, runs: list[int], monkeypatch: pytest.MonkeyPatch,
                                     tmp_path: Path) -> None:
    package = tmp_path / "package"
    package.mkdir()
    (package / "fitted.py").write_text("E_MAX = 0.8\n")
    monkeypatch.setattr(search_cache, "_PACKAGE", package)
    search_cache.code_fingerprint.cache_clear()
    _search()
    (package / "fitted.py").write_text("E_MAX = 0.7\n")   # a refit: the stored search is not this code's
    search_cache.code_fingerprint.cache_clear()
    _search()
    search_cache.code_fingerprint.cache_clear()
    assert len(runs) == 2


def test_stand_in_models_are_never_kept(cache: Path, runs: list[int]) -> None:
    _search(memory_fn=memory, step_fn=step)
    _search(memory_fn=memory, step_fn=step)
    assert len(runs) == 2 and not cache.exists()


def test_off_means_neither_read_nor_written(cache: Path, runs: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    with search_cache.disabled():
        _search()
    assert not cache.exists()
    _search()
    monkeypatch.setenv("WKC_CACHE", "off")
    assert _search().from_cache is False and len(runs) == 3


def test_a_damaged_entry_is_a_miss_and_is_replaced(cache: Path, runs: list[int]) -> None:
    first = _search()
    (entry,) = cache.glob("*.json")
    entry.write_text('{"gpus": 16, "layouts": [')                    # cut short
    assert not _search().from_cache
    doc = json.loads(entry.read_text())
    doc["layouts"][0]["no_such_field"] = 1                           # written by another version
    entry.write_text(json.dumps(doc))
    assert not _search().from_cache
    replaced = _search()
    assert replaced.from_cache and replaced.layouts == first.layouts and len(runs) == 3


def test_a_cache_that_cannot_be_written_leaves_the_search_uncached(tmp_path: Path, runs: list[int],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.delenv("WKC_CACHE", raising=False)
    monkeypatch.setenv("WKC_CACHE_DIR", str(blocker / "searches"))   # below a file: mkdir fails
    assert _search().layouts and _search().layouts and len(runs) == 2


def test_no_home_directory_means_no_cache(monkeypatch: pytest.MonkeyPatch, runs: list[int]) -> None:
    for name in ("WKC_CACHE", "WKC_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)

    def nowhere() -> Path:
        raise RuntimeError("Could not determine home directory.")
    monkeypatch.setattr(Path, "home", staticmethod(nowhere))
    assert search_cache.cache_dir() is None
    assert _search().layouts and _search().layouts and len(runs) == 2


def test_the_least_recently_used_go_past_the_limit(cache: Path, runs: list[int],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_cache, "MAX_ENTRIES", 3)
    monkeypatch.setattr(search_cache, "KEEP_AFTER_PRUNE", 2)
    for gpus in (4, 8, 16):
        _search(gpus=gpus)
    for entry, age in zip(sorted(cache.glob("*.json")), (300, 200, 100), strict=True):
        os.utime(entry, (entry.stat().st_atime - age, entry.stat().st_mtime - age))   # apart in time
    _search(gpus=4)               # read back: now the most recently used
    _search(gpus=32)              # the 4th entry: the two least recently used go
    assert len(runs) == 4 and len(list(cache.glob("*.json"))) == 2
    assert _search(gpus=4).from_cache and _search(gpus=32).from_cache and len(runs) == 4
    assert search_cache.clear() == 2 and not list(cache.glob("*.json"))


def test_cli_no_cache_and_the_cache_command(cache: Path) -> None:
    wkc = [sys.executable, "-m", "workload_compiler.cli.main"]
    example = str(ROOT / "examples" / "llama3-70b-plan.yaml")
    subprocess.run([*wkc, "compile", example, "--json", "--no-cache"], check=True, capture_output=True, cwd=ROOT)
    assert not cache.exists()
    cold = json.loads(subprocess.run([*wkc, "compile", example, "--json"], check=True, capture_output=True,
                                     cwd=ROOT).stdout)
    warm = json.loads(subprocess.run([*wkc, "compile", example, "--json"], check=True, capture_output=True,
                                     cwd=ROOT).stdout)
    assert cold["search"]["from_cache"] is False and warm["search"]["from_cache"] is True
    assert {**warm, "search": {**warm["search"], "from_cache": False}} == cold
    shown = subprocess.run([*wkc, "cache"], check=True, capture_output=True, text=True, cwd=ROOT).stdout
    assert f"search cache: {cache}\n" in shown and "holds: 1 search," in shown
    cleared = subprocess.run([*wkc, "cache", "--clear"], check=True, capture_output=True, text=True, cwd=ROOT).stdout
    assert "removed: 1 search\n" in cleared and not list(cache.glob("*.json"))


def test_concurrent_compiles_of_one_search_agree_and_leave_one_entry(cache: Path) -> None:
    """The workbench compiles in threads: writers of one key rename whole files into place."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda _: _search(), range(8)))
    assert all(r.layouts == found[0].layouts for r in found)
    assert len(list(cache.glob("*.json"))) == 1 and not list(cache.glob(".tmp-*"))
