"""`compile_workload`: an intake in, the six-layer `SystemSpec` out. Pure: no terminal I/O; a path
is read once at the start, like the YAML a user would pass.

`recompile` is "select a layer, pin a value, recompile the system": the intake with the pins
applied (intake/pins.py), validated and compiled again through the same path. It starts from an
intake (a mapping or a YAML path), a validated workload, or a compiled spec (its `intake`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .catalog.loader import Catalog, load_catalog
from .engagement.attach import attach, prepare
from .errors import CatalogGap, InfeasibleError, InputError
from .intake.generic import GenericWorkload
from .intake.hpc import HpcWorkload
from .intake.inference import InferenceWorkload
from .intake.load import load_workload, parse_workload, read_intake, workload_model
from .intake.pins import apply_pins
from .intake.problems import input_error
from .intake.training import TrainingWorkload
from .measure.apply import bind_measurements
from .planner.memo import shared_searches
from .provenance import Trace
from .spine.finite import make_finite
from .spine.gaps import collect_not_sized, gap_spec
from .spine.generic import compile_generic_spec
from .spine.result import Band, MeasuredSection, ObjectiveLayer, SystemSpec
from .spine.serving import compile_hpc_spec, compile_inference_spec
from .spine.training import compile_training
from .spine.uncertainty import spec_uncertainty
from .spine.verdict import verdict

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
    """Dispatch on the workload's kind, the cost layer and the collision engine (a limit the
    requirement breaks comes back as `collisions` with ranked, priced `alternatives`), then the
    engagement sections (sheet, boundary, register, operations, acceptance, MIG). Infeasible
    workloads come back with `feasible=False`.

    Measurements are checked against the machines this intake sizes (a measurement of another is
    refused) and applied through the catalog's hardware view to their own machine only. A catalog
    gap (a number the catalog does not hold) never fails a compile: the layers it sizes come back
    "not sized" with the reason, listed in `SystemSpec.not_sized` (spine/gaps.py).

    The result is always a `SystemSpec`: an `InfeasibleError` a pass raises comes back as
    `feasible=False` with the binding constraint; bad input raises `InputError`. Every number in
    the result is finite (a value that cannot be reached is null, the reason in `unreachable`);
    `verdict` says meets target, feasible, misses target or infeasible (spine/verdict.py). The
    alternatives and passes inside share their planner searches (planner/memo.py).
    """
    with shared_searches():
        return _compile_workload(workload, catalog)


def _compile_workload(workload: Intake, catalog: Catalog | None) -> SystemSpec:
    from .sizing.context import dump_intake
    w = prepare(as_workload(workload))
    try:
        bound = bind_measurements(w, catalog or load_catalog())
        cat = bound.catalog
        spec = _layers(w, cat, with_alternatives=True)
        spec.intake = dump_intake(w)
        spec = bound.annotate(spec)
        collect_not_sized(spec)
        facility = getattr(w, "facility", None)
        if "facility" in spec.not_sized and facility is not None and facility.power is not None:
            spec.not_sized["facility"] += (f"; the pinned facility.power ({facility.power:,.0f} W) could not be "
                                           "checked against the cluster's power")
        attach(spec, w, cat)
        spec.uncertainty = uncertainty_of(spec, cat)
    except ValidationError as exc:  # an inner model refused a value derived from the input
        raise input_error(exc) from None
    spec = make_finite(spec)
    spec.verdict = verdict(spec).code
    return spec


def uncertainty_of(spec: SystemSpec, cat: Catalog) -> dict[str, Band]:
    """The bands of the spec's headline numbers, by its accelerator's generation (spine/uncertainty.py)."""
    accelerator = spec.compute.get("accelerator") if isinstance(spec.compute, dict) else getattr(
        spec.compute, "accelerator", None)
    if not accelerator:
        return {}
    return spec_uncertainty(spec, str(accelerator), cat.accelerator(str(accelerator)).architecture)


def compile_core(workload: Intake, catalog: Catalog | None = None) -> SystemSpec:
    """The six layers and the cost layer, without collisions, alternatives and the engagement
    sections (what each alternative and each sensitivity point is compiled with)."""
    w = prepare(as_workload(workload))
    bound = bind_measurements(w, catalog or load_catalog())
    return bound.annotate(_layers(w, bound.catalog, with_alternatives=False))


def _layers(w: BaseModel, cat: Catalog, *, with_alternatives: bool) -> SystemSpec:
    try:
        return _compile_layers(w, cat, with_alternatives)
    except CatalogGap as gap:
        objective = _training_objective(w) if isinstance(w, TrainingWorkload) else None
        return gap_spec(str(getattr(w, "kind", "")), getattr(w, "name", None), gap, objective)
    except InfeasibleError as exc:   # a pass found it infeasible (fabric tiers, rack power, cooling)
        return infeasible_spec(w, exc)


def infeasible_spec(w: BaseModel, exc: InfeasibleError) -> SystemSpec:
    """The answer for a workload a pass found infeasible before its layers were written."""
    return SystemSpec(kind=str(getattr(w, "kind", "unknown")), name=getattr(w, "name", None), feasible=False,
                      binding_constraint=f"{exc.binding}: {exc.detail}",
                      collisions=[{"constraint": exc.binding, "detail": exc.detail}])


def _compile_layers(w: BaseModel, cat: Catalog, with_alternatives: bool = True) -> SystemSpec:
    if isinstance(w, TrainingWorkload):
        return compile_training(w, cat, with_alternatives=with_alternatives)
    if isinstance(w, InferenceWorkload):
        return compile_inference_spec(w, cat, with_alternatives=with_alternatives)
    if isinstance(w, HpcWorkload):
        return compile_hpc_spec(w, cat, with_alternatives=with_alternatives)
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


def _start(intake: Intake | SystemSpec) -> tuple[dict[str, Any], Path | None]:
    if isinstance(intake, SystemSpec):
        if intake.intake is None:
            raise InputError("spec", intake.name, "a spec compiled by compile_workload (it records its intake)")
        return dict(intake.intake), None
    if isinstance(intake, BaseModel):
        from .sizing.context import dump_intake
        return dump_intake(intake), None
    if isinstance(intake, (str, Path)):
        return read_intake(intake), Path(intake).parent
    return dict(intake), None


def recompile(intake: Intake | SystemSpec, pins: Mapping[str, Any] | Iterable[tuple[str, Any]],
              catalog: Catalog | None = None, *, alternatives: bool = True,
              leave_behind: tuple[str | None, str | None] | None = None) -> SystemSpec:
    """Compile `intake` with `pins` ({dotted key: value}) applied; the result lists its pins. A pin
    that contradicts one of the intake's own pins (a GPU count against a pinned layout) wins, and the
    contradiction is reported as a collision, never applied silently. `alternatives=False` skips
    the collision engine (the six layers and cost only). `leave_behind=(accelerator, system)`: the
    baseline's machine; measured values of it are left out where the pins move to another machine
    (listed in `measured.left_behind`) instead of refused."""
    from .sizing.repin import reconcile
    data, base_dir = _start(intake)
    if not isinstance(data, dict):
        raise InputError("(intake)", type(data).__name__, "a mapping with a 'kind' key")
    pin_items = list(pins.items() if isinstance(pins, Mapping) else pins)
    model = workload_model(str(data.get("kind")))
    pinned = apply_pins(data, pin_items, model)
    pinned, freed = reconcile(pinned, dict(pin_items))
    dropped: list[str] = []
    if leave_behind is not None:
        from .engagement.measurement import leave_other_machines
        pinned, dropped = leave_other_machines(pinned, dict(pin_items), *leave_behind)
    w = parse_workload(pinned, base_dir=base_dir)
    if alternatives:
        spec = compile_workload(w, catalog)
    else:
        from .sizing.context import dump_intake
        spec = compile_core(w, catalog)
        spec.intake = dump_intake(w)
    spec.pins = {k: v for k, v in pin_items}
    spec.collisions = freed + spec.collisions
    if dropped:
        spec.measured = (spec.measured or MeasuredSection()).model_copy(update={"left_behind": dropped})
    return spec
