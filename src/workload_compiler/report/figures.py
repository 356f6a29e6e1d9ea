"""Which plots a result has, and the values each one draws, read from the document (plots.py
draws them). A plot whose values are absent is left out rather than drawn empty."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..spine.result import SystemSpec
from ..units import GIB

DAY_S = 86400.0
FIGURE_NAMES = ("step", "memory", "power", "alternatives", "sensitivity")


@dataclass(frozen=True)
class FigureSvg:
    name: str
    title: str
    svg: str


def _numbers(data: Any) -> dict[str, float]:
    if not isinstance(data, dict):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def _section(doc: dict[str, Any], *path: str) -> Any:
    node: Any = doc
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    return node


def step_figure(doc: dict[str, Any]) -> FigureSvg | None:
    from .plots import bar_breakdown_svg
    for section in ("compute", "inference", "hpc"):
        parts = _numbers(_section(doc, section, "step_breakdown_s"))
        if sum(parts.values()) > 0:
            total = sum(parts.values())
            scale, unit = (1.0, "s") if total >= 1 else (1e-3, "ms")
            return FigureSvg("step", "Step time breakdown",
                             bar_breakdown_svg(parts, title=f"Where a step goes ({section})", unit=unit, scale=scale))
    return None


def memory_figure(doc: dict[str, Any]) -> FigureSvg | None:
    from .plots import bar_breakdown_svg
    parts = _numbers(_section(doc, "compute", "memory_breakdown_bytes"))
    if sum(parts.values()) <= 0:
        return None
    hbm = _section(doc, "compute", "hbm_bytes")
    return FigureSvg("memory", "Memory per GPU by term",
                     bar_breakdown_svg(parts, title="Memory per GPU by term", unit="GiB", scale=GIB,
                                       limit=float(hbm) if isinstance(hbm, int | float) else None,
                                       limit_label="HBM"))


def power_figure(doc: dict[str, Any]) -> FigureSvg | None:
    """IT power by part (compute, network with optics, storage, management) and what the facility
    adds on top of IT (cooling and distribution losses, facility - IT)."""
    from .plots import bar_breakdown_svg
    power = _section(doc, "facility", "breakdown", "power")
    parts = {k.removesuffix("_w"): v for k, v in _numbers(power).items()
             if k in ("compute_w", "network_w", "storage_w", "management_w")}
    it_w, fac_w = _section(doc, "facility", "it_power_w"), _section(doc, "facility", "facility_power_w")
    if isinstance(it_w, int | float) and isinstance(fac_w, int | float) and fac_w > it_w:
        parts["cooling and losses (facility - IT)"] = float(fac_w - it_w)
    if sum(parts.values()) <= 0:
        return None
    scale, unit = (1e6, "MW") if sum(parts.values()) >= 1e6 else (1e3, "kW")
    return FigureSvg("power", "Power bill",
                     bar_breakdown_svg(parts, title="Power bill: IT by part, then the facility overhead",
                                       unit=unit, scale=scale))


def _alt_time(a: dict[str, Any]) -> float | None:
    """An alternative's time to result: to train, else to solve (None for a serving alternative)."""
    for key in ("time_to_train_s", "time_s", "time_to_solution_s"):
        if isinstance(a.get(key), int | float):
            return float(a[key])
    return None


def _meets(a: dict[str, Any]) -> bool:
    """Meets every target (and stays within the pinned limits) when the alternative says so."""
    verdicts = [a.get(k) for k in ("meets_targets", "meets_pins") if a.get(k) is not None]
    return all(verdicts) if verdicts else a.get("meets_target") is not False


def _cost_of(entry: dict[str, Any]) -> tuple[str, float] | None:
    """A price when the result has one (a `*_usd` total), else None."""
    for key, value in entry.items():
        if key.endswith("_usd") and "per_" not in key and isinstance(value, int | float) and value > 0:
            return key, float(value)
    return None


def alternatives_figure(spec: SystemSpec, doc: dict[str, Any]) -> FigureSvg | None:
    """Baseline and alternatives on time x cost. The cost is the alternative's price when it has one,
    else GPU-hours (GPUs x time), labelled as such: no price is invented."""
    from .plots import PlanePoint, time_cost_svg
    objective = doc.get("objective") or {}
    base_gpus = _section(doc, "compute", "gpus")
    base_time = objective.get("goodput_adjusted_time_to_train_s") or objective.get("time_to_train_s")
    candidates = [dict(a) | {"time_to_train_s": _alt_time(a)} for a in doc.get("alternatives") or []
                  if _alt_time(a) is not None and a.get("feasible", True)]
    if not candidates:
        return None
    priced = all(_cost_of(a) for a in candidates)
    cost_label = "cost (USD)" if priced else "GPU-hours (no price given)"

    def cost(entry: dict[str, Any], gpus: Any, seconds: float) -> float:
        found = _cost_of(entry) if priced else None
        return found[1] if found else float(gpus or 0) * seconds / 3600.0

    points = [PlanePoint(str(a.get("name")), float(a["time_to_train_s"]) / DAY_S,
                         cost(a, a.get("gpus"), float(a["time_to_train_s"])), _meets(a))
              for a in candidates]
    base_cost: dict[str, Any] = doc["cost"] if isinstance(doc.get("cost"), dict) else {}
    if isinstance(base_time, int | float) and isinstance(base_gpus, int | float) and (
            not priced or _cost_of(base_cost)):
        points.insert(0, PlanePoint("as compiled", float(base_time) / DAY_S, cost(base_cost, base_gpus, base_time),
                                    objective.get("meets_target") is not False, baseline=True))
    target = objective.get("time_to_train_target_s")
    return FigureSvg("alternatives", "Alternatives on a time x cost plane",
                     time_cost_svg(points, cost_label=cost_label,
                                   target_days=float(target) / DAY_S if isinstance(target, int | float) else None))


# Outputs a sensitivity row moves, in the order the tornado prefers them: (key, label, scale, unit).
TORNADO_METRICS = (("time_s", "time", DAY_S, "days"), ("cost_usd", "cost", 1.0, "USD"),
                   ("facility_power_w", "facility power", 1e6, "MW"), ("gpus", "GPUs", 1.0, "GPUs"),
                   ("replicas", "replicas", 1.0, "replicas"))


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def _delta(row: dict[str, Any], end: str, key: str, baseline: dict[str, Any]) -> float | None:
    point, base = row.get(end), _number(baseline.get(key))
    value = _number(point.get(key)) if isinstance(point, dict) else None
    return None if value is None or base is None else value - base


def tornado_sets(section: Any) -> list[tuple[str, list[Any]]]:
    """[(output with its unit, bars)] from the result's `sensitivity` section: for each output that
    some assumption moves (time, cost, facility power, GPUs, replicas), each such row's low and high
    ends as changes from the baseline; rows that do not move that output are left out of its panel.
    A section without a baseline may give the changes directly (`low`/`high` numbers, `metric`)."""
    from .plots import TornadoBar
    if not isinstance(section, dict) or not isinstance(section.get("rows"), list):
        return []
    rows = [r for r in section["rows"] if isinstance(r, dict)]
    baseline = section.get("baseline")
    if not isinstance(baseline, dict):
        bars = [TornadoBar(str(r.get("field") or r.get("assumption") or r.get("name")), lo, hi) for r in rows
                if (lo := _number(r.get("low"))) is not None and (hi := _number(r.get("high"))) is not None]
        return [(str(section.get("metric") or "the result"), bars)] if bars else []
    sets = []
    for key, label, scale, unit in TORNADO_METRICS:
        bars = []
        for r in rows:
            lo, hi = _delta(r, "low", key, baseline), _delta(r, "high", key, baseline)
            if not lo and not hi:
                continue
            ends = [str(r[e].get("value")) for e in ("low", "high") if isinstance(r.get(e), dict)]
            name = f"{r.get('field')} ({' to '.join(ends)})" if ends else str(r.get("field"))
            bars.append(TornadoBar(name, (lo or 0.0) / scale, (hi or 0.0) / scale))
        if bars:
            sets.append((f"{label} ({unit})", bars))
    return sets


def tornado_bars(section: Any) -> tuple[str, list[Any]]:
    """The first panel of `tornado_sets` (the output most assumptions move comes first in its order)."""
    sets = tornado_sets(section)
    return sets[0] if sets else ("the result", [])


def sensitivity_figure(doc: dict[str, Any]) -> FigureSvg | None:
    from .plots import tornado_sets_svg
    sets = tornado_sets(doc.get("sensitivity"))
    if not sets:
        return None
    return FigureSvg("sensitivity", "Sensitivity tornado", tornado_sets_svg(sets))


def figure(spec: SystemSpec, name: str, doc: dict[str, Any] | None = None) -> FigureSvg | None:
    """One named plot (see FIGURE_NAMES), or None when the result has nothing to draw for it."""
    d = doc if doc is not None else spec.model_dump(mode="json")  # one dump per figure set
    makers: dict[str, Callable[[], FigureSvg | None]] = {
        "step": lambda: step_figure(d), "memory": lambda: memory_figure(d), "power": lambda: power_figure(d),
        "alternatives": lambda: alternatives_figure(spec, d), "sensitivity": lambda: sensitivity_figure(d)}
    maker = makers.get(name)
    return maker() if maker else None


def figures(spec: SystemSpec) -> list[FigureSvg]:
    """Every plot the result has, in report order."""
    doc = spec.model_dump(mode="json")
    return [f for name in FIGURE_NAMES if (f := figure(spec, name, doc)) is not None]


__all__ = ["FIGURE_NAMES", "FigureSvg", "figure", "figures", "tornado_bars", "tornado_sets"]
