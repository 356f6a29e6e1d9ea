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
from rich.table import Table

from ..errors import InputError
from ..validation.report import Report, Row, summarize, to_json
from ..validation.suites import SUITES, find_calibration_dir
from .common import out, user_errors


def _group_table(name: str, rows: list[Row], mape: float, max_err: float) -> Table:
    t = Table(title=f"{name}: MAPE {mape:.1f}%, max {max_err:.1f}% ({len(rows)} records)",
              title_justify="left")
    for col in ("record", "model", "GPUs", "layout"):
        t.add_column(col, overflow="fold", justify="right" if col == "GPUs" else "left")
    for col in ("published", "predicted", "error %", "MFU %"):
        t.add_column(col, justify="right")
    if any(not r.fits for r in rows):
        t.add_column("fits")
    for r in rows:
        # Colours at the accuracy goals: MAPE <= 5%, max <= 10% (reference/peers-training.md, goals).
        style = "red" if abs(r.error) > 0.10 else "yellow" if abs(r.error) > 0.05 else ""
        cells = [r.id, r.model, f"{r.gpus:,}", r.layout, f"{r.published:.3f}", f"{r.predicted:.3f}",
                 f"[{style}]{r.error * 100:+.1f}[/]" if style else f"{r.error * 100:+.1f}",
                 "" if r.mfu is None else f"{r.mfu * 100:.1f}"]
        if any(not x.fits for x in rows):     # a run that ran and the model says does not fit: a bug
            cells.append("yes" if r.fits else "[red]does not fit[/]")
        t.add_row(*cells)
    return t


def _print(report: Report, quantity: str) -> None:
    for name, g in report.groups.items():
        out.print(_group_table(name, g.rows, g.mape, g.max_abs_error))
    if report.skipped:
        t = Table(title=f"Skipped ({len(report.skipped)} records)", title_justify="left")
        t.add_column("record")
        t.add_column("reason")
        for s in report.skipped:
            t.add_row(s.id, s.reason)
        out.print(t)
    mfu_note = ("; MFU is predicted, against the dense peak of the run's GEMM precision"
                if quantity == "step_time_s" else "")
    out.print(f"Compared: {quantity} (predicted / published - 1{mfu_note})", highlight=False)
    out.print(f"[bold]Overall MAPE {report.overall_mape:.2f}%[/], max {report.overall_max_abs_error:.1f}% "
              f"over {len(report.rows)} records", highlight=False)
    misfits = [r.id for r in report.rows if not r.fits]
    if misfits:
        out.print(f"[red]{len(misfits)} runs that ran are answered 'does not fit'[/] (a memory or rule bug): "
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
        if suite not in SUITES:
            raise InputError("--suite", suite, f"one of: {', '.join(SUITES)}")
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
            raise InputError("--group", group, f"one of: {', '.join(groups)}")
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
