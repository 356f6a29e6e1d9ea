"""`wkc fit`: watts to work — what fits in a hall, what binds, and what the hall does with a workload:
the time to train a model (`--model`, `--tokens`), the tokens/s it serves at an SLO (`--model` with
`--ttft`/`--tpot`/`--availability`), or any intake placed in the hall (`--intake FILE`: training,
inference or HPC, e.g. the time to solution of a simulation)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from ..catalog.loader import load_catalog
from ..errors import InputError
from ..facility import Hall
from ..intake.common import ModelIntake
from ..intake.limits import DEADLINE, MAX_DURATION, MIN_DEADLINE
from ..intake.load import read_intake
from ..intake.training import TrainingRun
from ..report.format import format_quantity
from ..report.layout import fitted
from ..spine.reverse import DEFAULT_SYSTEMS, fit_model_in_hall
from ..spine.reverse_intake import fit_intake_in_hall
from ..units import parse_count, parse_duration
from .common import out, print_json, user_errors


def serving_intake(model: str, ttft: str | None, tpot: str | None, availability: str | None,
                   input_tokens: str | None, output_tokens: str | None, weights: str | None,
                   kv_cache_dtype: str | None) -> dict[str, Any]:
    """An inference intake from the fit flags: no request rate, so the fleet fills the hall."""
    serving: dict[str, Any] = {"scenario": "online"}
    for key, value in (("weights", weights), ("kv_cache_dtype", kv_cache_dtype), ("availability", availability),
                       ("input_tokens", input_tokens), ("output_tokens", output_tokens)):
        if value is not None:
            serving[key] = value
    if ttft is not None:
        serving["ttft"] = {"p99": ttft}
    if tpot is not None:
        serving["tpot"] = {"p99": tpot}
    return {"kind": "inference", "name": f"{model} in the hall", "model": {"preset": model}, "serving": serving}


# model fields -> this command's options, so an error names what the user typed
FLAGS = {"power_w": "--power", "hall.power_w": "--power", "rack_power_w": "--rack-power",
         "hall.rack_power_w": "--rack-power", "power_basis": "--basis", "cooling": "--cooling",
         "hall.cooling": "--cooling", "pue": "--pue", "hall.pue": "--pue", "floor_area_m2": "--floor-area",
         "hall.floor_area_m2": "--floor-area", "gpu": "--gpu", "compute.accelerator": "--gpu", "tokens": "--tokens",
         "seq_len": "--seq-len", "global_batch_size": "--batch", "precision": "--precision", "model": "--model",
         "model.preset": "--model", "training.precision": "--precision", "training.seq_len": "--seq-len",
         "training.global_batch_size": "--batch", "training.tokens": "--tokens", "serving.ttft": "--ttft",
         "serving.tpot": "--tpot", "serving.availability": "--availability", "serving.input_tokens": "--input-tokens",
         "serving.output_tokens": "--output-tokens", "serving.weights": "--weights",
         "serving.kv_cache_dtype": "--kv-cache-dtype"}


def _deadline_s(text: str | None) -> float | None:
    """--deadline, at least a minute as target.time_to_train (intake/limits.py MIN_DEADLINE)."""
    if text is None:
        return None
    seconds = parse_duration(text, "--deadline")
    if not MIN_DEADLINE <= seconds <= MAX_DURATION:
        raise InputError("--deadline", text, f"at least a minute ({DEADLINE}), at most 100 years")
    return seconds


def fit_command(
    power: Annotated[str, typer.Option(help="power the hall delivers, e.g. 2MW")],
    rack_power: Annotated[str, typer.Option(help="per-rack limit, e.g. 40kW")],
    cooling: Annotated[str, typer.Option(help="air | rdhx | dlc | immersion")] = "air",
    basis: Annotated[str, typer.Option(help="the power figure is 'facility' (with PUE) or 'it'")] = "facility",
    pue: Annotated[float | None, typer.Option(help="PUE (default by cooling type, an assumption)")] = None,
    floor_area: Annotated[float | None, typer.Option(help="floor area in m²")] = None,
    gpu: Annotated[str | None, typer.Option(help="only systems with this accelerator id")] = None,
    model: Annotated[str | None, typer.Option(help="a model preset to train (or, with serving targets, serve)")]
    = None,
    tokens: Annotated[str | None, typer.Option(help="training tokens, e.g. 15T")] = None,
    seq_len: Annotated[int | None, typer.Option(help="sequence length")] = None,
    batch: Annotated[int | None, typer.Option(help="global batch size (sequences)")] = None,
    precision: Annotated[str | None, typer.Option(help="bf16 | fp8 | ...")] = None,
    deadline: Annotated[str | None, typer.Option(help="e.g. 30d: report the tokens trainable by then")] = None,
    ttft: Annotated[str | None, typer.Option(help="serve --model at this p99 TTFT, e.g. 500ms")] = None,
    tpot: Annotated[str | None, typer.Option(help="serve --model at this p99 TPOT, e.g. 50ms")] = None,
    availability: Annotated[str | None, typer.Option(help="serving spares: n+1, n+2 or none")] = None,
    input_tokens: Annotated[str | None, typer.Option(help="serving: prompt tokens per request")] = None,
    output_tokens: Annotated[str | None, typer.Option(help="serving: output tokens per request")] = None,
    weights: Annotated[str | None, typer.Option(help="serving: bf16 | fp8 | int4 | ...")] = None,
    kv_cache_dtype: Annotated[str | None, typer.Option(help="serving: bf16 | fp8 | ...")] = None,
    intake: Annotated[Path | None, typer.Option(help="place this intake (training, inference or HPC) in the hall")]
    = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the rows as JSON")] = False,
) -> None:
    """How many GPUs of each system fit in a hall, what binds, and what the hall does with a workload."""
    serving = any(v is not None for v in (ttft, tpot, availability, input_tokens, output_tokens, weights,
                                          kv_cache_dtype))
    with user_errors(FLAGS):
        catalog = load_catalog()
        hall = Hall(power_w=power, power_basis=basis, rack_power_w=rack_power, cooling=cooling,
                    floor_area_m2=floor_area, pue=pue, gpu=catalog.accelerator(gpu).id if gpu else None)
        if intake is not None or (serving and model):
            data = read_intake(intake) if intake is not None else serving_intake(
                str(model), ttft, tpot, availability, input_tokens, output_tokens, weights, kv_cache_dtype)
            rows = fit_intake_in_hall(hall, data, catalog)
        else:
            run = TrainingRun(tokens=parse_count(tokens, "--tokens") if tokens else None, seq_len=seq_len,
                              global_batch_size=batch, precision=precision)
            rows = fit_model_in_hall(hall, catalog, systems=DEFAULT_SYSTEMS,
                                     model=ModelIntake(preset=model) if model else None, training=run,
                                     deadline_s=_deadline_s(deadline))
    if as_json:
        print_json({"hall": hall.model_dump(mode="json"), "systems": rows})
        return
    _table(hall, rows, model, deadline)


def _table(hall: Hall, rows: list[dict[str, Any]], model: str | None, deadline: str | None) -> None:
    """One row a system: a table where the terminal is wide enough, else one block a system (no
    header split into letters at 80 columns; report/layout.py `fitted`)."""
    title = (f"Hall: {format_quantity(hall.power_w, 'W')} ({hall.power_basis}), "
             f"{format_quantity(hall.rack_power_w, 'W')}/rack, {hall.cooling}")
    answers = any("answer" in r for r in rows)
    cols = ["system", "GPUs", "racks", "IT power", "facility power", "binds"]
    if answers:
        cols.append("in this hall")
    elif model:
        cols += ["trains on", "time to train", "MFU"] + (["tokens / model size by deadline"] if deadline else [])
    cells_of = []
    for r in rows:
        fits = bool(r["gpus"])     # a system that does not fit has no power to show ('0.00 W' read as a figure)
        cells = [r["system"], format_quantity(r["gpus"], "count"), format_quantity(r["racks"], "count"),
                 format_quantity(r["it_power_w"], "W") if fits else "—",
                 format_quantity(r["facility_power_w"], "W") if fits else "—",
                 str(r["binding"])]
        if answers:
            cells.append(str(r.get("answer", "—")))
        elif model:
            cells += [format_quantity(r.get("train_gpus"), "count"),
                      format_quantity(r.get("time_to_train_s"), "s") if r.get("time_to_train_s")
                      else str(r.get("train_binding", "—")), format_quantity(r.get("mfu"), "fraction")]
            if deadline:
                cells.append(f"{format_quantity(r.get('tokens_by_deadline'), 'tokens')} or "
                             f"~{format_quantity(r.get('params_by_deadline_estimate'), 'count')} params")
        cells_of.append(cells)
    console = out.get()
    console.print(fitted(cols, cells_of, console.width, [title]))
    # what binds, in words, under the table: a sentence in a column made the table too wide for any terminal
    for line in (f"• {r['system']}: {r['binding']}: {r['detail']}" for r in rows):
        console.print(Text(line))


def register(app: typer.Typer) -> None:
    app.command("fit")(fit_command)
