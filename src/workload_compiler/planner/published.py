"""The best published MFU per accelerator and precision class (catalog/data/published_mfu.yaml)."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

from .result import PublishedMfu

PUBLISHED_MFU_FILE = Path(__file__).resolve().parent.parent / "catalog" / "data" / "published_mfu.yaml"

# Training precision -> the class whose dense peak its MFU is measured against.
PRECISION_CLASS = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "mxfp8": "fp8", "nvfp4": "fp4"}


@functools.cache
def _table() -> tuple[PublishedMfu, ...]:
    with PUBLISHED_MFU_FILE.open(encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    return tuple(PublishedMfu(**entry) for entry in doc["published_mfu"])


def best_published_mfu(accelerator_id: str, precision: str) -> PublishedMfu | None:
    """The highest published MFU for this accelerator at this precision class; None if none is known."""
    cls = PRECISION_CLASS.get(precision, precision)
    found = [e for e in _table() if e.accelerator == accelerator_id and e.precision == cls]
    return max(found, key=lambda e: e.mfu) if found else None


def published_table() -> tuple[PublishedMfu, ...]:
    return _table()
