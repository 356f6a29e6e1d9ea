"""Errors of a model against published values: per row, per group (MAPE, max), overall.

Generic over what is validated: a suite (validation/suites.py) turns calibration records into
`Row`s (published vs predicted value of one quantity) and `SkippedRow`s (with the reason); this
module only does the arithmetic and the JSON shape, so inference or HPC suites plug in unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True, kw_only=True)
class Row:
    id: str
    group: str
    model: str
    gpus: int
    layout: str
    quantity: str          # e.g. "step_time_s"
    unit: str              # of published and predicted, as a reader writes it: "s", "tokens/s per GPU"
    published: float
    predicted: float
    published_from: str = ""
    assumptions: tuple[str, ...] = ()
    breakdown: dict[str, float] = field(default_factory=dict)
    mfu: float | None = None
    kind: str = ""                 # the case's kind, e.g. "Blackwell moe fp8" (uncertainty bands by kind)
    fits: bool = True              # False: a run that ran and the model answers "does not fit"
    binding: str | None = None     # what the model says does not fit

    @property
    def error(self) -> float:
        """Signed relative error of the prediction: predicted / published - 1."""
        return self.predicted / self.published - 1.0


@dataclass(frozen=True, kw_only=True)
class SkippedRow:
    id: str
    group: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class GroupSummary:
    name: str
    rows: list[Row]

    @property
    def mape(self) -> float:
        """Mean absolute percentage error, in percent."""
        return mape(self.rows)

    @property
    def max_abs_error(self) -> float:
        """Largest absolute error of the group, in percent."""
        return max_abs_error(self.rows)


@dataclass(frozen=True, kw_only=True)
class Report:
    groups: dict[str, GroupSummary]
    skipped: list[SkippedRow]

    @property
    def rows(self) -> list[Row]:
        return [r for g in self.groups.values() for r in g.rows]

    @property
    def overall_mape(self) -> float:
        return mape(self.rows)

    @property
    def overall_max_abs_error(self) -> float:
        return max_abs_error(self.rows)


def mape(rows: list[Row]) -> float:
    """Mean absolute percentage error of the rows, in percent; NaN when there are none."""
    if not rows:
        return float("nan")
    return float(np.mean([abs(r.error) for r in rows]) * 100.0)


def max_abs_error(rows: list[Row]) -> float:
    """Largest absolute error of the rows, in percent; 0 when there are none."""
    return float(max((abs(r.error) for r in rows), default=0.0) * 100.0)


def summarize(rows: list[Row], skipped: list[SkippedRow], group: str | None = None) -> Report:
    """Group rows by their `group` (in first-seen order), optionally keeping one group only."""
    groups: dict[str, list[Row]] = {}
    for r in rows:
        if group is None or r.group == group:
            groups.setdefault(r.group, []).append(r)
    kept = [s for s in skipped if group is None or s.group == group]
    return Report(groups={k: GroupSummary(name=k, rows=v) for k, v in groups.items()}, skipped=kept)


def to_json(report: Report) -> dict[str, Any]:
    """{"groups": {name: {"mape", "max_abs_error", "records": [...]}}, "skipped", "overall_mape"}."""
    def row(r: Row) -> dict[str, Any]:
        return {"id": r.id, "model": r.model, "gpus": r.gpus, "layout": r.layout, "quantity": r.quantity,
                "unit": r.unit,
                "published": r.published, "predicted": r.predicted, "error_pct": r.error * 100.0,
                "published_from": r.published_from, "assumptions": list(r.assumptions),
                "mfu": r.mfu, "breakdown_s": r.breakdown, "kind": r.kind, "fits": r.fits,
                "binding": r.binding}

    return {
        "groups": {name: {"mape": g.mape, "max_abs_error": g.max_abs_error,
                          "records": [row(r) for r in g.rows]} for name, g in report.groups.items()},
        "skipped": [{"id": s.id, "group": s.group, "reason": s.reason} for s in report.skipped],
        "overall_mape": report.overall_mape,
        "overall_max_abs_error": report.overall_max_abs_error,
    }
