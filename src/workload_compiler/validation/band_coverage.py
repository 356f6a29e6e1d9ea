"""How often the published value lay inside the uncertainty band printed beside the prediction.

A band (spine/uncertainty.py) promises that a run of its kind lands inside it about 4 times in 5.
Scored on runs no constant and no band was derived from (tools/holdout_blackwell.py,
tools/holdout_inference.py), the share inside is the honest test of that promise. A row's signed
error is the one its table section is defined on (a step time's for training, a rate's for
serving), so it is inside when e_low <= e <= e_high of its kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..spine.uncertainty import error_range


@dataclass(frozen=True)
class Coverage:
    """Rows whose published value lay inside their kind's band, of those that had one."""

    inside: int
    banded: int
    unbanded: int          # rows of a kind with no band (never validated, or too few runs)

    def line(self) -> str:
        share = f" ({self.inside / self.banded:.0%})" if self.banded else ""
        return (f"published value inside the printed band: {self.inside} of {self.banded}{share}; "
                f"{self.unbanded} without a band (kind never validated)")


def coverage(rows: Iterable[Mapping[str, Any]], section: str) -> Coverage:
    """`rows`: validation report rows (`kind`, `error_pct`) scored against `section` of the table."""
    inside = banded = unbanded = 0
    for row in rows:
        r = error_range(section, str(row["kind"]))
        if r is None:
            unbanded += 1
            continue
        banded += 1
        inside += r[0] <= float(row["error_pct"]) / 100.0 <= r[1]
    return Coverage(inside=inside, banded=banded, unbanded=unbanded)


__all__ = ["Coverage", "coverage"]
