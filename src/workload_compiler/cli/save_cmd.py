"""`wkc save PROJECT FILE [--set KEY=VALUE]... [--note TEXT]`: compile and append the next revision."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import out, user_errors
from .store_common import DbOption, open_store


def save_command(
    project: Annotated[str, typer.Argument(help="project name (created on its first save)")],
    file: Annotated[Path, typer.Argument(help="intake YAML")],
    pins: Annotated[list[str] | None, typer.Option("--set", help="pin KEY=VALUE (dotted intake key), repeatable")]
    = None,
    note: Annotated[str, typer.Option("--note", help="what this revision is for")] = "",
    db: DbOption = None,
) -> None:
    """Compile FILE (with its pins) and save it as the next revision of PROJECT."""
    from ..compile import recompile
    from ..intake.load import read_intake
    from ..intake.pins import parse_pin

    with user_errors():
        intake = read_intake(file)
        pin_map = dict(parse_pin(p) for p in pins or [])
        spec = recompile(file, pin_map)
        info = open_store(db).save(project, intake if isinstance(intake, dict) else {}, pin_map, spec, note)
    out.print(f"saved {info.project} {info.label} ({'feasible' if info.feasible else 'infeasible'}; "
              f"tool {info.tool_version}, catalog {info.catalog_version})", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("save")(save_command)
