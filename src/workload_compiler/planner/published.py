"""The best published MFU per accelerator and precision class (catalog/data/published_mfu.yaml)."""

from __future__ import annotations

import functools

from ..catalog.loader import package_yaml
from ..perf.layout import PEAK_CLASS
from .result import PublishedMfu

# Training precision -> the class whose dense peak its MFU is measured against.
PRECISION_CLASS = PEAK_CLASS


@functools.cache
def published_table() -> tuple[PublishedMfu, ...]:
    """Every entry of published_mfu.yaml, read once per process."""
    return tuple(PublishedMfu(**entry) for entry in package_yaml("published_mfu.yaml")["published_mfu"])


def best_published_mfu(accelerator_id: str, precision: str, *, moe: bool = False) -> PublishedMfu | None:
    """The highest published MFU for this accelerator at this precision class (of mixture-of-experts
    runs with `moe`, else of dense ones); None if none is known."""
    cls = PRECISION_CLASS.get(precision, precision)
    found = [e for e in published_table() if e.accelerator == accelerator_id and e.precision == cls and e.moe == moe]
    return max(found, key=lambda e: e.mfu) if found else None
