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


def compile_workload(workload: Intake, catalog: Catalog | None = None) -> SystemSpec:
    """Dispatch on the workload's kind, then the engagement sections (sheet, boundary, register,
    operations, acceptance, MIG). Infeasible workloads come back with `feasible=False`."""
    cat = catalog or load_catalog()
    w = prepare(as_workload(workload))
    spec = _compile_layers(w, cat)
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
