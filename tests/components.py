"""Real components the tests drive (PostgreSQL, Chromium): found or started here; when absent the
test is skipped on a developer's machine and FAILS under CI (`CI` set), where .ci/run installs them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from shared_data import tool_module

PG_ENV = "WKC_TEST_POSTGRES_URL"


def missing(what: str) -> None:
    """Skip, or fail under CI: a component that CI installs must be there."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing under CI (.ci/run installs it)")
    pytest.skip(f"{what} is not installed here")


def chromium_path() -> str:
    found = os.environ.get("WKC_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        missing("Debian's chromium (apt-get install -y chromium)")
    return str(found)


class PgServer:
    """A PostgreSQL server: the one .ci/run exported ($WKC_TEST_POSTGRES_URL), else a throwaway
    cluster started for this test session (tools/pg_throwaway.py)."""

    def __init__(self) -> None:
        self.url = os.environ.get(PG_ENV, "")
        self._folder: Path | None = None
        self._count = 0
        if not self.url:
            helper = tool_module("pg_throwaway")
            if helper.pg_bin() is None:
                missing("PostgreSQL (apt-get install -y postgresql)")
            try:
                self.url, self._folder = helper.start_cluster()
            except RuntimeError as exc:
                missing(f"a startable PostgreSQL ({exc})")

    def fresh_database(self) -> str:
        """The URL of a new, empty database on the server."""
        import psycopg
        from sqlalchemy.engine import make_url

        self._count += 1
        name = f"wkc_t{os.getpid()}_{self._count}"
        url = make_url(self.url)
        admin = url.set(drivername="postgresql")
        with psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return url.set(database=name).render_as_string(hide_password=False)

    def stop(self) -> None:
        if self._folder is not None:
            tool_module("pg_throwaway").stop_cluster(self._folder)
