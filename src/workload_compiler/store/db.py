"""Opening the store: the database URL (`WKC_DATABASE_URL`, else a SQLite file in the user's data
folder), the engine with the settings each dialect needs, and the migrations, run at start.

SQLite: WAL journal, foreign keys on, and every transaction begun IMMEDIATE (it takes the write
lock at its start), so concurrent savers queue instead of failing half-way; a busy wait of 30 s.
PostgreSQL: `postgresql://` URLs use psycopg 3.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from ..errors import InputError, WkcError

ENV_URL = "WKC_DATABASE_URL"
WRITE_OPTION = "wkc_write"  # execution option of the engine that saves (SQLite: BEGIN IMMEDIATE)


class StoreUnavailable(WkcError):
    """The database cannot be reached or migrated; the message names it (never its password)."""

    exit_code = 1


def default_sqlite_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("workload-compiler", appauthor=False)) / "workbench.sqlite3"


def database_url(explicit: str | None = None) -> str:
    """`explicit`, else $WKC_DATABASE_URL, else the default SQLite file (its folder created)."""
    url = explicit or os.environ.get(ENV_URL)
    if url:
        return url
    path = default_sqlite_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def _normalized(url: str) -> str:
    try:
        parsed = make_url(url)
    except Exception:  # SQLAlchemy raises ArgumentError for text that is not a URL
        raise InputError(ENV_URL, url, "a database URL: sqlite:///PATH or postgresql://USER@HOST/DB") from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if not parsed.drivername.startswith(("sqlite", "postgresql")):
        raise InputError(ENV_URL, url, "a SQLite or PostgreSQL URL (sqlite:///PATH, postgresql://...)")
    return parsed.render_as_string(hide_password=False)


def _sqlite_settings(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # SQLAlchemy, not pysqlite, begins transactions (below)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Any) -> None:
        # A writer takes the lock at BEGIN (no lock upgrade to fail half-way); readers do not wait.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE_OPTION) else "BEGIN")


def make_engine(url: str) -> Engine:
    real = _normalized(url)
    if real.startswith("sqlite"):
        engine = create_engine(real, connect_args={"check_same_thread": False, "timeout": 30})
        _sqlite_settings(engine)
        return engine
    return create_engine(real, pool_pre_ping=True, pool_size=10, max_overflow=20)


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration shipped in the package (idempotent)."""
    config = Config()
    config.set_main_option("script_location", str(resources.files(__package__).joinpath("migrations")))
    try:
        with engine.execution_options(**{WRITE_OPTION: True}).begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    except OperationalError as exc:
        raise StoreUnavailable(f"cannot open the database {describe(engine.url.render_as_string())}: "
                               f"{str(exc.orig).strip().splitlines()[0] if exc.orig else exc}") from None


def describe(url: str) -> str:
    """The URL as shown at start: the SQLite file's path, or the server URL without its password."""
    parsed = make_url(_normalized(url))
    if parsed.drivername.startswith("sqlite"):
        return f"SQLite file {parsed.database}"
    return f"PostgreSQL {parsed.render_as_string(hide_password=True)}"


__all__ = ["ENV_URL", "WRITE_OPTION", "StoreUnavailable", "database_url", "default_sqlite_path", "describe",
           "make_engine", "migrate"]
