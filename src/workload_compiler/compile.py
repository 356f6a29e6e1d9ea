"""`compile_workload`: an intake in, the six-layer `SystemSpec` out. Pure: no terminal I/O; a path
is read once at the start, like the YAML a user would pass.

`recompile` is "select a layer, pin a value, recompile the system": the intake with the pins
applied (intake/pins.py), validated and compiled again through the same path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .catalog.loader import Catalog, load_catalog
from .engagement.attach import attach, prepare
from .errors import CatalogGap, InputError
from .intake.generic import GenericWorkload
from .intake.hpc import HpcWorkload
from .intake.inference import InferenceWorkload
from .intake.load import load_workload, parse_workload, read_intake, workload_model
from .intake.pins import apply_pins
from .intake.training import TrainingWorkload
from .measure.apply import bind_measurements
from .provenance import Trace
from .spine.gaps import collect_not_sized, gap_spec
from .spine.generic import compile_generic_spec
from .spine.result import ObjectiveLayer, SystemSpec
from .spine.serving import compile_hpc_spec, compile_inference_spec
from .spine.training import compile_training

Intake = BaseModel | Mapping[str, Any] | str | Path


def as_workload(intake: Intake) -> BaseModel:
    """A validated workload from a model, a mapping (as `parse_workload`) or a YAML path."""
    if isinstance(intake, BaseModel):
        return intake
    if isinstance(intake, Mapping):
        return parse_workload(dict(intake))
    if isinstance(intake, (str, Path)):
        return load_workload(intake)
    raise InputError("(intake)", type(intake).__name__, "a workload model, a mapping or a path to a YAML intake")


def compile_workload(workload: Intake, catalog: Catalog | None = None) -> SystemSpec:
    """Dispatch on the workload's kind, then the engagement sections (sheet, boundary, register,
    operations, acceptance, MIG). Infeasible workloads come back with `feasible=False`.

    Measurements are checked against the machines this intake sizes (a measurement of another is
    refused) and applied through the catalog's hardware view to their own machine only. A catalog
    gap (a number the catalog does not hold) never fails a compile: the layers it sizes come back
    "not sized" with the reason, listed in `SystemSpec.not_sized` (spine/gaps.py).
    """
    w = prepare(as_workload(workload))
    bound = bind_measurements(w, catalog or load_catalog())
    cat = bound.catalog
    try:
        spec = _compile_layers(w, cat)
    except CatalogGap as gap:
        objective = _training_objective(w) if isinstance(w, TrainingWorkload) else None
        spec = gap_spec(str(getattr(w, "kind", "")), getattr(w, "name", None), gap, objective)
    spec = bound.annotate(spec)
    collect_not_sized(spec)
    facility = getattr(w, "facility", None)
    if "facility" in spec.not_sized and facility is not None and facility.power is not None:
        spec.not_sized["facility"] += (f"; the pinned facility.power ({facility.power:,.0f} W) could not be "
                                       "checked against the cluster's power")
    attach(spec, w, cat)
    return spec


def _compile_layers(w: BaseModel, cat: Catalog) -> SystemSpec:
    if isinstance(w, TrainingWorkload):
        return compile_training(w, cat)
    if isinstance(w, InferenceWorkload):
        return compile_inference_spec(w, cat)
    if isinstance(w, HpcWorkload):
        return compile_hpc_spec(w, cat)
    if isinstance(w, GenericWorkload):
        return compile_generic_spec(w, cat)
    raise InputError("kind", getattr(w, "kind", None), "one of: training, inference, hpc, generic")


def _training_objective(w: TrainingWorkload) -> ObjectiveLayer:
    """What the run must do (FLOPs, tokens, steps) needs no hardware: kept when compute is not sized."""
    from .arch.resolve import resolve_model
    from .spine.training import objective_layer
    from .spine.training_defaults import resolve_run
    trace = Trace()
    arch = resolve_model(w.model, trace, "model")
    return objective_layer(arch, resolve_run(w, arch, trace), None, w, trace)


def recompile(intake: Mapping[str, Any] | str | Path, pins: Mapping[str, Any] | Iterable[tuple[str, Any]],
              catalog: Catalog | None = None) -> SystemSpec:
    """Compile `intake` with `pins` ({dotted key: value}) applied; the result lists its pins."""
    data = read_intake(intake) if isinstance(intake, (str, Path)) else dict(intake)
    pin_items = list(pins.items() if isinstance(pins, Mapping) else pins)
    model = workload_model(str(data.get("kind")))
    base_dir = Path(intake).parent if isinstance(intake, (str, Path)) else None
    spec = compile_workload(parse_workload(apply_pins(data, pin_items, model), base_dir=base_dir), catalog)
    spec.pins = {k: v for k, v in pin_items}
    return spec
