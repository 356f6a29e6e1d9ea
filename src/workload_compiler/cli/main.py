"""The `wkc` command: one Typer app; each subcommand lives in its own module and registers here.

Exit codes: 0 success, 2 bad input, 3 infeasible (an answer naming what binds), 1 anything else.
"""

from __future__ import annotations

import importlib
import sys

import typer

app = typer.Typer(
    name="wkc",
    help="Workload Compiler: size GPU infrastructure from the workload up.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module defines `register(app)`; the order here is the order of `wkc --help`.
_COMMAND_MODULES = {"compile": "compile_cmd", "plan": "plan_cmd", "fit": "fit_cmd",
                    "sensitivity": "sensitivity_cmd", "memory": "memory_cmd", "validate": "validate_cmd",
                    "catalog": "catalog_cmd", "supply": "supply_cmd", "profile": "profile_cmd",
                    "calibrate": "calibrate_cmd", "node-check": "node_check_cmd", "schema": "schema_cmd",
                    "serve": "serve_cmd", "save": "save_cmd", "revisions": "revisions_cmd", "diff": "diff_cmd"}


@app.callback()
def _root() -> None:
    """Workload Compiler: size GPU infrastructure from the workload up."""


def _register(argv: list[str]) -> None:
    """Import only the invoked command's module (start-up time is part of every command's wall
    time); every module for --help or an unknown word, so Typer can list or reject it."""
    words = [a for a in argv[1:] if not a.startswith("-")]
    wanted = [_COMMAND_MODULES[words[0]]] if words and words[0] in _COMMAND_MODULES else list(
        _COMMAND_MODULES.values())
    for name in wanted:
        importlib.import_module(f"{__package__}.{name}").register(app)


_register(sys.argv)


if __name__ == "__main__":
    app()
