"""What a compiled spec reaches, read the same way for every archetype (None when not sized)."""

from __future__ import annotations

from typing import Any

from ..spine.result import ComputeLayer, ObjectiveLayer, SystemSpec


def compute(spec: SystemSpec) -> dict[str, Any]:
    if isinstance(spec.compute, ComputeLayer):
        return spec.compute.model_dump()
    return spec.compute if isinstance(spec.compute, dict) else {}


def gpus(spec: SystemSpec) -> int | None:
    g = compute(spec).get("gpus")
    return int(g) if g else None


def time_s(spec: SystemSpec) -> float | None:
    """Time to result: goodput-adjusted time to train (training), time to solution (HPC)."""
    if isinstance(spec.objective, ObjectiveLayer) and spec.compute is not None:
        o = spec.objective
        t = o.goodput_adjusted_time_to_train_s or o.time_to_train_s
        return t if t < float("inf") else None
    if spec.kind == "hpc" and spec.hpc and spec.compute is not None:
        return _float(spec.hpc.get("time_to_solution_s"))
    return None


def facility(spec: SystemSpec, key: str) -> Any:
    f = spec.facility or {}
    return f.get(key)


def inference(spec: SystemSpec, key: str) -> float | None:
    return _float((spec.inference or {}).get(key)) if spec.compute is not None else None


def cost_run(spec: SystemSpec) -> float | None:
    return spec.cost.cost_usd if spec.cost is not None else None


def cost_hour(spec: SystemSpec) -> float | None:
    return spec.cost.usd_per_hour if spec.cost is not None else None


def _float(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)
