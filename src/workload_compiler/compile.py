"""`compile_workload`: an intake in, the six-layer `SystemSpec` out. Pure: no file or terminal I/O."""

from __future__ import annotations

from pydantic import BaseModel

from .catalog.loader import Catalog, load_catalog
from .errors import InputError
from .intake.hpc import HpcWorkload
from .intake.inference import InferenceWorkload
from .intake.training import TrainingWorkload
from .spine.result import SystemSpec
from .spine.serving import compile_hpc_spec, compile_inference_spec
from .spine.training import compile_training


def compile_workload(workload: BaseModel, catalog: Catalog | None = None) -> SystemSpec:
    """Dispatch on the workload's kind. Infeasible workloads come back with `feasible=False`."""
    cat = catalog or load_catalog()
    if isinstance(workload, TrainingWorkload):
        return compile_training(workload, cat)
    if isinstance(workload, InferenceWorkload):
        return compile_inference_spec(workload, cat)
    if isinstance(workload, HpcWorkload):
        return compile_hpc_spec(workload, cat)
    raise InputError("kind", getattr(workload, "kind", None), "one of: training, inference, hpc")
