"""`wkc schema intake|result`: the JSON Schema shipped with the package (generated from the models).

Point an editor at it for validation and completion of intake files:
`# yaml-language-server: $schema=intake.schema.json` after `wkc schema intake > intake.schema.json`.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import Annotated

import typer


class SchemaName(StrEnum):
    intake = "intake"
    result = "result"


def schema_command(
    name: Annotated[SchemaName, typer.Argument(help="intake (what you write) or result (what compile returns)")],
) -> None:
    """Print the JSON Schema of the intake or of the result document."""
    from ..schema_export import shipped

    sys.stdout.write(shipped(name.value))


def register(app: typer.Typer) -> None:
    app.command("schema")(schema_command)
