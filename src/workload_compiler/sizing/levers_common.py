"""Levers every archetype shares: a denser accelerator, a rack-scale system, liquid cooling, more
sites, more GPUs. Each is a few dotted-key pins on the intake (null unpins a key)."""

from __future__ import annotations

from typing import Any

from ..units import format_power
from .context import Context, Variant

# Next generation per accelerator (all in the catalog): more FLOP/s and HBM per GPU.
DENSER = {"a100-sxm-80gb": "h100-sxm", "a100-sxm-40gb": "h100-sxm", "h100-sxm": "b200", "h200-sxm": "b200",
          "h800": "b200", "h100-sxm-96gb": "b200", "b200": "b300", "gb200": "gb300", "mi300x": "mi355x",
          "mi325x": "mi355x"}
# Same compute, more HBM: where memory binds.
MORE_MEMORY = {"h100-sxm": "h200-sxm", "a100-sxm-40gb": "a100-sxm-80gb"}
RACK_SCALE = ("gb200", "gb200-nvl72")      # NVLink across 72 GPUs in one rack
RACK_SCALE_FROM = ("a100-sxm-80gb", "a100-sxm-40gb", "h100-sxm", "h200-sxm", "h800", "b200")
LIQUID = ("dlc", "immersion")


def _hall(ctx: Context) -> Any:
    facility = getattr(ctx.w, "facility", None)
    return facility if facility is not None and facility.power is not None else None


def accelerators(ctx: Context, memory_binds: bool) -> list[Variant]:
    acc = ctx.accelerator
    out: list[Variant] = []
    if acc is None:
        return out
    denser = DENSER.get(acc)
    if denser and denser in ctx.catalog.accelerators:
        out.append(Variant(name=f"denser accelerator ({denser})", lever="accelerator",
                           change=f"{acc} -> {denser}, same GPU limits",
                           pins={"compute.accelerator": denser, "compute.system": None}))
    more = MORE_MEMORY.get(acc)
    if memory_binds and more and more in ctx.catalog.accelerators:
        out.append(Variant(name=f"more HBM ({more})", lever="accelerator",
                           change=f"{acc} -> {more}: the same compute with more memory per GPU",
                           pins={"compute.accelerator": more, "compute.system": None}))
    if acc in RACK_SCALE_FROM and RACK_SCALE[1] in ctx.catalog.systems:
        pins: dict[str, Any] = {"compute.accelerator": RACK_SCALE[0], "compute.system": RACK_SCALE[1]}
        change = f"{acc} -> {RACK_SCALE[1]}: 72 GPUs in one NVLink domain"
        hall = _hall(ctx)
        if hall is not None and (hall.cooling or "air") not in LIQUID:
            pins.update({"facility.cooling": "dlc", "facility.rack_power": None, "facility.pue": None})
            change += ", with the direct liquid cooling its racks need"
        out.append(Variant(name=f"rack-scale system ({RACK_SCALE[1]})", lever="system", change=change, pins=pins))
    return out


def liquid_cooling(ctx: Context, keep: dict[str, Any]) -> list[Variant]:
    hall = _hall(ctx)
    if hall is None or (hall.cooling or "air") in LIQUID:
        return []
    return [Variant(name="liquid cooling", lever="cooling",
                    change=f"direct liquid cooling in the same {format_power(hall.power)} hall: lower PUE, "
                           "denser racks",
                    pins={"facility.cooling": "dlc", "facility.rack_power": None, "facility.pue": None, **keep})]


def two_sites(ctx: Context, extra: dict[str, Any]) -> list[Variant]:
    """Twice every GPU limit, over two sites (hall limits checked per site)."""
    pins: dict[str, Any] = {}
    compute = getattr(ctx.w, "compute", None)
    if compute is not None and compute.gpus is not None:
        pins["compute.gpus"] = 2 * compute.gpus
    if compute is not None and compute.max_gpus is not None:
        pins["compute.max_gpus"] = 2 * compute.max_gpus
    hall = _hall(ctx)
    if hall is not None:
        pins["facility.power"] = 2 * hall.power
        if hall.floor_area_m2 is not None:
            pins["facility.floor_area_m2"] = 2 * hall.floor_area_m2
    if not pins:
        return []
    return [Variant(name="two sites", lever="sites", sites=2, pins={**pins, **extra},
                    change="twice the GPU limit over two sites, data parallel across them (assumes the "
                           "inter-site link carries the gradient or request traffic)")]


def more_gpus(ctx: Context, gpus: int | None, extra: dict[str, Any], what: str) -> list[Variant]:
    """Lift every GPU limit (count, cap, hall): the GPUs the requirement really needs. Nothing where the
    intake sets no limit to lift: that variant would be the baseline compiled again."""
    pins: dict[str, Any] = {"compute.gpus": gpus, "compute.max_gpus": None, **extra}
    hall = _hall(ctx)
    if hall is not None:
        pins.update({"facility.power": None, "facility.floor_area_m2": None})
    if not ctx.changes(pins):
        return []
    return [Variant(name="bigger cluster", lever="gpus", pins=pins,
                    change=what + (" (a larger hall)" if hall is not None else ""))]


def hall_sized(ctx: Context, extra: dict[str, Any]) -> list[Variant]:
    """A pinned GPU count the hall cannot hold: the count it does hold."""
    compute = getattr(ctx.w, "compute", None)
    held = ctx.hall_gpus()
    if compute is None or compute.gpus is None or held is None or held >= compute.gpus or held < 1:
        return []
    return [Variant(name="what the hall holds", lever="gpus",
                    pins={"compute.gpus": None, "compute.max_gpus": held, **extra},
                    change=f"at most {held:,} GPUs instead of {compute.gpus:,}: what the hall holds")]
