"""`wkc compile FILE`: the six-layer specification of one workload (terminal, JSON or Markdown).

`--set KEY=VALUE` pins a dotted intake key and recompiles ("select a layer, pin a value"): the
layers downstream of the pin follow, what it breaks upstream comes back as a collision.
`--sensitivity` adds the tornado over the assumed values (as `wkc sensitivity`).

Exit codes: 0 a result (meets its target, has none, or misses one: the miss is a warning on
stderr and the report's first line), 3 infeasible, 2 bad input; `--strict` turns a missed target
into exit 3 as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import err, out, print_json, search_cache_off, user_errors
from .progress import progress_after


def compile_command(
    file: Annotated[Path, typer.Argument(help="intake YAML (kind: training | inference | hpc | generic)")],
    as_json: Annotated[bool, typer.Option("--json", help="print the result document as JSON")] = False,
    as_md: Annotated[bool, typer.Option("--md", help="print the report as Markdown")] = False,
    pins: Annotated[list[str] | None, typer.Option(
        "--set", help="pin a dotted intake key and recompile, e.g. --set facility.power=1.5MW "
                      "--set compute.accelerator=b200 (repeatable; KEY=null unpins)")] = None,
    sensitivity: Annotated[bool, typer.Option(
        "--sensitivity", help="add the tornado over the assumed values (see wkc sensitivity)")] = False,
    detail: Annotated[bool, typer.Option("--detail", help="show every value with its formula or reason, not "
                                                          "only the headline values")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="exit 3 when a target is missed, not only when "
                                                          "the workload is infeasible")] = False,
    html: Annotated[Path | None, typer.Option("--html", help="also write the report as one self-contained HTML "
                                                             "file (SVG plots inline)", dir_okay=False)] = None,
    pdf: Annotated[Path | None, typer.Option("--pdf", help="also write the report as PDF (from the same HTML)",
                                             dir_okay=False)] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="run every planner search, neither reading nor "
                                                              "keeping searches on disk (see wkc cache)")] = False,
) -> None:
    """Compile a workload into its six-layer system specification."""
    from ..compile import compile_workload, recompile
    from ..intake.pins import parse_pin
    from ..spine.finite import make_finite
    from ..spine.verdict import verdict

    with user_errors(), search_cache_off(no_cache), progress_after("compiling"):
        spec = recompile(file, [parse_pin(p) for p in pins]) if pins else compile_workload(file)
        if sensitivity:
            from ..sizing.sensitivity import analyse
            spec.sensitivity = analyse(spec)
            make_finite(spec)
        if html is not None or pdf is not None:
            from .report_files import write_reports  # matplotlib, Jinja2, WeasyPrint load only when asked for
            write_reports(spec, file, html=html, pdf=pdf)
    v = verdict(spec)
    if as_json:
        print_json(spec.model_dump(mode="json"))
    elif as_md:
        from ..report.markdown import render_markdown  # the renderers load only when asked for
        print(render_markdown(spec, detail=detail))
    else:
        from ..report.terminal import render
        render(spec, out.get(), detail=detail)
    if v.code in ("misses target", "target open"):
        err.print(f"warning: {v.text}", markup=False, highlight=False)
    if v.code == "infeasible" or (strict and v.code == "misses target"):
        raise typer.Exit(3)


def register(app: typer.Typer) -> None:
    app.command("compile")(compile_command)
