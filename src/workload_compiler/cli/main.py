"""The `wkc` command: one Typer app; each subcommand lives in its own module and registers here.

Exit codes: 0 success, 2 bad input, 3 infeasible (an answer naming what binds), 1 anything else.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated, Any

from .startup import tune_process

tune_process()   # before typer and pydantic load (cli/startup.py says why)

import typer  # noqa: E402

app = typer.Typer(
    name="wkc",
    help="Workload Compiler: size GPU infrastructure from the workload up.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module defines `register(app)`; the order here is the order of `wkc --help`, with the
# command's one-line summary (its docstring's first paragraph; tests/e2e/test_cli_contract.py checks).
_COMMANDS = {
    "compile": ("compile_cmd", "Compile a workload into its six-layer system specification."),
    "plan": ("plan_cmd", "Search every valid parallel layout and rank them by step time."),
    "fit": ("fit_cmd", "How many GPUs of each system fit in a hall, what binds, and what the hall does with a "
                       "workload."),
    "sensitivity": ("sensitivity_cmd", "Rank the assumed values by how much they move GPUs, time, facility power "
                                       "and $ (a tornado)."),
    "memory": ("memory_cmd", "Weight storage of a model: parameters x bits / 8, in GB (1e9) and GiB (2^30)."),
    "validate": ("validate_cmd", "Compare the models with published runs: training step times, serving "
                                 "throughput, HPC rates."),
    "catalog": ("catalog_cmd", "List the hardware catalog (accelerators, systems, switches, NICs) or the model "
                               "presets."),
    "supply": ("supply_cmd", "Hold suppliers' offers against the sized requirement: fits, gaps, substitutions, "
                             "open confirmations."),
    "profile": ("profile_cmd", "Time reading, parsing and arithmetic apart on this machine (CPU only)."),
    "calibrate": ("calibrate_cmd", "Calibrate the performance model on this machine's GPUs (PyTorch: the "
                                   "optional gpu extra)."),
    "node-check": ("node_check_cmd", "Check this node's Linux layer against the readiness checklist of a sized "
                                     "spec."),
    "schema": ("schema_cmd", "Print the JSON Schema of the intake or of the result document."),
    "serve": ("serve_cmd", "Serve the workbench: intake, layer view with pins, revisions, diffs and reports."),
    "save": ("save_cmd", "Compile FILE (with its pins) and save it as the next revision of PROJECT."),
    "revisions": ("revisions_cmd", "List a project's revisions (or, without PROJECT, the projects)."),
    "diff": ("diff_cmd", "Show what changed from REV_A to REV_B."),
    "cache": ("cache_cmd", "Show (or clear) the planner's on-disk search cache."),
}
_COMMAND_MODULES = {word: module for word, (module, _) in _COMMANDS.items()}


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        print(f"wkc {version('workload-compiler')}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                               help="print the version and exit")] = False,
) -> None:
    """Workload Compiler: size GPU infrastructure from the workload up."""


def _plain_flags() -> None:
    """Help lists a flag without a `<bool>` placeholder: a flag takes no value."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_bool_flag else shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


def _listing_only(argv: list[str]) -> bool:
    """`wkc`, `wkc --help`, `wkc --version` or a word that is no command: the list of commands is all
    that is shown, so their modules (and everything they import) need not load."""
    words = [a for a in argv[1:] if not a.startswith("-")]
    return Path(argv[0]).name == "wkc" and not (words and words[0] in _COMMANDS)


def _register(argv: list[str]) -> None:
    """Import only the invoked command's module (start-up time is part of every command's wall
    time); for the bare listing, each command by its name and summary alone, in click's plain
    format: rich's help renderer (rich, markdown-it) was 0.22 of its 0.36 s (issue 12's goal 0.3 s).
    The summary is the `short_help` too, so click wraps it instead of cutting it at 45 columns."""
    if _listing_only(argv):
        app.rich_markup_mode = None
        for word, (_, summary) in _COMMANDS.items():
            app.command(word, help=summary, short_help=summary, add_help_option=False)(_listed)
        return
    words = [a for a in argv[1:] if not a.startswith("-")]
    wanted = [_COMMAND_MODULES[words[0]]] if words and words[0] in _COMMAND_MODULES else list(
        _COMMAND_MODULES.values())
    for name in wanted:
        importlib.import_module(f"{__package__}.{name}").register(app)


def _listed() -> None:  # pragma: no cover - never run: a listed word loads its real command
    raise typer.Exit(1)


_register(sys.argv)
_plain_flags()


if __name__ == "__main__":
    app()
