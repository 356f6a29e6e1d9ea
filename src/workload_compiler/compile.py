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

from pydantic import BaseModel

from .catalog.loader import Catalog, load_catalog
from .engagement.attach import attach, prepare
from .errors import InputError
from .intake.generic import GenericWorkload
from .intake.hpc import HpcWorkload
from .intake.inference import InferenceWorkload
from .intake.load import load_workload, parse_workload, read_intake, workload_model
from .intake.pins import apply_pins
from .intake.training import TrainingWorkload
from .spine.generic import compile_generic_spec
from .spine.result import SystemSpec
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


def _dispatch(w: BaseModel, cat: Catalog, with_alternatives: bool) -> SystemSpec:
    if isinstance(w, TrainingWorkload):
        return compile_training(w, cat, with_alternatives=with_alternatives)
    if isinstance(w, InferenceWorkload):
        return compile_inference_spec(w, cat, with_alternatives=with_alternatives)
    if isinstance(w, HpcWorkload):
        return compile_hpc_spec(w, cat, with_alternatives=with_alternatives)
    if isinstance(w, GenericWorkload):
        return compile_generic_spec(w, cat)
    raise InputError("kind", getattr(w, "kind", None), "one of: training, inference, hpc, generic")


def compile_workload(workload: Intake, catalog: Catalog | None = None) -> SystemSpec:
    """Dispatch on the workload's kind, then the engagement sections (sheet, boundary, register,
    operations, acceptance, MIG). Infeasible workloads come back with `feasible=False`; a limit the
    requirement breaks comes back as `collisions` with ranked, priced `alternatives`."""
    from .sizing.context import dump_intake
    cat = catalog or load_catalog()
    w = prepare(as_workload(workload))
    spec = _dispatch(w, cat, with_alternatives=True)
    spec.intake = dump_intake(w)
    attach(spec, w, cat)
    return spec


def compile_core(workload: Intake, catalog: Catalog | None = None) -> SystemSpec:
    """The six layers and the cost layer, without collisions, alternatives and the engagement
    sections (what each alternative and each sensitivity point is compiled with)."""
    return _dispatch(prepare(as_workload(workload)), catalog or load_catalog(), with_alternatives=False)


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
              catalog: Catalog | None = None, *, alternatives: bool = True) -> SystemSpec:
    """Compile `intake` with `pins` ({dotted key: value}) applied; the result lists its pins. A pin
    that contradicts one of the intake's own pins (a GPU count against a pinned layout) wins, and the
    contradiction is reported as a collision, never applied silently. `alternatives=False` skips
    the collision engine (the six layers and cost only)."""
    from .sizing.repin import reconcile
    data, base_dir = _start(intake)
    if not isinstance(data, dict):
        raise InputError("(intake)", type(data).__name__, "a mapping with a 'kind' key")
    pin_items = list(pins.items() if isinstance(pins, Mapping) else pins)
    model = workload_model(str(data.get("kind")))
    pinned = apply_pins(data, pin_items, model)
    pinned, freed = reconcile(pinned, dict(pin_items))
    w = parse_workload(pinned, base_dir=base_dir)
    if alternatives:
        spec = compile_workload(w, catalog)
    else:
        from .sizing.context import dump_intake
        spec = compile_core(w, catalog)
        spec.intake = dump_intake(w)
    spec.pins = {k: v for k, v in pin_items}
    spec.collisions = freed + spec.collisions
    return spec
