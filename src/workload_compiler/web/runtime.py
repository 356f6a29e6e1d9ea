"""The server's shared state: its settings, the compile cache, the drawn figures and the store
(opened on first use, so a page that never saves never needs a database)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import cast

from fastapi import Request

from ..store.db import database_url, describe
from ..store.revisions import Store
from .engine import CompileCache
from .settings import Settings


class Runtime:
    def __init__(self, settings: Settings, store: Store | None = None) -> None:
        self.settings = settings
        self.cache = CompileCache(settings.cache_size)
        self._store = store
        self._lock = threading.Lock()
        self._figures: OrderedDict[tuple[str, str], str | None] = OrderedDict()
        self.database_url = store.url if store else database_url(settings.database_url)

    @property
    def store_label(self) -> str:
        return describe(self.database_url)

    def store(self) -> Store:
        with self._lock:
            if self._store is None:
                self._store = Store.open(self.database_url)
            return self._store

    def figure(self, key: str, name: str, draw: Callable[[], object]) -> str | None:
        """A drawn SVG by (compile key, figure name), drawn once (bounded like the compile cache)."""
        with self._lock:
            if (key, name) in self._figures:
                return self._figures[(key, name)]
        made = draw()
        svg = getattr(made, "svg", None) if made is not None else None
        with self._lock:
            self._figures[(key, name)] = svg
            while len(self._figures) > 4 * self.settings.cache_size:
                self._figures.popitem(last=False)
        return cast(str | None, svg)


def runtime(request: Request) -> Runtime:
    return cast(Runtime, request.app.state.runtime)


__all__ = ["Runtime", "runtime"]
