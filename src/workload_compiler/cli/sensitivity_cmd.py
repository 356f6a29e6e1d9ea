"""`wkc sensitivity FILE`: which assumption moves the answer — the change in GPUs, time (or
replicas), facility power and $ as each assumed value moves across its plausible range, ranked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..compile import compile_workload, recompile
from ..intake.load import load_workload
from ..intake.pins import parse_pin
from .common import out, user_errors


def sensitivity_command(
    file: Annotated[Path, typer.Argument(help="intake YAML (kind: training | inference | hpc)")],
    as_json: Annotated[bool, typer.Option("--json", help="print the sensitivity section as JSON")] = False,
    pins: Annotated[list[str] | None, typer.Option("--set", help="pin a dotted intake key first (repeatable)")]
    = None,
    top: Annotated[int | None, typer.Option(min=1, help="show the N assumptions that move the answer most")] = None,
) -> None:
    """Rank the assumed values by how much they move GPUs, time, facility power and $ (a tornado)."""
    from ..sizing.sensitivity import analyse
    with user_errors():
        spec = recompile(file, [parse_pin(p) for p in pins]) if pins else compile_workload(load_workload(file))
        section = analyse(spec)
    if top is not None:
        section.rows = section.rows[:top]
    if as_json:
        print(json.dumps(section.model_dump(mode="json"), indent=2))
        return
    from ..report.sizing_view import terminal_sensitivity
    spec.sensitivity = section
    console = out.get()
    panel = terminal_sensitivity(spec, console.width)
    if panel is not None:
        console.print(panel)


def register(app: typer.Typer) -> None:
    app.command("sensitivity")(sensitivity_command)
