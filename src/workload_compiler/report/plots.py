"""The report's plots as SVG text (matplotlib, no pyplot state, so the web server can draw from
several threads): step breakdown, memory by term, power bill, alternatives on a time x cost plane,
the sensitivity tornado. Each reads values already in the result document; none computes a model
number. Text stays text in the SVG (searchable, small), and the output is deterministic.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib import rcParams
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

rcParams["svg.fonttype"] = "none"
rcParams["svg.hashsalt"] = "wkc"
rcParams["font.family"] = ["DejaVu Sans", "sans-serif"]
rcParams["font.size"] = 9

INK, MUTED, ACCENT, WARN, OK, GRID = "#14213d", "#6b7280", "#2563eb", "#dc2626", "#059669", "#e5e7eb"
PALETTE = ("#2563eb", "#0891b2", "#7c3aed", "#db2777", "#ea580c", "#ca8a04", "#16a34a", "#64748b", "#9333ea",
           "#0d9488")


def _figure(width_in: float, height_in: float) -> Figure:
    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    FigureCanvasSVG(fig)
    return fig


def _svg(fig: Figure, title: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Title": title})
    text = buf.getvalue()
    return text[text.index("<svg"):]  # inline in HTML: no XML prolog or DOCTYPE


def _style(ax: object) -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)  # type: ignore[attr-defined]
    ax.spines["left"].set_color(MUTED)  # type: ignore[attr-defined]
    ax.spines["bottom"].set_color(MUTED)  # type: ignore[attr-defined]
    ax.tick_params(colors=INK)  # type: ignore[attr-defined]


def _label(key: str) -> str:
    return key.replace("_", " ")


def bar_breakdown_svg(parts: dict[str, float], *, title: str, unit: str, scale: float = 1.0,
                      limit: float | None = None, limit_label: str = "") -> str:
    """Horizontal bars, largest first, each labelled with its value and share; an optional limit line
    (e.g. the GPU's HBM). `scale` divides the SI values into the unit shown."""
    items = sorted(((k, v) for k, v in parts.items() if v > 0), key=lambda kv: kv[1])
    total = sum(v for _, v in items)
    fig = _figure(6.4, 0.45 + 0.32 * max(len(items), 1))
    ax = fig.add_subplot()
    _style(ax)
    names = [_label(k) for k, _ in items]
    values = [v / scale for _, v in items]
    ax.barh(names, values, color=[PALETTE[i % len(PALETTE)] for i in range(len(items))][::-1], height=0.62)
    top = max([*values, (limit or 0) / scale, 1e-12])
    for y, v in enumerate(values):
        share = f" ({100 * v * scale / total:.0f}%)" if total > 0 else ""
        ax.text(v + top * 0.01, y, f"{v:,.3g} {unit}{share}", va="center", color=INK, fontsize=8)
    if limit:
        ax.axvline(limit / scale, color=WARN, lw=1.2, ls="--")
        ax.text(limit / scale, len(items) - 0.4, f" {limit_label}", color=WARN, fontsize=8, va="bottom")
    ax.set_xlim(0, top * 1.28)
    ax.set_xlabel(unit, color=MUTED)
    ax.set_title(title, loc="left", color=INK, fontsize=10, fontweight="bold")
    ax.grid(axis="x", color=GRID, lw=0.6)
    ax.set_axisbelow(True)
    return _svg(fig, title)


@dataclass(frozen=True)
class PlanePoint:
    label: str
    days: float
    cost: float
    meets: bool
    baseline: bool = False


def time_cost_svg(points: Sequence[PlanePoint], *, cost_label: str, target_days: float | None = None) -> str:
    """The alternatives on a time x cost plane: each a point, labelled; the target a vertical line;
    those that meet every target filled, those that do not hollow."""
    fig = _figure(6.4, 3.6)
    ax = fig.add_subplot()
    _style(ax)
    for i, p in enumerate(points):
        color = INK if p.baseline else PALETTE[i % len(PALETTE)]
        ax.scatter([p.days], [p.cost], s=70 if p.baseline else 46, marker="D" if p.baseline else "o",
                   facecolors=color if p.meets else "white", edgecolors=color, linewidths=1.6, zorder=3)
        ax.annotate(p.label, (p.days, p.cost), xytext=(6, 4 if i % 2 == 0 else -11), textcoords="offset points",
                    fontsize=7.5, color=INK)
    if target_days:
        ax.axvline(target_days, color=WARN, lw=1.1, ls="--")
        ax.text(target_days, ax.get_ylim()[1], " target", color=WARN, fontsize=8, va="top")
    ax.set_xlabel("time to train (days)", color=MUTED)
    ax.set_ylabel(cost_label, color=MUTED)
    ax.set_title("Alternatives: time x cost (filled = meets every target)", loc="left", color=INK, fontsize=10,
                 fontweight="bold")
    ax.grid(color=GRID, lw=0.6)
    ax.set_axisbelow(True)
    return _svg(fig, "alternatives")


@dataclass(frozen=True)
class TornadoBar:
    label: str
    low: float     # change of the metric when the assumption moves to the low end of its range
    high: float    # ... and to the high end


def tornado_svg(bars: Sequence[TornadoBar], *, metric: str) -> str:
    """A sensitivity tornado of one output (see tornado_sets_svg)."""
    return tornado_sets_svg([(metric, list(bars))])


def tornado_sets_svg(sets: Sequence[tuple[str, Sequence[TornadoBar]]]) -> str:
    """Sensitivity tornados, one panel per output (time, cost, power, ...): a bar per assumption from
    the change at the low end of its range (blue) to the change at the high end (red), the widest
    swing on top."""
    heights = [0.5 + 0.27 * max(len(bars), 1) for _, bars in sets]
    fig = _figure(7.6, 0.5 + sum(heights))
    axes = fig.subplots(len(sets), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, (metric, bars) in zip(axes, sets, strict=True):
        _style(ax)
        ranked = sorted(bars, key=lambda b: abs(b.high - b.low))
        for y, b in enumerate(ranked):
            ax.barh([y], [b.low], color=ACCENT, height=0.6)
            ax.barh([y], [b.high], color=WARN, height=0.6)
        ax.set_yticks(range(len(ranked)), [b.label for b in ranked], fontsize=8)
        ax.axvline(0, color=INK, lw=0.8)
        ax.set_title(f"change in {metric}", loc="left", color=MUTED, fontsize=9)
        ax.grid(axis="x", color=GRID, lw=0.6)
        ax.set_axisbelow(True)
    fig.suptitle("Sensitivity: which assumptions move the result (blue: low end of the range, red: high end)",
                 x=0.01, ha="left", color=INK, fontsize=10, fontweight="bold")
    return _svg(fig, "sensitivity")


__all__ = ["PlanePoint", "TornadoBar", "bar_breakdown_svg", "time_cost_svg", "tornado_sets_svg", "tornado_svg"]
