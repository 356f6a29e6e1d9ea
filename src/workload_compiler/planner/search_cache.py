"""Planner searches kept on disk between processes: a search with the same inputs is run once.

A search is a pure function of the model, the run, the hardware, the GPU count and the pins, and
of this code: the same intake compiled again (another report format, a changed budget, facility or
deadline, the workbench's recompiles, a sweep started over) asks for searches already done.
DeepSeek-V3's deadline walk runs 4 searches of 0.3-0.8 s each on a 2-core machine; read back they
cost milliseconds. `planner/memo.py` shares searches within one compile; this shares them between
compiles.

The key is a SHA-256 over the inputs' reprs (frozen dataclasses and pydantic models: every field,
floats exact) and a fingerprint of the package's own files (code, fitted constants, catalog data),
NumPy's version and Python's: any change to the model or the data is a different key, never a
stale answer. An entry is one JSON file, written to a temporary name and renamed into place, so a
reader never sees half of one; of concurrent writers of one key (the same search, timed apart)
the last rename wins. Reading is forgiving: a missing, unreadable or malformed entry is a miss,
and a cache directory that cannot be written leaves the search uncached, never failed. Past
MAX_ENTRIES the least recently used go (a read marks an entry used).

The fingerprint is of the files: a script that changes a fitted constant in memory must run
inside `disabled()` (or with `WKC_CACHE=off`).

Where: `$WKC_CACHE_DIR`, else `$XDG_CACHE_HOME/wkc/searches`, else `~/.cache/wkc/searches`.
`WKC_CACHE=off` (or `0`, `no`, `false`) turns it off (`wkc compile --no-cache` for one command).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from .result import PlanResult, PublishedMfu, RankedLayout

FORMAT = 1                  # part of the fingerprint: bump when PlanResult's fields change meaning
MAX_ENTRIES = 2000          # ~6 kB each (5 layouts with their breakdowns): ~12 MB at most
KEEP_AFTER_PRUNE = 1600     # pruning drops the least recently used down to this: once per 400 writes
_OFF = frozenset({"0", "off", "no", "false"})
_DISABLED: ContextVar[bool] = ContextVar("wkc_search_cache_disabled", default=False)
_PACKAGE = Path(__file__).resolve().parents[1]


def cache_dir() -> Path | None:
    """The directory searches are kept in, or None when caching is off."""
    if _DISABLED.get() or os.environ.get("WKC_CACHE", "").strip().lower() in _OFF:
        return None
    explicit = os.environ.get("WKC_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):    # no home directory to be found: no cache, not a failure
            return None
    return Path(base) / "wkc" / "searches"


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """No on-disk searches inside (read or written): `--no-cache`, and timing a search itself."""
    token = _DISABLED.set(True)
    try:
        yield
    finally:
        _DISABLED.reset(token)


@functools.cache
def code_fingerprint() -> str:
    """SHA-256 over every file of the package (path and bytes; compiled caches excluded), with
    NumPy's and Python's versions: what a search's result depends on besides its arguments."""
    digest = hashlib.sha256(f"{np.__version__}|{sys.version}|{FORMAT}".encode())
    for path in sorted(p for p in _PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def key_of(parts: tuple[Any, ...]) -> str:
    """The entry's name: a digest of the inputs' reprs and the code fingerprint."""
    return hashlib.sha256(f"{code_fingerprint()}|{parts!r}".encode()).hexdigest()


def load(key: str) -> PlanResult | None:
    """The search stored under `key`, marked `from_cache`; None when absent or unreadable."""
    where = cache_dir()
    if where is None:
        return None
    entry = where / f"{key}.json"
    try:
        found = dataclasses.replace(_result_from(json.loads(entry.read_text(encoding="utf-8"))), from_cache=True)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    with contextlib.suppress(OSError):
        os.utime(entry)     # pruning removes the least recently used, not the first written
    return found


def store(key: str, result: PlanResult) -> None:
    """Keep `result` under `key`; any failure to write leaves it unstored."""
    where = cache_dir()
    if where is None:
        return
    text = json.dumps(dataclasses.asdict(result))
    try:
        where.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, where / f"{key}.json")
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _prune(where)
    except OSError:
        return


def clear() -> int:
    """Remove every stored search; the number removed."""
    where = cache_dir()
    if where is None or not where.is_dir():
        return 0
    removed = 0
    for entry in where.glob("*.json"):
        with contextlib.suppress(OSError):
            entry.unlink()
            removed += 1
    return removed


def _prune(where: Path) -> None:
    entries = list(where.glob("*.json"))
    if len(entries) <= MAX_ENTRIES:
        return
    by_age = sorted(entries, key=lambda p: p.stat().st_mtime)
    for entry in by_age[:len(entries) - KEEP_AFTER_PRUNE]:
        with contextlib.suppress(OSError):
            entry.unlink()


def _result_from(d: dict[str, Any]) -> PlanResult:
    published = d.get("published_mfu")
    infeasible = d.get("infeasible")
    return PlanResult(**{
        **d,
        "layouts": [RankedLayout(**layout) for layout in d["layouts"]],
        "published_mfu": PublishedMfu(**published) if published else None,
        "infeasible": tuple(infeasible) if infeasible else None,
    })


__all__ = ["cache_dir", "clear", "code_fingerprint", "disabled", "key_of", "load", "store"]
