"""The rows of catalog/data/uncertainty.yaml from held-out signed errors, and writing a section.

The fitting tools (tools/fit_training.py, tools/hpc_uncertainty.py) predict each published run
with constants fitted without it (its source family, its GPU) and pass the signed errors
e = predicted / published - 1 here, grouped by the kind of case a band is looked up by
(spine/uncertainty.py). Per kind: n, MAPE, the 10th-90th percentile of e from MANY_RUNS up (else
the smallest and largest) and the factor of the symmetric band (`error_factor`).
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..spine.uncertainty import MANY_RUNS, error_factor


def kind_table(errors_by_kind: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for kind, errs in sorted(errors_by_kind.items()):
        e = np.asarray(errs, dtype=np.float64)
        lo, hi = (np.percentile(e, 10), np.percentile(e, 90)) if len(e) >= MANY_RUNS else (e.min(), e.max())
        out[kind] = {"n": len(e), "mape_pct": round(float(np.mean(np.abs(e)) * 100), 2),
                     "low": round(float(lo), 4), "high": round(float(hi), 4),
                     "factor_p80": round(error_factor(errs), 4)}
    return out


def overall(errors: list[float]) -> dict[str, float]:
    """The held-out MAPE over every run of a section (wkc sensitivity's row for the model itself)."""
    return {"n": len(errors), "mape_pct": round(float(np.mean(np.abs(errors)) * 100), 2)}


def write_section(path: Path, name: str, section: dict[str, Any], tool: str) -> None:
    """Replace one section of the uncertainty table, keeping the others and the header comment;
    the section's `method` is dated and names the `tool` that wrote it."""
    import yaml

    text = path.read_text(encoding="utf-8") if path.exists() else ""
    header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
    doc = yaml.safe_load(text) if text else {}
    doc[name] = {**section, "method": f"{section['method']} ({tool}, {datetime.date.today()})"}
    path.write_text(header + yaml.safe_dump(doc, sort_keys=False, width=110), encoding="utf-8")


__all__ = ["kind_table", "overall", "write_section"]
