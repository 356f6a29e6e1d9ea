"""A live workbench per test module, on a fresh SQLite file; the browser launch settings for
Debian's Chromium (root, closed network)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from components import chromium_path
from live_server import serve
from workload_compiler.web.settings import Settings


@pytest.fixture(scope="module")
def base_url_live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    db = tmp_path_factory.mktemp("db") / "workbench.sqlite3"
    with serve(Settings(rate_per_minute=0), f"sqlite:///{db}") as url:
        yield url


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_type_launch_args, "executable_path": chromium_path(),
            "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update"]}


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Screenshots kept by the browser tests (gitignored)."""
    from shared_data import REPO_ROOT

    folder = REPO_ROOT / "test-artifacts"
    folder.mkdir(exist_ok=True)
    return folder
