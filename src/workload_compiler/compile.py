"""`compile_workload`: an intake in, the six-layer `SystemSpec` out. Pure: no file or terminal I/O."""

from __future__ import annotations

from pydantic import BaseModel

from .catalog.loader import Catalog, load_catalog
from .errors import InputError
from .spine.result import SystemSpec


def compile_workload(workload: BaseModel, catalog: Catalog | None = None) -> SystemSpec:
    """Dispatch on the workload's kind. Infeasible workloads come back with `feasible=False`."""
    cat = catalog or load_catalog()
    kind = getattr(workload, "kind", None)
    if kind == "training":
        from .spine.training import compile_training
        return compile_training(workload, cat)  # type: ignore[arg-type]
    if kind == "inference":
        from .spine.serving import compile_inference_spec
        return compile_inference_spec(workload, cat)  # type: ignore[arg-type]
    if kind == "hpc":
        from .spine.serving import compile_hpc_spec
        return compile_hpc_spec(workload, cat)  # type: ignore[arg-type]
    raise InputError("kind", kind, "one of: training, inference, hpc")
