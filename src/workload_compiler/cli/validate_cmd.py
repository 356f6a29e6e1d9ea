"""`wkc validate [--json] [--group G] [--suite S] [--calibration DIR]`: the models against published runs.

Prints, per source group, each record's published and predicted value and the error, then the
group's MAPE and max error and the overall MAPE; lists the records it could not use and why.
It reports and exits 0 whatever the errors are (a miss is information, not a failure).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..errors import InputError, canonical_id, one_of
from ..report.layout import fitted, natural_width, packed
from ..units import counted
from ..validation.report import Report, Row, summarize, to_json
from ..validation.suites import SUITES, find_calibration_dir
from .common import out, user_errors


def _figure(x: float) -> str:
    """Four significant digits, thousands grouped: 3.528, 102.6, 3,803."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def _style(r: Row) -> str:
    # Colours at the accuracy goals: MAPE <= 5%, max <= 10% (reference/peers-training.md, goals).
    return "red" if abs(r.error) > 0.10 else "yellow" if abs(r.error) > 0.05 else ""


_HEADER = ("record", "model", "GPUs", "layout", "published", "predicted", "unit", "error %", "MFU %")


def _header(rows: list[Row]) -> tuple[str, ...]:
    # a run that ran and the model says does not fit is a bug: a column of its own when there is one
    return _HEADER + (("fits",) if any(not r.fits for r in rows) else ())


def _cells(r: Row, header: tuple[str, ...], styled: bool = False) -> list[str]:
    error = f"{r.error * 100:+.1f}"
    style = _style(r) if styled else ""
    cells = [r.id, r.model, f"{r.gpus:,}", r.layout, _figure(r.published), _figure(r.predicted), r.unit,
             f"[{style}]{error}[/]" if style else error, "" if r.mfu is None else f"{r.mfu * 100:.1f}"]
    if "fits" in header:
        cells.append("yes" if r.fits else ("[red]does not fit[/]" if styled else "does not fit"))
    return cells


def _group_table(rows: list[Row]) -> Table:
    """The group as one table, each cell on one line (when the terminal is wide enough)."""
    header = _header(rows)
    t = Table(show_header=True, header_style="bold")
    for col in header:
        t.add_column(col, no_wrap=True, justify="right" if col in ("GPUs", "published", "predicted", "error %",
                                                                   "MFU %") else "left")
    for r in rows:
        t.add_row(*_cells(r, header, styled=True))
    return t


def _group_entries(rows: list[Row], width: int) -> list[Text]:
    """The group as entries: the record and its error on a line, the rest packed below it at spaces
    (a terminal too narrow for the table: no record id or number is split)."""
    out: list[Text] = []
    for r in rows:
        head = Text("• ")
        head.append(r.id, style="bold")
        head.append("  ")
        head.append(f"{r.error * 100:+.1f}%", style=_style(r))
        unit = f" {r.unit}" if r.unit else ""
        parts = [r.model, counted(r.gpus, "GPU"), r.layout,
                 f"published {_figure(r.published)}{unit}", f"predicted {_figure(r.predicted)}{unit}"]
        parts += [f"MFU {r.mfu * 100:.1f}%"] if r.mfu is not None else []
        parts += [] if r.fits else [f"does not fit ({r.binding})" if r.binding else "does not fit"]
        out += [head, *(Text(line) for line in packed([p for p in parts if p], width))]
    return out


def _summary_table(report: Report) -> Table:
    t = Table(show_header=True, header_style="bold")
    for col in ("group", "records", "MAPE %", "max %"):
        t.add_column(col, no_wrap=True, justify="left" if col == "group" else "right")
    for name, g in report.groups.items():
        t.add_row(name, f"{len(g.rows):,}", f"{g.mape:.1f}", f"{g.max_abs_error:.1f}")
    return t


def _print(report: Report, quantity: str) -> None:
    console = out.get()
    width = console.width
    for name, g in report.groups.items():
        console.print(f"[bold]{name}[/]: MAPE {g.mape:.1f}%, max {g.max_abs_error:.1f}% ({len(g.rows)} records)",
                  highlight=False)
        header = _header(g.rows)
        if natural_width(header, [_cells(r, header) for r in g.rows]) <= width:
            console.print(_group_table(g.rows))
        else:
            console.print(Group(*_group_entries(g.rows, width)))
        console.print()
    if report.skipped:
        console.print(f"[bold]Skipped[/] ({len(report.skipped)} records)", highlight=False)
        console.print(fitted(("record", "reason"), [(s.id, s.reason) for s in report.skipped], width))
        console.print()
    console.print(_summary_table(report))
    mfu_note = ("; MFU is predicted, against the dense peak of the run's GEMM precision"
                if quantity == "step_time_s" else "")
    console.print(f"Compared: {quantity} (predicted / published - 1{mfu_note})", highlight=False)
    console.print(f"[bold]Overall MAPE {report.overall_mape:.2f}%[/], max {report.overall_max_abs_error:.1f}% "
              f"over {len(report.rows)} records", highlight=False)
    misfits = [r.id for r in report.rows if not r.fits]
    if misfits:
        console.print(f"[red]{len(misfits)} runs that ran are answered 'does not fit'[/] (a memory or rule bug): "
                  + ", ".join(misfits), highlight=False)


def _print_hpc_summary(summary: dict[str, Any]) -> None:
    """In-sample and leave-one-GPU-out MAPE per GPU family and per application group."""
    for by, title in (("family", "GPU family"), ("group", "application group")):
        t = Table(title=f"HPC: in sample vs leave-one-GPU-out, by {title}", title_justify="left")
        for col in (title, "in sample MAPE %", "leave-one-GPU-out MAPE %"):
            t.add_column(col, justify="left" if col == title else "right")
        for name, mape in summary[f"in_sample_by_{by}"].items():
            logo = summary[f"leave_one_gpu_out_by_{by}"].get(name)
            t.add_row(name, f"{mape * 100:.1f}", "" if logo is None else f"{logo * 100:.1f}")
        out.print(t)
    out.print(f"[bold]Leave-one-GPU-out MAPE {summary['leave_one_gpu_out_mape'] * 100:.2f}%[/], max "
              f"{summary['leave_one_gpu_out_max'] * 100:.1f}% (each GPU family predicted by constants refitted "
              "without it, from the priors of hpc/fitted.py)", highlight=False)


def validate(
    as_json: Annotated[bool, typer.Option("--json", help="emit JSON on stdout")] = False,
    group: Annotated[str | None, typer.Option("--group", help="only this source group")] = None,
    suite: Annotated[str, typer.Option("--suite", help=f"one of: {', '.join(SUITES)}")] = "training",
    calibration: Annotated[Path | None, typer.Option(
        "--calibration", help="calibration directory (default: $WKC_CALIBRATION_DIR, else "
        "../shared/calibration beside the repository)")] = None,
    leave_one_gpu_out: Annotated[bool, typer.Option(
        "--leave-one-gpu-out", help="hpc suite: also refit without each GPU family and predict it")] = False,
) -> None:
    """Compare the models with published runs: training step times, serving throughput, HPC rates."""
    with user_errors():
        suite = (canonical_id(suite) or "").replace("_", "-")     # 'Time_to_Train' as people write it
        if suite not in SUITES:
            raise InputError("--suite", suite, one_of(suite, SUITES))
        if leave_one_gpu_out and suite != "hpc":
            raise InputError("--leave-one-gpu-out", suite, "only with --suite hpc")
        summary: dict[str, Any] | None = None
        if leave_one_gpu_out:
            from ..validation.hpc_records import hpc_validation
            v = hpc_validation(find_calibration_dir(calibration), with_leave_one_gpu_out=True)
            rows, skipped, summary = v.rows, v.skipped, v.summary()
        else:
            rows, skipped = SUITES[suite](find_calibration_dir(calibration))
        groups = sorted({r.group for r in rows} | {s.group for s in skipped})
        if group is not None and group not in groups:
            raise InputError("--group", group, one_of(group, groups))
        report = summarize(rows, skipped, group)
        if as_json:
            doc = to_json(report) | ({"hpc_summary": summary} if summary is not None else {})
            print(json.dumps(doc, indent=2, sort_keys=True))  # stdout is data: no markup
        else:
            quantities = {r.quantity for r in rows}
            _print(report, quantities.pop() if len(quantities) == 1 else
                   "each record's own published figure (the rows' quantity)")
            if summary is not None:
                _print_hpc_summary(summary)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
