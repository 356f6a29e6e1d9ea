"""Measurements into a compile: checked against the machine being sized, then applied to it only.

Two sources, one format (intake/measured.py):
- the intake's `measured.values`: each entry must be of a machine this intake sizes (the pinned
  accelerator, or the one the archetype assumes or searches; the pinned or reference node type);
  any other is refused with an InputError that names both machines ("do not fill missing fields
  with a benchmark from an unrelated machine", seed 003);
- calibration files (`measured.calibration_dir`, else $WKC_MEASURED_DIR): a library, one file per
  accelerator; each is used wherever its accelerator is evaluated (a search, an alternative) and
  nowhere else, so a file for another accelerator is simply not used, never refused.

The hardware view (`Catalog.hardware`, `hpc_device`) reads the rates keyed by machine, so the
planner, the inference search and the alternatives all see a measurement only on its machine.
After the compile, `annotate` adds the `measured` section and marks the values computed from an
applied rate as measured, naming the machine.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..catalog.loader import Catalog
from ..errors import InputError
from ..intake.measured import MeasuredIntake, MeasuredValue
from ..paths import existing_directory
from ..perf.layout import MeasuredRates
from ..provenance import Source, Trace
from ..spine.doc import plain
from ..spine.result import MeasuredEntry, MeasuredSection, SystemSpec
from .fields import GENERIC, INFERENCE, TRAINING, MeasurableField, lookup
from .machine_match import ref_id, refusal

# Result paths each archetype computes from the rates a measurement replaces (step time and what
# follows from it); they are marked measured when an applied measurement is read by that model.
DEPENDENTS: dict[str, tuple[str, ...]] = {
    "training": ("compute.step_time_s", "compute.step_breakdown_s", "compute.tokens_per_s",
                 "compute.tokens_per_s_per_gpu", "compute.model_tflops_per_gpu", "compute.mfu",
                 "compute.gpus", "objective.time_to_train_s", "objective.goodput_adjusted_time_to_train_s",
                 "storage.read_bytes_per_s", "bottleneck.effective_mfu", "bottleneck.kernel_efficiency"),
    "inference": ("inference.ttft_s", "inference.tpot_s", "inference.output_tokens_per_s_per_gpu",
                  "inference.batch_size", "inference.cost_per_million_tokens", "compute.gpus"),
    "hpc": ("hpc.time_per_step_s", "hpc.time_to_solution_s", "hpc.communication_s", "compute.gpus"),
    "generic": ("pipeline.pipeline_samples_per_s", "pipeline.effective_samples_per_s", "pipeline.time_to_result_s",
                "compute.gpus"),
}
TRAINING_GEMM_PRECISION = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8"}   # mxfp8 / nvfp4: other kernels


@dataclass(frozen=True, kw_only=True)
class SizedMachines:
    """The machines one compile may size, by kind, and why these."""

    archetype: str
    accelerators: frozenset[str]
    systems: frozenset[str]
    why: str


@dataclass(frozen=True, kw_only=True)
class Entry:
    key: str
    spec: MeasurableField
    choice: str | None
    value: MeasuredValue
    machine_id: str              # canonical: catalog id, or the normalized CPU model
    origin: str                  # "intake" or the calibration file's path


def sized_machines(w: Any, catalog: Catalog) -> SizedMachines:
    """Accelerator: pinned, else the given system's, else what the archetype assumes (training,
    HPC: its default) or searches (inference: its candidates). Node: pinned, else the reference
    system of each accelerator."""
    from ..hpc.resolve import DEFAULT_ACCELERATOR as HPC_DEFAULT
    from ..inference.resolve import DEFAULT_CANDIDATES
    from ..spine.training_defaults import DEFAULT_ACCELERATOR as TRAINING_DEFAULT
    kind, c = str(w.kind), w.compute
    if c.accelerator is not None:
        accs, why = [catalog.accelerator(c.accelerator).id], "compute.accelerator given"
    elif c.system is not None:
        accs, why = [catalog.system(c.system).accelerator], "the accelerator of compute.system"
    elif kind == INFERENCE:
        accs, why = list(DEFAULT_CANDIDATES), "no accelerator given: the serving search tries these"
    else:   # the generic archetype assumes the training default (generic/resolve.py)
        accs = [TRAINING_DEFAULT if kind in (TRAINING, GENERIC) else HPC_DEFAULT]
        why = "no accelerator given: the archetype's assumed default"
    if c.system is not None:
        systems = [catalog.system(c.system).id]
    else:
        systems = [catalog.default_systems[a] for a in accs if a in catalog.default_systems]
    return SizedMachines(archetype=kind, accelerators=frozenset(accs), systems=frozenset(systems), why=why)


def entry(key: str, value: MeasuredValue, catalog: Catalog, origin: str) -> Entry:
    """Check one entry's field, unit, machine kind and range; canonical machine id."""
    spec, choice = lookup(key)
    where = f"measured.values.{key}" if origin == "intake" else f"{origin}: values.{key}"
    if value.unit != spec.unit:
        raise InputError(f"{where}.unit", value.unit, f"{spec.unit} (the SI unit of {key})")
    if value.machine.kind != spec.kind:
        raise InputError(f"{where}.machine.kind", value.machine.kind,
                         f"{spec.kind}: {key} is a property of one {spec.kind} ({spec.replaces})")
    if not spec.low <= value.value <= spec.high:
        raise InputError(f"{where}.value", value.value,
                         f"{spec.low:g} to {spec.high:g} {spec.unit} (outside it is a unit slip or a failed run)")
    machine_id = ref_id(value.machine, catalog, where)
    return Entry(key=key, spec=spec, choice=choice, value=value, machine_id=machine_id, origin=origin)


def check_sized(e: Entry, sized: SizedMachines) -> None:
    """Refuse an intake entry measured on a machine this compile does not size."""
    if e.spec.kind == "cpu":
        return   # no model input here is a CPU rate: recorded with the workload, never applied
    pool = sized.accelerators if e.spec.kind == "accelerator" else sized.systems
    if e.machine_id in pool:
        return
    raise refusal(f"measured.values.{e.key}", e.value.machine, e.machine_id, ', '.join(sorted(pool)) or 'none',
                  sized.why)


def rates(entries: list[Entry]) -> dict[tuple[str, str], MeasuredRates]:
    """The hardware view's measured rates, keyed (kind, machine id). Later entries win."""
    gemm: dict[str, dict[str, dict[str, float]]] = {}
    hbm: dict[str, float] = {}
    bus: dict[str, dict[str, float]] = {}
    for e in entries:
        name = e.key.split(".")[1]
        if name in ("gemm_e_max", "gemm_kernel_overhead_s"):
            gemm.setdefault(e.machine_id, {}).setdefault(str(e.choice), {})[name] = e.value.value
        elif name == "hbm_bandwidth_bytes_per_s":
            hbm[e.machine_id] = e.value.value
        elif name.endswith("_busbw_bytes_per_s"):
            tier = name.removesuffix("_busbw_bytes_per_s")
            bus.setdefault(e.machine_id, {})[f"{tier}.{e.choice}"] = e.value.value
    out: dict[tuple[str, str], MeasuredRates] = {}
    for acc in set(gemm) | set(hbm):
        pairs = tuple((p, g["gemm_e_max"], g["gemm_kernel_overhead_s"]) for p, g in sorted(gemm.get(acc, {}).items())
                      if "gemm_e_max" in g and "gemm_kernel_overhead_s" in g)
        out[("accelerator", acc)] = MeasuredRates(gemm=pairs, hbm_bytes_per_s=hbm.get(acc))
    for node, table in bus.items():
        out[("node", node)] = MeasuredRates(busbw=tuple(sorted(table.items())))
    return out


@dataclass(frozen=True, kw_only=True)
class Bound:
    """The catalog with the measured rates, and what the result must say about them."""

    catalog: Catalog
    sized: SizedMachines
    entries: tuple[Entry, ...]
    calibration_files: tuple[str, ...]

    def annotate(self, spec: SystemSpec) -> SystemSpec:
        return annotate(spec, self)


def bind(w: Any, catalog: Catalog, library: list[tuple[str, str, MeasuredValue]],
         calibration_files: tuple[str, ...] = ()) -> Bound:
    """Check the intake's entries against the sized machines; merge the library's (file, key, value)
    entries under them (an intake entry wins for the same field and machine)."""
    block: MeasuredIntake = getattr(w, "measured", None) or MeasuredIntake()
    sized = sized_machines(w, catalog)
    mine = [entry(k, v, catalog, "intake") for k, v in block.values.items()]
    for e in mine:
        check_sized(e, sized)
    taken = {(e.key, e.machine_id) for e in mine}
    lib = [entry(k, v, catalog, origin) for origin, k, v in library]
    lib = [e for e in lib if (e.key, e.machine_id) not in taken]
    entries = lib + mine
    measured = rates(entries)
    cat = dataclasses.replace(catalog, measured=measured) if measured else catalog
    return Bound(catalog=cat, sized=sized, entries=tuple(entries), calibration_files=calibration_files)


def _applies(e: Entry, bound: Bound, spec: SystemSpec, precision: str | None) -> tuple[bool, str]:
    """(applied to this result, why not when not)."""
    sized = bound.sized
    compute = plain(spec.compute)
    on = {"accelerator": compute.get("accelerator"), "node": compute.get("system")}.get(e.spec.kind)
    if e.spec.kind == "cpu":
        system = compute.get("system")
        host = bound.catalog.systems[system].cpu if system in bound.catalog.systems else ""
        return False, ("recorded with the workload: no input of this model is a CPU rate"
                       + (f" (the sized node {system} has {host})" if host else "")
                       + "; a data-pipeline stage sizing loader cores on this CPU model reads it")
    if on is not None and on != e.machine_id:
        return False, f"not used in the result: it sizes {on}, this value is of {e.machine_id}"
    if sized.archetype not in e.spec.read_by:
        return False, f"recorded: the {sized.archetype} model does not read it (its own fitted form applies)"
    if e.key.startswith("accelerator.gemm_") and sized.archetype == TRAINING:
        gemm = TRAINING_GEMM_PRECISION.get(precision or "")
        if gemm != e.choice:
            return False, f"recorded: the training GEMMs run at {precision}, this value is for {e.choice}"
    return True, ""


def annotate(spec: SystemSpec, bound: Bound) -> SystemSpec:
    """The `measured` section; provenance `measured` (with the machine) for each entry and for the
    values computed from the entries the model read."""
    if not bound.entries:
        return spec
    precision = getattr(spec.objective, "precision", None)
    trace = Trace()
    out: list[MeasuredEntry] = []
    applied: list[Entry] = []
    for e in bound.entries:
        ok, why = _applies(e, bound, spec, precision)
        if e.origin != "intake" and not ok and e.spec.kind != "cpu":
            continue   # a library file for another machine: not part of this compile
        trace.measured(f"measured.{e.key}", e.value.value, e.value.describe(),
                       why=None if ok else why)
        out.append(MeasuredEntry(field=e.key, value=e.value.value, unit=e.value.unit, spread=e.value.spread,
                                 repeats=e.value.repeats, machine_kind=e.spec.kind, machine_id=e.machine_id,
                                 machine=e.value.machine.describe(), date=e.value.date.isoformat(),
                                 tool=e.value.tool, origin=e.origin, status="applied" if ok else "recorded",
                                 replaces=e.spec.replaces, note=why or e.value.note))
        if ok:
            applied.append(e)
    if applied:
        machines = "; ".join(sorted({a.value.describe() for a in applied}))
        fields = ", ".join(sorted(a.key for a in applied))
        for path in DEPENDENTS.get(bound.sized.archetype, ()):
            prov = spec.provenance.get(path)
            if prov is not None and prov.source == Source.DERIVED:
                trace.measured(path, None, machines, formula=prov.formula, why=f"computed from measured {fields}")
    spec.provenance = {**spec.provenance, **trace.provenance}
    spec.measured = MeasuredSection(entries=out, calibration_files=list(bound.calibration_files),
                                    sized_accelerators=sorted(bound.sized.accelerators),
                                    sized_systems=sorted(bound.sized.systems), sized_why=bound.sized.why)
    return spec


def read_library(directory: Path) -> tuple[list[tuple[str, str, MeasuredValue]], tuple[str, ...]]:
    """The (file, key, value) entries of every calibration file (`*.yaml`, schema wkc-calibration/1)."""
    import yaml
    from pydantic import ValidationError

    from .calibration import RAW_SCHEMA, CalibrationFile
    existing_directory(directory, "measured.calibration_dir", "an existing directory of `wkc calibrate` files")
    out: list[tuple[str, str, MeasuredValue]] = []
    files: list[str] = []
    for path in sorted(directory.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("schema") == RAW_SCHEMA:
                continue   # the raw run beside its calibration file: timings, not values
            cal = CalibrationFile.model_validate(data)
        except (yaml.YAMLError, ValidationError) as exc:
            raise InputError(f"calibration file {path}", "(invalid)",
                             f"a `wkc calibrate` file (schema wkc-calibration/1): {str(exc).splitlines()[0]}") from None
        files.append(str(path))
        out += [(str(path), k, v) for k, v in cal.values.items()]
    return out, tuple(files)


MEASURED_DIR_ENV = "WKC_MEASURED_DIR"


def bind_measurements(w: Any, catalog: Catalog, environ: dict[str, str] | None = None) -> Bound:
    """`bind` with the calibration library read from `measured.calibration_dir`, else from
    $WKC_MEASURED_DIR when set (the edge: this reads files)."""
    import os
    env = os.environ if environ is None else environ
    block: MeasuredIntake | None = getattr(w, "measured", None)
    directory = block.calibration_dir if block is not None and block.calibration_dir is not None else None
    if directory is None and env.get(MEASURED_DIR_ENV):
        directory = Path(env[MEASURED_DIR_ENV])
    library, files = read_library(directory) if directory is not None else ([], ())
    return bind(w, catalog, library, files)
