"""The core stays light: importing the package, or compiling, loads no web, database, template,
plot or PDF package (they are extras, loaded only by the commands that need them)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ["fastapi", "starlette", "uvicorn", "sqlalchemy", "alembic", "psycopg", "jinja2", "matplotlib",
         "weasyprint", "platformdirs"]


def test_compile_imports_no_extra() -> None:
    code = ("import sys, workload_compiler as w\n"
            "w.compile_workload('examples/gpt3-175b-a100.yaml')\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=__file__.rsplit("/tests/", 1)[0])
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_a_missing_extra_is_named_with_its_install_command() -> None:
    from workload_compiler.extras import MissingExtra, require_extra

    require_extra("web")  # installed by the dev extra
    err = MissingExtra("pdf", "weasyprint")
    assert "pip install 'workload-compiler[pdf]'" in str(err) and err.exit_code == 2
