"""Collisions and alternatives: where a pinned constraint breaks the requirement, by how much, and
what else would work — each alternative a recompiled variant with its time, GPUs and power.

The constraints: the deadline (target.time_to_train), the GPU cap (compute.max_gpus or a hall's
capacity), the hall's power (facility.power). The alternatives the seed conversation asks for:
a longer schedule, FP8, a denser accelerator, liquid cooling, fewer tokens, a smaller model,
two sites, and the GPU count the requirement really needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..arch.counts import param_counts
from ..arch.model import ModelArch
from ..catalog.loader import Catalog
from ..errors import WkcError
from ..intake.training import TrainingWorkload
from ..perf.layout import PEAK_CLASS
from ..units import format_count, format_duration, format_power
from .result import ComputeLayer, ObjectiveLayer, SystemSpec

CompileFn = Callable[[TrainingWorkload, Catalog], SystemSpec]

# Accelerators tried as "denser" alternatives, newest first (all in the catalog).
DENSER = {"a100-sxm-80gb": "h100-sxm", "a100-sxm-40gb": "h100-sxm", "h100-sxm": "b200", "h200-sxm": "b200",
          "h800": "b200", "b200": "gb200", "mi300x": "mi355x"}


def _time(spec: SystemSpec) -> float | None:
    if not isinstance(spec.objective, ObjectiveLayer):
        return None
    return spec.objective.goodput_adjusted_time_to_train_s or spec.objective.time_to_train_s


def find_collisions(spec: SystemSpec, w: TrainingWorkload, needed_gpus: int | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    target = w.target.time_to_train
    t = _time(spec)
    if target is not None and t is not None and t > target:
        out.append({"constraint": "deadline", "required": target, "achieved": t, "ratio": t / target,
                    "detail": f"training takes {format_duration(t)} (goodput-adjusted) against a "
                              f"{format_duration(target)} target: {t / target:.1f}x over"})
    cap = w.compute.max_gpus
    if cap is not None and needed_gpus is not None and needed_gpus > cap:
        out.append({"constraint": "gpu cap", "required": needed_gpus, "achieved": cap,
                    "ratio": needed_gpus / cap,
                    "detail": f"the deadline needs {needed_gpus:,} GPUs; {cap:,} are available"})
    power = w.facility.power
    if power is not None and spec.facility:
        key = "it_power_w" if w.facility.power_basis == "it" else "facility_power_w"
        used = float(spec.facility[key])
        if used > power:
            out.append({"constraint": "facility power", "required": used, "achieved": power, "ratio": used / power,
                        "detail": f"the cluster draws {format_power(used)} ({w.facility.power_basis}) but the hall "
                                  f"delivers {format_power(power)}"})
    return out


def _summary(name: str, change: str, spec: SystemSpec, target: float | None) -> dict[str, Any]:
    t = _time(spec)
    compute = spec.compute if isinstance(spec.compute, ComputeLayer) else None
    facility = spec.facility or {}
    return {"name": name, "change": change, "feasible": spec.feasible,
            "accelerator": compute.accelerator if compute else None, "gpus": compute.gpus if compute else None,
            "time_to_train_s": t, "it_power_w": facility.get("it_power_w"),
            "facility_power_w": facility.get("facility_power_w"),
            "meets_target": None if target is None or t is None else bool(t <= target),
            "binding": spec.binding_constraint}


def alternatives(w: TrainingWorkload, arch: ModelArch, spec: SystemSpec, catalog: Catalog,
                 compile_fn: CompileFn, needed_gpus: int | None) -> list[dict[str, Any]]:
    """Recompile the workload with one thing changed at a time; report each variant's cost."""
    target = w.target.time_to_train
    base_time = _time(spec) if spec.feasible else None
    compute = spec.compute if isinstance(spec.compute, ComputeLayer) else None
    gpus = compute.gpus if compute else (w.compute.gpus or w.compute.max_gpus)
    accelerator = compute.accelerator if compute else w.compute.accelerator
    if gpus is None or accelerator is None:
        return []
    accelerator = catalog.accelerator(accelerator).id
    # One thing changes at a time: the user's pinned layout stays where it still applies; a variant
    # that changes the GPU count or the model re-plans the degrees that depend on them.
    same = w.compute.model_copy(update={"gpus": gpus, "max_gpus": None})
    pins_free = w.compute.model_copy(update={"gpus": gpus, "max_gpus": None,
                                             "parallelism": type(w.compute.parallelism)()})
    regrid = w.compute.parallelism.model_copy(update={"dp": None})
    rescaled = w.compute.model_copy(update={"max_gpus": None, "parallelism": regrid})
    out: list[dict[str, Any]] = []

    def variant(name: str, change: str, **updates: Any) -> None:
        try:
            alt = compile_fn(w.model_copy(update=updates, deep=True), catalog)
        except WkcError as exc:  # a variant the tool cannot compile is reported, not fatal
            out.append({"name": name, "change": change, "feasible": False, "binding": str(exc)})
            return
        out.append(_summary(name, change, alt, target))

    if base_time is not None:
        out.append(_summary("longer schedule", f"accept {format_duration(base_time)} instead of the target",
                            spec, None))
    if PEAK_CLASS.get(w.training.precision or "bf16") == "bf16" and catalog.hardware(accelerator).peak_flops_fp8:
        variant("FP8 training", "precision bf16 -> fp8 on the same GPUs",
                training=w.training.model_copy(update={"precision": "fp8"}), compute=same)
    denser = DENSER.get(accelerator)
    if denser:
        variant(f"denser accelerator ({denser})", f"{accelerator} -> {denser}, same GPU count",
                compute=same.model_copy(update={"accelerator": denser, "system": None}))
    if target is not None and base_time is not None:
        tokens = (spec.objective.tokens if isinstance(spec.objective, ObjectiveLayer) else 0.0) * target / base_time
        variant("fewer tokens", f"train {format_count(tokens)} tokens, what fits in the deadline",
                training=w.training.model_copy(update={"tokens": tokens}), compute=same)
        params = param_counts(arch).total * target / base_time
        variant("smaller model",
                f"a {format_count(params)}-parameter model (FLOPs scale with parameters at fixed tokens)",
                model=type(w.model)(params=params), compute=pins_free)
    if base_time is None and not spec.feasible:
        _smaller_model_that_fits(w, arch, catalog, compile_fn, pins_free, target, out)
    if target is not None:
        variant("two sites", f"{2 * gpus:,} GPUs over two sites, data parallel across them "
                "(assumes the inter-site link carries the gradient reduction)",
                compute=rescaled.model_copy(update={"gpus": 2 * gpus}))
    if needed_gpus is not None and needed_gpus > gpus:
        variant("bigger cluster", f"{needed_gpus:,} GPUs, what the deadline needs",
                compute=rescaled.model_copy(update={"gpus": needed_gpus}))
    elif needed_gpus is None and (not spec.feasible or (target is not None and base_time is not None
                                                        and base_time > target)):
        variant("bigger cluster", "as many GPUs as the deadline needs (no cap)",
                compute=rescaled.model_copy(update={"gpus": None}), facility=type(w.facility)())
    if w.facility.power is not None and (w.facility.cooling or "air") == "air":
        variant("liquid cooling", "direct liquid cooling: lower PUE and denser racks in the same hall",
                facility=w.facility.model_copy(update={"cooling": "dlc", "rack_power": None, "pue": None}),
                # a pinned GPU count stays; otherwise the cooler hall decides how many GPUs fit
                compute=same if w.compute.gpus is not None else rescaled.model_copy(update={"gpus": None}))
    return out


def _smaller_model_that_fits(w: TrainingWorkload, arch: ModelArch, catalog: Catalog, compile_fn: CompileFn,
                             compute: Any, target: float | None, out: list[dict[str, Any]]) -> None:
    """The largest model (shape from params) that has a layout on the capped GPUs: tried at 80%,
    60%, 40% and 20% of the parameters, each a recompile; the first that fits is reported."""
    params = param_counts(arch).total
    for fraction in (0.8, 0.6, 0.4, 0.2):
        alt = compile_fn(w.model_copy(update={"model": type(w.model)(params=params * fraction), "compute": compute},
                                      deep=True), catalog)
        if alt.feasible:
            out.append(_summary("smaller model", f"a {format_count(params * fraction)}-parameter model "
                                f"({fraction:.0%} of the size) fits the GPUs available", alt, target))
            return
