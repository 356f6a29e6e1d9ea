"""`wkc compile FILE`: the six-layer specification of one workload (terminal, JSON or Markdown).

Exit codes: 0 a result (meets its target, has none, or misses one: the miss is a warning on
stderr and the report's first line), 3 infeasible, 2 bad input; `--strict` turns a missed target
into exit 3 as well.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from .common import err, out, user_errors
from .progress import progress_after


def compile_command(
    file: Annotated[Path, typer.Argument(help="intake YAML (kind: training | inference | hpc)")],
    as_json: Annotated[bool, typer.Option("--json", help="print the result document as JSON")] = False,
    as_md: Annotated[bool, typer.Option("--md", help="print the report as Markdown")] = False,
    detail: Annotated[bool, typer.Option("--detail", help="show every value with its formula or reason, not "
                                                          "only the headline values")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="exit 3 when a target is missed, not only when "
                                                          "the workload is infeasible")] = False,
) -> None:
    """Compile a workload into its six-layer system specification."""
    from ..compile import compile_workload
    from ..spine.verdict import verdict

    with user_errors(), progress_after("compiling"):
        spec = compile_workload(file)
    v = verdict(spec)
    if as_json:
        print(json.dumps(spec.model_dump(mode="json"), indent=2, sort_keys=False, allow_nan=False))
    elif as_md:
        from ..report.markdown import render_markdown  # the renderers load only when asked for
        print(render_markdown(spec, detail=detail))
    else:
        from ..report.terminal import render
        render(spec, out.get(), detail=detail)
    if v.code == "misses target":
        err.print(f"warning: {v.text}", markup=False, highlight=False)
    if v.code == "infeasible" or (strict and v.code == "misses target"):
        raise typer.Exit(3)


def register(app: typer.Typer) -> None:
    app.command("compile")(compile_command)
