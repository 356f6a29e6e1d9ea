"""The `wkc` command: one Typer app; each subcommand lives in its own module and registers here.

Exit codes: 0 success, 2 bad input, 3 infeasible (an answer naming what binds), 1 anything else.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="wkc",
    help="Workload Compiler: size GPU infrastructure from the workload up.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module defines `register(app)`; the order here is the order of `wkc --help`.
_COMMAND_MODULES = ["compile_cmd", "plan_cmd", "fit_cmd", "memory_cmd", "validate_cmd", "catalog_cmd"]

for _name in _COMMAND_MODULES:
    try:
        _module = importlib.import_module(f"{__package__}.{_name}")
    except ModuleNotFoundError as exc:  # a command not built yet must not break the others
        if exc.name != f"{__package__}.{_name}":
            raise
        continue
    _module.register(app)


if __name__ == "__main__":
    app()
