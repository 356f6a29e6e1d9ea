"""Sensitivity: which assumption moves the answer. For every assumed value of a compiled spec that
has a plausible range in catalog/data/sensitivity.yaml, the GPUs, time to result (or replicas),
facility power and $ at each end of the range, as a tornado ranked by the largest relative swing.

Each point is the intake with the assumption pinned, compiled through the same path as the
answer. `held` assumptions (storage, reliability, fabric, facility: the layers below compute)
keep the baseline's GPU count and layout, so no planner search runs; a GPU count the deadline
chose then moves with the time (linear-scaling estimate, marked). `recompile` assumptions (the
objective, the accelerator, serving settings) search again. The step-time model's own held-out
error is applied in closed form: the time scales with the step time.
"""

from __future__ import annotations

import math
import time
from typing import Any

from ..catalog.loader import Catalog, load_catalog, package_yaml
from ..errors import WkcError
from ..intake.common import ParallelismIntake
from ..planner.memo import shared_searches
from ..spine.result import ComputeLayer, SystemSpec
from ..spine.uncertainty import overall_mape, sized_for_deadline
from . import measures as m
from .context import Context
from .result import SensitivityPoint, SensitivityRow, SensitivitySection

STAGE_KEYS = ("first_stage_layers", "last_stage_layers", "embedding_as_layer", "loss_as_layer")
OUTPUTS = ("gpus", "time_s", "replicas", "facility_power_w", "cost_usd")
NO_EFFECT = ("software.", "fabric.scale_out.", "fabric.networks.", "fabric.rank_order", "facility.breakdown.",
             "facility.floor_area_m2", "storage.fill_fraction")


def point(spec: SystemSpec, value: Any, *, gpus: int | None = None, note: str | None = None) -> SensitivityPoint:
    serving = spec.kind == "inference"
    cost = spec.cost
    return SensitivityPoint(
        value=value, gpus=gpus if gpus is not None else m.gpus(spec), time_s=None if serving else m.time_s(spec),
        replicas=None if not serving or m.inference(spec, "replicas") is None else int(m.inference(spec, "replicas")
                                                                                         or 0),
        facility_power_w=m.facility(spec, "facility_power_w"),
        cost_usd=None if cost is None else (cost.usd_per_hour if serving else cost.cost_usd),
        feasible=bool(spec.feasible) or (spec.kind == "hpc" and spec.compute is not None), note=note)


def _held_pins(spec: SystemSpec) -> dict[str, Any]:
    """The baseline's compute, pinned: the GPU count and (training) the whole layout."""
    c = spec.compute
    if isinstance(c, ComputeLayer):
        # each degree the layout reports that the intake can pin (derived ones, such as the middle
        # stages' layers, follow from them); the intake's other parallelism pins stay
        layout: dict[str, Any] = {f"compute.parallelism.{k}": v for k, v in c.parallelism.model_dump().items()
                                  if k in ParallelismIntake.model_fields and v is not None}
        # a pipeline layout places every layer by itself; one stage has no split to pin
        if layout.get("compute.parallelism.pipeline_layout") or c.parallelism.pp == 1:
            for k in STAGE_KEYS:
                layout[f"compute.parallelism.{k}"] = None
        return {"compute.accelerator": c.accelerator, "compute.system": c.system, "compute.gpus": c.gpus,
                "compute.max_gpus": None, **layout}
    if isinstance(c, dict) and c.get("gpus"):
        pins: dict[str, Any] = {"compute.gpus": int(c["gpus"]), "compute.max_gpus": None}
        if spec.kind == "hpc":
            pins["compute.accelerator"] = c.get("accelerator")
        return pins
    return {}


def _values(entry: dict[str, Any], default: Any, catalog: Catalog) -> list[Any]:
    if "factors" in entry:
        if not isinstance(default, int | float) or isinstance(default, bool):
            return []
        vals = [float(default) * float(f) for f in entry["factors"]]
        return [round(v) for v in vals] if entry.get("integer") else vals
    return [v for v in entry.get("values", []) if v != default]


class Sensitivity:
    """Evaluates the points of one spec; the intake compiler of the collision engine is reused."""

    def __init__(self, spec: SystemSpec, catalog: Catalog) -> None:
        from ..compile import as_workload, compile_core
        if spec.intake is None:
            raise WkcError("sensitivity needs a spec compiled by compile_workload (it records its intake)")
        w = as_workload(spec.intake)
        self.spec = spec
        self.ctx = Context(w=w, base=spec, catalog=catalog, core=lambda x, c: compile_core(x, c), limits=[])
        self.held = _held_pins(spec)
        self.scale_gpus = sized_for_deadline(spec) and spec.kind == "training"
        self.base = point(spec, None)

    def evaluate(self, pin: str, value: Any, method: str) -> SensitivityPoint:
        pins = {**(self.held if method == "held" else {}), pin: value}
        try:
            alt = self.ctx.compile(pins)
        except WkcError as exc:
            if method != "held":
                return SensitivityPoint(value=value, feasible=False, note=str(exc)[:300])
            # the held layout is not valid with this value: search again rather than call it infeasible
            return self.evaluate(pin, value, "recompile")
        if method == "held" and self.scale_gpus and self.base.time_s and m.time_s(alt):
            g = self.base.gpus or 0
            need = math.ceil(g * (m.time_s(alt) or 0.0) / self.base.time_s)
            return point(alt, value, gpus=need, note="GPUs the deadline needs: linear-scaling estimate")
        return point(alt, value)


def _swing(points: list[SensitivityPoint], base: SensitivityPoint) -> tuple[dict[str, float], float]:
    swing: dict[str, float] = {}
    rel = 0.0
    for key in OUTPUTS:
        vals = [getattr(p, key) for p in [base, *points] if p.feasible and getattr(p, key) is not None]
        ref = getattr(base, key)
        if len(vals) < 2:
            continue
        swing[key] = float(max(vals) - min(vals))
        if ref:
            rel = max(rel, swing[key] / abs(float(ref)))
    if any(not p.feasible for p in points):
        rel = max(rel, 1.0)       # an end of the range that does not fit moves the answer the most
    return swing, rel


def _ends(points: list[SensitivityPoint], base: SensitivityPoint,
          swing: dict[str, float]) -> tuple[SensitivityPoint | None, SensitivityPoint | None]:
    """The two ends of the bar: lowest and highest of the output that moves the most (relative to
    the baseline); an end that does not fit is the high end."""
    def rel(k: str) -> float:
        ref = getattr(base, k)
        return swing.get(k, 0.0) / abs(float(ref)) if ref else 0.0
    key = max(swing, key=rel) if swing else "gpus"
    ok = [p for p in points if p.feasible and getattr(p, key) is not None]
    bad = [p for p in points if not p.feasible]
    if not ok:
        return (points[0] if points else None), (bad[0] if bad else None)
    lo = min(ok, key=lambda p: float(getattr(p, key)))
    hi = bad[0] if bad else max(ok, key=lambda p: float(getattr(p, key)))
    return lo, hi


def _model_row(s: Sensitivity, entry: dict[str, Any]) -> SensitivityRow | None:
    """The performance model's held-out error in closed form: time x (1 +/- e), GPUs with it under a
    training deadline, $ with the GPU-hours; power unchanged. Training: the step-time model's error
    over every run; HPC: the error on runs of the solver class (else of every class)."""
    base = s.base
    if s.spec.kind not in ("training", "hpc") or base.time_s is None:
        return None
    kind = str(getattr(s.spec.hpc, "solver_class", "")) if s.spec.kind == "hpc" else None
    e, n, method = overall_mape(str(entry["uncertainty_section"]), kind)
    runs = f"{n} published {kind} runs" if kind and n else f"{n} published runs"
    ends = []
    for f in (1 - e, 1 + e):
        gpus = math.ceil((base.gpus or 0) * f) if s.scale_gpus else base.gpus
        ends.append(SensitivityPoint(value=f"x{f:.3f}", gpus=gpus, time_s=base.time_s * f,
                                     facility_power_w=base.facility_power_w,
                                     cost_usd=None if base.cost_usd is None else base.cost_usd * f))
    swing, rel = _swing(ends, base)
    return SensitivityRow(field=str(entry["field"]), pin=None, default="the fitted model", low=ends[0], high=ends[1],
                          source=f"{method}, MAPE {e:.2%} over {runs} (catalog/data/uncertainty.yaml)",
                          swing=swing, relative_swing=rel,
                          method="closed form: time and GPU-hours scale with the step time")


def analyse(spec: SystemSpec, catalog: Catalog | None = None) -> SensitivitySection:
    """The tornado for `spec` (compiled by compile_workload, so that it carries its intake); the
    points share their planner searches (planner/memo.py)."""
    with shared_searches():
        return _analyse(spec, catalog)


def _analyse(spec: SystemSpec, catalog: Catalog | None) -> SensitivitySection:
    start = time.process_time()
    cat = catalog or load_catalog()
    data = package_yaml("sensitivity.yaml")
    ranges: dict[str, dict[str, Any]] = data["ranges"]
    s = Sensitivity(spec, cat)
    rows: list[SensitivityRow] = []
    skipped: dict[str, str] = {}
    for a in spec.assumptions:
        entry = ranges.get(a.field)
        if entry is None:
            skipped[a.field] = ("no effect on GPUs, time, power or $" if a.field.startswith(NO_EFFECT)
                                else "no plausible range in catalog/data/sensitivity.yaml")
            continue
        values = _values(entry, a.value, cat)
        if not values:
            skipped[a.field] = "no other value in its range"
            continue
        method = str(entry.get("method", "held"))
        points = [s.evaluate(str(entry["pin"]), v, method) for v in values]
        swing, rel = _swing(points, s.base)
        if rel == 0.0:    # a bar of zero length ('False .. False', every delta '—') is noise in a tornado
            skipped[a.field] = (f"no effect on this job's GPUs, time, power or $ across "
                                f"{', '.join(str(v) for v in values)}")
            continue
        lo, hi = _ends([*points, s.base.model_copy(update={"value": a.value})], s.base, swing)
        rows.append(SensitivityRow(field=a.field, pin=str(entry["pin"]), default=a.value, low=lo, high=hi,
                                   source=str(entry["source"]), swing=swing, relative_swing=rel,
                                   method="downstream layers, GPU count and layout held" if method == "held"
                                   else "full recompile (the search runs again)"))
    model = _model_row(s, data["hpc_model" if spec.kind == "hpc" else "step_time_model"])
    if model is not None:
        rows.append(model)
    rows.sort(key=lambda r: r.relative_swing, reverse=True)
    return SensitivitySection(baseline=s.base, rows=rows, not_varied=skipped, seconds=time.process_time() - start)
