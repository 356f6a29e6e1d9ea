"""A pin that contradicts another pin of the same intake: the newer pin (from `--set` or
`recompile`) wins, the older one gives way, and the change is a collision in the result, never
silent. Two such pairs: a GPU count against a pinned layout (tp x pp x cp x dp), and an
accelerator against a pinned system that holds another one."""

from __future__ import annotations

import math
from typing import Any

from ..catalog.loader import load_catalog
from ..errors import InputError
from .result import Collision


def _layout(data: dict[str, Any], pins: dict[str, Any]) -> Collision | None:
    gpus = pins.get("compute.gpus")
    compute = data.get("compute") or {}
    par = compute.get("parallelism") or {}
    if not isinstance(gpus, int) or any(k.startswith("compute.parallelism") for k in pins):
        return None
    if not all(isinstance(par.get(k), int) for k in ("tp", "pp", "dp")):
        return None
    tp, pp, dp, cp = par["tp"], par["pp"], par["dp"], par.get("cp") or 1
    if tp * pp * dp * cp == gpus:
        return None
    rest = tp * pp * cp
    if gpus % rest == 0:
        par["dp"] = gpus // rest
        change = f"dp {dp} -> {par['dp']}"
    else:
        par.pop("dp")
        change = f"dp {dp} unpinned (re-planned: {gpus} is not a multiple of tp x pp x cp = {rest})"
    return Collision(constraint="pinned layout", kind="pin", key="compute.parallelism.dp",
                     requirement=float(gpus), limit=float(math.prod((tp, pp, dp, cp))), unit="count",
                     detail=f"compute.gpus = {gpus} contradicts the pinned layout tp {tp} x pp {pp} x cp {cp} x "
                            f"dp {dp} = {tp * pp * cp * dp}: {change}")


def _system(data: dict[str, Any], pins: dict[str, Any]) -> Collision | None:
    acc = pins.get("compute.accelerator")
    compute = data.get("compute") or {}
    system = compute.get("system")
    if not isinstance(acc, str) or system is None or "compute.system" in pins:
        return None
    catalog = load_catalog()
    try:
        holds = catalog.system(str(system)).accelerator
        wanted = catalog.accelerator(acc).id
    except InputError:
        return None
    if holds == wanted:
        return None
    compute.pop("system")
    return Collision(constraint="pinned system", kind="pin", key="compute.system",
                     detail=f"compute.accelerator = {wanted} contradicts compute.system {system} (it holds {holds}): "
                            f"the system is unpinned (the catalog's reference system for {wanted})")


def reconcile(data: dict[str, Any], pins: dict[str, Any]) -> tuple[dict[str, Any], list[Collision]]:
    """`data` (already pinned, a fresh copy) with contradicted pins given way, and what gave way."""
    found = [c for c in (_layout(data, pins), _system(data, pins)) if c is not None]
    return data, found
