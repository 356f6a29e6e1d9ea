"""`wkc calibrate`: GEMM TFLOP/s per precision, HBM bandwidth and (with several GPUs) NCCL bus
bandwidth on this machine's GPUs, fitted to the performance model's forms and written as a
calibration file for that accelerator id. `compile` uses it for that accelerator only (the intake's
`measured.calibration_dir` or $WKC_MEASURED_DIR). Without a GPU it says so and writes nothing.
`--from-raw FILE` re-runs the analysis on a recorded run (no GPU needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
import yaml

from ..errors import InputError
from .common import err, out, user_errors

if TYPE_CHECKING:
    from ..measure.calibration import CalibrationFile, RawRun


def calibrate_command(
    accelerator: Annotated[str | None, typer.Option("--accelerator", help="catalog accelerator id (default: "
                                                    "from the device name)")] = None,
    system: Annotated[str | None, typer.Option("--system", help="catalog system id of this node (binds the "
                                               "bus bandwidth to a node type)")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="directory for the calibration file")] = Path("calibration"),
    from_raw: Annotated[Path | None, typer.Option("--from-raw", help="analyze a recorded raw run instead of "
                                                  "running on a GPU")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="a smaller grid (minutes less, a looser fit)")] = False,
    into: Annotated[Path | None, typer.Option("--into", help="also merge the values into this intake's "
                                              "`measured` block")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the calibration as JSON")] = False,
) -> None:
    """Calibrate the performance model on this machine's GPUs (PyTorch: the optional gpu extra)."""
    from ..measure.gpu_bench import gpu_status
    with user_errors():
        if from_raw is not None:
            raw = _read_raw(from_raw)
        else:
            ok, found = gpu_status()
            if not ok:
                _no_gpu(found, as_json)
                return
            raw = _run(found, quick)
        cal = _analyze(raw, accelerator, system)
        written = _write(cal, raw, out_dir, write_raw=from_raw is None)
        if into is not None:
            from ..measure.sheet import write_into
            write_into(into, cal.values)
            written.append(into)
    if as_json:
        print(json.dumps({"gpu": True, "written": [str(p) for p in written],
                          "calibration": cal.model_dump(mode="json", by_alias=True)}, indent=2))
    else:
        _render(cal, written)


def _no_gpu(reason: str, as_json: bool) -> None:
    message = (f"No GPU to calibrate: {reason}. Nothing was measured and nothing was written; `compile` "
               "keeps the fitted constants (perf/fitted.py). Run `wkc calibrate` on the GPU node, or "
               "`wkc calibrate --from-raw FILE` to analyze a recorded run.")
    if as_json:
        print(json.dumps({"gpu": False, "reason": reason, "written": []}, indent=2))
    else:
        out.print(message, highlight=False, markup=False, soft_wrap=True)


def _read_raw(path: Path) -> RawRun:
    from pydantic import ValidationError

    from ..measure.calibration import RawRun
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return RawRun.model_validate(data)
    except FileNotFoundError:
        raise InputError("--from-raw", str(path), "an existing raw calibration file") from None
    except (yaml.YAMLError, ValidationError) as exc:
        raise InputError("--from-raw", str(path), f"a raw run (schema wkc-calibration-raw/1): "
                         f"{str(exc).splitlines()[0]}") from None


def _run(found: str, quick: bool) -> RawRun:
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from ..measure.gpu_bench import run_calibration
    from ..measure.machine import wkc_version
    err.print(f"calibrating {found}", highlight=False)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=err,
                  transient=True) as bar:
        task = bar.add_task("starting", total=None)
        return run_calibration(tool=f"wkc calibrate {wkc_version()}", quick=quick,
                               tick=lambda what: bar.update(task, description=what))


def _analyze(raw: RawRun, accelerator: str | None, system: str | None) -> CalibrationFile:
    from ..catalog.loader import load_catalog
    from ..measure.calibration import analyze
    from ..measure.devices import DEVICE_NAMES, accelerator_for
    acc = accelerator or accelerator_for(raw.device.name)
    if acc is None:
        raise InputError("--accelerator", None, f"a catalog accelerator id: the device name {raw.device.name!r} "
                         f"is not in the table of known names ({', '.join(sorted(DEVICE_NAMES))})")
    return analyze(raw, load_catalog(), acc, system)


def _write(cal: CalibrationFile, raw: RawRun, out_dir: Path, *, write_raw: bool) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{cal.accelerator}.yaml"
    path.write_text(yaml.safe_dump(cal.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=False),
                    encoding="utf-8")
    written = [path]
    if write_raw:
        raw_path = out_dir / f"{cal.accelerator}.raw.yaml"
        raw_path.write_text(yaml.safe_dump(raw.model_dump(mode="json", by_alias=True), sort_keys=False),
                            encoding="utf-8")
        written.append(raw_path)
    return written


def _render(cal: CalibrationFile, written: list[Path]) -> None:
    from rich.table import Table

    from ..perf.efficiency import HBM_EFFICIENCY
    from ..perf.fitted import FITTED
    where = f" in {cal.system}" if cal.system else ""
    sample = " [yellow](synthetic sample)[/]" if cal.synthetic else ""
    out.print(f"[bold]{cal.device.count} x {cal.device.name}[/] -> {cal.accelerator}{where}{sample}")
    table = Table(title="GEMM: t(F) = F / (e_max x peak) + t0")
    for col in ("precision", "dense peak", "best", "e_max", "t0", "fit MAPE", "fitted model"):
        table.add_column(col)
    for p, g in cal.gemm.items():
        table.add_row(p, f"{g.peak_flops / 1e12:.0f} TFLOP/s", f"{g.best_flops_per_s / 1e12:.0f} TFLOP/s",
                      f"{g.e_max:.3f}", f"{g.kernel_overhead_s * 1e6:.1f} us", f"{g.mape:.1%}",
                      f"e_max {FITTED.gemm_e_max:.3f}, t0 {FITTED.gemm_kernel_overhead_s * 1e6:.1f} us")
    out.print(table)
    if cal.hbm is not None:
        frac = f" ({cal.hbm.fraction_of_datasheet:.1%} of the datasheet)" if cal.hbm.fraction_of_datasheet else ""
        out.print(f"HBM stream triad: {cal.hbm.bytes_per_s / 1e12:.3f} TB/s{frac}; the model assumes "
                  f"{HBM_EFFICIENCY:.0%} (perf/efficiency.py)", highlight=False)
    for name, c in cal.collectives.items():
        out.print(f"NCCL {name} over {c.ranks} GPUs: bus bandwidth {c.bytes_per_s / 1e9:.0f} GB/s, "
                  f"latency {c.latency_s * 1e6:.0f} us (fit MAPE {c.mape:.1%})", highlight=False)
    for note in cal.notes:
        out.print(f"[yellow]note:[/] {note}", highlight=False)
    out.print("written: " + ", ".join(str(p) for p in written) + f" ({len(cal.values)} measured values for "
              f"{cal.accelerator}; compile reads them from measured.calibration_dir or $WKC_MEASURED_DIR)",
              highlight=False)


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_command)
