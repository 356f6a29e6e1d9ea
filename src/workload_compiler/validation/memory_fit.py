"""The fit of the runtime reserve (perf/fitted_memory.py) on the calibration records, and its checks.

Two kinds of evidence, both from ../shared/calibration:
- measured peaks (`measured.memory_gib_per_gpu`): reserve = measured - modeled, to within the error;
- runs that ran (every record with a stated layout and micro-batch): modeled + reserve <= the GPU's
  memory, an upper bound on the reserve (training_added.yaml: "every row ran, so each is also a
  memory test").
The fit: the (fixed GiB, fraction) pair on a 0.25 GiB x 0.25 % grid that minimizes the largest
relative error on the measured peaks, ties by the mean error, among the pairs under which every
run that ran fits. A run whose modeled bytes alone exceed its GPU's memory bounds nothing (no
reserve >= 0 makes it fit) and is reported, not fitted. `fit_reserve` is pure NumPy; `fit_data`
builds its arrays from the records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..perf.memory import training_memory_bytes
from ..units import GIB
from .memory_peaks import measured_peak_records, peak_case
from .record_layout import least_memory, memory_cases
from .training_intake import group_of

FIXED_GIB = np.arange(0.0, 12.0001, 0.25)
FRACTION = np.arange(0.0, 0.2001, 0.0025)

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ReserveFit:
    fixed_bytes: float
    fraction: float
    peak_max_error: float          # on the measured peaks it was fitted on
    peak_mean_error: float
    constrained_rows: int          # runs that bound the reserve
    unbounded_rows: tuple[int, ...]   # indices of runs that cannot fit with any reserve


def fit_reserve(peak_modeled: Floats, peak_measured: Floats, ran_modeled: Floats, ran_capacity: Floats,
                ) -> ReserveFit:
    """Bytes in, bytes out (see the module docstring)."""
    fixed = FIXED_GIB[:, None, None] * GIB
    frac = FRACTION[None, :, None]
    err = np.abs((fixed + (1.0 + frac) * peak_modeled) / peak_measured - 1.0)
    worst, mean = err.max(axis=2), err.mean(axis=2)
    bounded = ran_modeled <= ran_capacity
    if bounded.any():
        fits = np.all(fixed + (1.0 + frac) * ran_modeled[bounded] <= ran_capacity[bounded], axis=2)
    else:
        fits = np.ones(worst.shape, dtype=bool)
    if not fits.any():
        raise ValueError("no reserve on the grid lets every bounded run fit")
    score = np.where(fits, np.round(worst, 6) * 1e3 + mean, np.inf)   # lexicographic: max, then mean
    i, j = np.unravel_index(int(np.argmin(score)), score.shape)
    return ReserveFit(fixed_bytes=float(fixed[i, 0, 0]), fraction=float(frac[0, j, 0]),
                      peak_max_error=float(worst[i, j]), peak_mean_error=float(mean[i, j]),
                      constrained_rows=int(bounded.sum()),
                      unbounded_rows=tuple(int(k) for k in np.flatnonzero(~bounded)))


def reserve(fixed_bytes: float, fraction: float, modeled: Floats) -> Floats:
    return np.asarray(fixed_bytes + fraction * modeled, dtype=np.float64)




@dataclass(frozen=True)
class FitData:
    """The calibration evidence as arrays (bytes), with the ids and source families beside them."""

    peak_ids: tuple[str, ...]
    peak_modeled: Floats        # modeled bytes before the reserve
    peak_measured: Floats
    ran_ids: tuple[str, ...]
    ran_families: tuple[str, ...]
    ran_modeled: Floats
    ran_capacity: Floats


def fit_data(records: list[dict[str, Any]]) -> FitData:
    """Model every measured peak and every run that ran (least memory over the recompute modes a
    record leaves open), without the reserve."""
    peaks = [peak_case(r) for r in measured_peak_records(records)]
    p_mod = [_modeled(training_memory_bytes(c.arch, c.setup, c.layout)) for c in peaks]
    cases, _ = memory_cases(records)
    r_mod = [_modeled(least_memory(c)[0]) for c in cases]
    return FitData(peak_ids=tuple(c.id for c in peaks), peak_modeled=np.array(p_mod),
                   peak_measured=np.array([c.measured_gib * GIB for c in peaks]),
                   ran_ids=tuple(c.id for c in cases), ran_families=tuple(family_of(c.id) for c in cases),
                   ran_modeled=np.array(r_mod), ran_capacity=np.array([c.hbm_bytes for c in cases]))


def _modeled(terms: Mapping[str, Any]) -> float:
    return float(terms["total"]) - float(terms["runtime"])


def family_of(record_id: str) -> str:
    """The source family of a record (validation/training_intake.py: its id's longest family prefix)."""
    return group_of(record_id)


__all__ = ["FIXED_GIB", "FRACTION", "GIB", "FitData", "ReserveFit", "family_of", "fit_data", "fit_reserve", "reserve"]
