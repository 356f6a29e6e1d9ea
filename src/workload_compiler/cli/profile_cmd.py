"""`wkc profile`: the CPU profiling exercise (seed 003). Generates (or reads, `--input DIR`) a data
set of many small JSON, CSV and image records, times read, parse and compute apart with repeats,
and reports the spread and the machine. `--into FILE` writes the measured values, bound to this
CPU model, into an intake or workload sheet's `measured` block."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import InputError
from ..paths import existing_directory
from ..units import format_bytes_decimal, parse_bytes
from .common import err, out, user_errors

if TYPE_CHECKING:
    from ..measure.profile import ProfileResult

DEFAULT_SIZE = "32MB"
DEFAULT_REPEATS = 5


def _formats(text: str) -> list[str]:
    from ..measure.dataset import FORMATS
    chosen = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise InputError("--format", text, "a comma-separated list of: " + ", ".join(FORMATS))
    return list(dict.fromkeys(chosen))


def profile_command(
    size: Annotated[str, typer.Option("--size", help="data set size to generate, e.g. 32MB, 200MB")] = DEFAULT_SIZE,
    formats: Annotated[str, typer.Option("--format", help="json,csv,image (any of them)")] = "json,csv,image",
    input_dir: Annotated[Path | None, typer.Option("--input", help="profile the files of this directory "
                                                   "(.jsonl/.json, .csv, .ppm) instead of generating")] = None,
    workdir: Annotated[Path | None, typer.Option("--workdir", help="where to generate the data set (the "
                                                 "storage it measures); default: the system temp dir")] = None,
    repeats: Annotated[int, typer.Option("--repeats", min=2, max=100, help="timed repeats of each stage")] = (
        DEFAULT_REPEATS),
    seed: Annotated[int, typer.Option("--seed", help="seed of the generated records")] = 0,
    keep: Annotated[bool, typer.Option("--keep", help="keep the generated data set")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the result as JSON")] = False,
    into: Annotated[Path | None, typer.Option("--into", help="merge the measured values into this intake / "
                                              "workload sheet's `measured` block (a sheet field takes one "
                                              "with `measured: KEY`)")] = None,
) -> None:
    """Time reading, parsing and arithmetic apart on this machine (CPU only)."""
    with user_errors():
        if into is not None and into.exists():   # a file --into cannot take fails before the run, not after
            from ..measure.sheet import merged_block
            merged_block(into.read_text(encoding="utf-8"), {})
        result = _run(size, formats, input_dir, workdir, repeats, seed, keep)
        if into is not None:
            from ..measure.sheet import write_into
            existed = write_into(into, result.values)
            err.print(f"{'merged' if existed else 'wrote'} {len(result.values)} measured values "
                      f"(machine: cpu {result.machine.cpu_model!r}) into {into}", highlight=False)
            err.print("a sheet field takes one by its key, e.g. pipeline.decode_rate_per_core: {measured: "
                      f"{next(iter(sorted(result.values)), 'KEY')}}}; it binds to compute.host_cpu = "
                      f"{result.machine.cpu_model!r}", highlight=False)
    if as_json:
        print(json.dumps(result.model_dump(mode="json", by_alias=True), indent=2))
    else:
        from ..report.profile_view import render_profile
        render_profile(result, out.get())


def _run(size: str, formats: str, input_dir: Path | None, workdir: Path | None, repeats: int, seed: int,
         keep: bool) -> ProfileResult:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..measure.dataset import find_dataset, write_dataset
    from ..measure.machine import probe_machine, wkc_version
    from ..measure.profile import dataset_info, run_profile
    tool = f"wkc profile {wkc_version()}"
    fmts = _formats(formats)
    size_bytes = parse_bytes(size, "--size")
    if input_dir is None and not 1e5 <= size_bytes <= 1e11:
        raise InputError("--size", size, "between 100kB and 100GB")
    if workdir is not None:
        existing_directory(workdir, "--workdir", "an existing directory")
    root = input_dir or Path(tempfile.mkdtemp(prefix="wkc-profile-", dir=workdir))
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=err.get(), transient=True)
    try:
        with bar:
            if input_dir is None:
                task = bar.add_task(f"generating {format_bytes_decimal(size_bytes)}", total=None)
                files = write_dataset(root, size_bytes, fmts, seed, tick=lambda: bar.advance(task))
                bar.update(task, visible=False)
            else:
                files = [f for f in find_dataset(input_dir) if f.fmt in fmts]
                if not files:
                    raise InputError("--format", formats, "formats present in --input")
            timing = bar.add_task("timing read / parse / compute", total=repeats * len(files))
            info = dataset_info(files, "input" if input_dir else "generated", root, None if input_dir else seed)
            result = run_profile(files, probe_machine(root), repeats=repeats, dataset=info, tool=tool,
                                 tick=lambda what: bar.update(timing, advance=1, description=what))
    finally:
        if input_dir is None and not keep:
            shutil.rmtree(root, ignore_errors=True)
    return result


def register(app: typer.Typer) -> None:
    app.command("profile")(profile_command)
