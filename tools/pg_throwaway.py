"""A throwaway PostgreSQL server for the tests: a fresh cluster in a temporary folder, listening on
a Unix socket only (no TCP port), owned by the `postgres` system user when run as root (PostgreSQL
refuses to run as root), stopped and removed afterwards.

    python tools/pg_throwaway.py start   # prints the URL to export as WKC_TEST_POSTGRES_URL
    python tools/pg_throwaway.py stop DIR

The test fixture (tests/conftest.py) uses `start_cluster` directly when no URL is exported.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PORT = 54329


def pg_bin() -> Path | None:
    """The folder of initdb/pg_ctl: Debian puts them in /usr/lib/postgresql/N/bin, off PATH."""
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    return Path(versions[-1]).parent if versions else None


def _as_owner(cmd: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


def start_cluster() -> tuple[str, Path]:
    """(URL, folder) of a freshly started cluster; raises RuntimeError when it cannot start."""
    bindir = pg_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL server binaries not found (apt-get install -y postgresql)")
    base = Path(tempfile.mkdtemp(prefix="wkc-pg-"))
    data = base / "data"
    if os.geteuid() == 0:
        shutil.chown(base, "postgres", "postgres")
    base.chmod(0o755)
    run = lambda cmd: subprocess.run(_as_owner(cmd), check=True, capture_output=True, text=True)  # noqa: E731
    try:
        run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"])
        run([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w", "-t", "60", "-o",
             f"-k {base} -p {PORT} -c listen_addresses='' -c fsync=off -c max_connections=200", "start"])
        run([str(bindir / "createdb"), "-h", str(base), "-p", str(PORT), "-U", "postgres", "wkc_test"])
    except subprocess.CalledProcessError as exc:
        log = (base / "log").read_text() if (base / "log").exists() else ""
        stop_cluster(base)
        raise RuntimeError(f"PostgreSQL did not start: {exc.stderr or exc.stdout}\n{log[-2000:]}") from None
    return f"postgresql+psycopg://postgres@/wkc_test?host={base}&port={PORT}", base


def stop_cluster(base: Path) -> None:
    bindir = pg_bin()
    if bindir is not None and (base / "data").exists():
        subprocess.run(_as_owner([str(bindir / "pg_ctl"), "-D", str(base / "data"), "-m", "immediate", "stop"]),
                       check=False, capture_output=True)
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["start"]:
        url, folder = start_cluster()
        print(url)
    elif sys.argv[1:2] == ["stop"] and len(sys.argv) == 3:
        stop_cluster(Path(sys.argv[2]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
