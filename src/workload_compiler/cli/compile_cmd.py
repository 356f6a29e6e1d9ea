"""`wkc compile FILE`: the six-layer specification of one workload (terminal, JSON or Markdown).

`--set KEY=VALUE` pins a dotted intake key and recompiles ("select a layer, pin a value"): the
layers downstream of the pin follow, what it breaks upstream comes back as a collision.
`--sensitivity` adds the tornado over the assumed values (as `wkc sensitivity`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..compile import compile_workload, recompile
from ..intake.load import load_workload
from ..intake.pins import parse_pin
from .common import out, user_errors


def compile_command(
    file: Annotated[Path, typer.Argument(help="intake YAML (kind: training | inference | hpc)")],
    as_json: Annotated[bool, typer.Option("--json", help="print the result document as JSON")] = False,
    as_md: Annotated[bool, typer.Option("--md", help="print the report as Markdown")] = False,
    pins: Annotated[list[str] | None, typer.Option(
        "--set", help="pin a dotted intake key and recompile, e.g. --set facility.power=1.5MW "
                      "--set compute.accelerator=b200 (repeatable; KEY=null unpins)")] = None,
    sensitivity: Annotated[bool, typer.Option(
        "--sensitivity", help="add the tornado over the assumed values (see wkc sensitivity)")] = False,
    html: Annotated[Path | None, typer.Option("--html", help="also write the report as one self-contained HTML "
                                                             "file (SVG plots inline)", dir_okay=False)] = None,
    pdf: Annotated[Path | None, typer.Option("--pdf", help="also write the report as PDF (from the same HTML)",
                                             dir_okay=False)] = None,
) -> None:
    """Compile a workload into its six-layer system specification."""
    with user_errors():
        spec = recompile(file, [parse_pin(p) for p in pins]) if pins else compile_workload(load_workload(file))
        if sensitivity:
            from ..sizing.sensitivity import analyse
            spec.sensitivity = analyse(spec)
        if html is not None or pdf is not None:
            from .report_files import write_reports  # matplotlib, Jinja2, WeasyPrint load only when asked for
            write_reports(spec, file, html=html, pdf=pdf)
    if as_json:
        print(json.dumps(spec.model_dump(mode="json"), indent=2, sort_keys=False))
    elif as_md:
        from ..report.markdown import render_markdown  # the renderers load only when asked for
        print(render_markdown(spec))
    else:
        from ..report.terminal import render
        render(spec, out)
    if not spec.feasible:
        raise typer.Exit(3)


def register(app: typer.Typer) -> None:
    app.command("compile")(compile_command)
