"""Which plots a result has, and the values each one draws, read from the document (plots.py
draws them). A plot whose values are absent is left out rather than drawn empty."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..spine.result import SystemSpec

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
                     bar_breakdown_svg(parts, title="Memory per GPU by term", unit="GiB", scale=2.0**30,
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
    candidates = [dict(a) for a in spec.alternatives if isinstance(a.get("time_to_train_s"), int | float)
                  and a.get("feasible", True)]
    if not candidates:
        return None
    priced = all(_cost_of(a) for a in candidates)
    cost_label = "cost (USD)" if priced else "GPU-hours (no price given)"

    def cost(entry: dict[str, Any], gpus: Any, seconds: float) -> float:
        found = _cost_of(entry) if priced else None
        return found[1] if found else float(gpus or 0) * seconds / 3600.0

    points = [PlanePoint(str(a.get("name")), float(a["time_to_train_s"]) / DAY_S,
                         cost(a, a.get("gpus"), float(a["time_to_train_s"])), a.get("meets_target") is not False)
              for a in candidates]
    if isinstance(base_time, int | float) and isinstance(base_gpus, int | float) and (
            not priced or _cost_of(objective)):
        points.insert(0, PlanePoint("as compiled", float(base_time) / DAY_S, cost(objective, base_gpus, base_time),
                                    objective.get("meets_target") is not False, baseline=True))
    target = objective.get("time_to_train_target_s")
    return FigureSvg("alternatives", "Alternatives on a time x cost plane",
                     time_cost_svg(points, cost_label=cost_label,
                                   target_days=float(target) / DAY_S if isinstance(target, int | float) else None))


def tornado_bars(section: Any) -> tuple[str, list[Any]]:
    """(metric, bars) from a `sensitivity` section: a list of rows (or {metric, rows}) each naming an
    assumption (`assumption`, `field` or `name`) and its `low` / `high` effect (numbers, or a mapping
    metric -> number: the first metric is drawn)."""
    from .plots import TornadoBar
    metric = "the result"
    rows = section
    if isinstance(section, dict):
        metric = str(section.get("metric") or metric)
        rows = section.get("rows") or section.get("entries") or section.get("tornado") or []
    bars = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        label = row.get("assumption") or row.get("field") or row.get("name")
        low, high = row.get("low"), row.get("high")
        if isinstance(low, dict) and isinstance(high, dict):
            common = [k for k in low if isinstance(low[k], int | float) and isinstance(high.get(k), int | float)]
            if not common:
                continue
            metric = common[0]
            low, high = low[metric], high[metric]
        if label and isinstance(low, int | float) and isinstance(high, int | float):
            bars.append(TornadoBar(str(label), float(low), float(high)))
    return metric, bars


def sensitivity_figure(doc: dict[str, Any]) -> FigureSvg | None:
    from .plots import tornado_svg
    metric, bars = tornado_bars(doc.get("sensitivity"))
    if not bars:
        return None
    return FigureSvg("sensitivity", "Sensitivity tornado", tornado_svg(bars, metric=metric.replace("_", " ")))


def figure(spec: SystemSpec, name: str, doc: dict[str, Any] | None = None) -> FigureSvg | None:
    """One named plot (see FIGURE_NAMES), or None when the result has nothing to draw for it."""
    d = doc if doc is not None else spec.model_dump(mode="json")
    makers: dict[str, Callable[[], FigureSvg | None]] = {
        "step": lambda: step_figure(d), "memory": lambda: memory_figure(d), "power": lambda: power_figure(d),
        "alternatives": lambda: alternatives_figure(spec, d), "sensitivity": lambda: sensitivity_figure(d)}
    maker = makers.get(name)
    return maker() if maker else None


def figures(spec: SystemSpec) -> list[FigureSvg]:
    """Every plot the result has, in report order."""
    doc = spec.model_dump(mode="json")
    return [f for name in FIGURE_NAMES if (f := figure(spec, name, doc)) is not None]


__all__ = ["FIGURE_NAMES", "FigureSvg", "figure", "figures", "tornado_bars"]
