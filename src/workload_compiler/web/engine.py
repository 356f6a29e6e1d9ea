"""Compiles for the web: `recompile(intake, pins)` behind a bounded LRU cache keyed by the
canonical JSON of (intake, pins), so a page that asks again for what it already has (a figure, a
report download, a revision saved right after its compile) does not pay for a compile twice.

The compiler is pure, so a cached result is the result; the cache holds at most `size` entries.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..compile import recompile
from ..errors import InputError
from ..spine.result import SystemSpec


@dataclass(frozen=True)
class Compiled:
    key: str
    intake: dict[str, Any]
    pins: dict[str, Any]
    spec: SystemSpec
    compile_s: float          # wall time of the compile itself (0 when it came from the cache)
    cached: bool


def state_key(intake: dict[str, Any], pins: dict[str, Any]) -> str:
    """A stable id of (intake, pins): the first 20 hex digits of the SHA-256 of their canonical JSON."""
    text = json.dumps({"intake": intake, "pins": pins}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class CompileCache:
    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._entries: OrderedDict[str, Compiled] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Compiled | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def compile(self, intake: dict[str, Any], pins: dict[str, Any]) -> Compiled:
        """The result for (intake, pins): from the cache, else compiled (InputError and pydantic's
        ValidationError propagate to the caller, which names the field)."""
        key = state_key(intake, pins)
        found = self.get(key)
        if found is not None:
            with self._lock:
                self.hits += 1
            return Compiled(found.key, found.intake, found.pins, found.spec, 0.0, True)
        t0 = time.perf_counter()
        try:
            spec = recompile(intake, pins)
        except InputError as exc:
            if exc.field != "--set":
                raise
            # the CLI names a bad pin by its flag; on the web it is the pin's own key
            raise InputError(f"pins.{exc.value}", pins.get(str(exc.value)), exc.allowed) from None
        done = Compiled(key, intake, dict(pins), spec, time.perf_counter() - t0, False)
        with self._lock:
            self.misses += 1
            self._entries[key] = done
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return done


__all__ = ["CompileCache", "Compiled", "state_key"]
