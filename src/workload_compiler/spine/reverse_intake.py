"""Watts to work for any intake: the same workload in the same hall, on each system.

For each system (the intake's own, or the reference system of each current accelerator) the hall
fit says how many GPUs fit and what binds; the intake is then compiled with the hall pinned
(`facility.power`, `rack_power`, `cooling`, ...) through the one compile path, and the row says
what the hall does with the workload: the time to train, the tokens/s it serves at the SLO (as
replicas of so many GPUs), or the time to solution.
"""

from __future__ import annotations

from typing import Any

from ..catalog.loader import Catalog
from ..errors import WkcError
from ..facility import Hall, fit_hall
from ..intake.infrastructure import InfrastructureIntake
from ..units import format_count, format_duration, format_power
from .doc import plain
from .result import SystemSpec
from .reverse import DEFAULT_SYSTEMS


def hall_pins(hall: Hall) -> dict[str, Any]:
    pins: dict[str, Any] = {"facility.power": hall.power_w, "facility.power_basis": hall.power_basis,
                            "facility.rack_power": hall.rack_power_w, "facility.cooling": hall.cooling}
    if hall.pue is not None:
        pins["facility.pue"] = hall.pue
    if hall.floor_area_m2 is not None:
        pins["facility.floor_area_m2"] = hall.floor_area_m2
    return pins


def _systems(data: dict[str, Any], catalog: Catalog, hall: Hall) -> list[str]:
    compute = data.get("compute") or {}
    if compute.get("system"):
        return [str(compute["system"])]
    if compute.get("accelerator"):
        return [catalog.default_system(catalog.accelerator(str(compute["accelerator"])).id).id]
    systems = [s for s in DEFAULT_SYSTEMS if s in catalog.systems]
    return [s for s in systems if hall.gpu is None or catalog.system(s).accelerator == hall.gpu]


def answer(spec: SystemSpec, hall: Hall, hall_gpus: int | None = None) -> dict[str, Any]:
    """The row's answer keys, by archetype, with one sentence that says it (`hall_gpus`: what the hall
    holds of the system, to say what share of it a given load needs)."""
    where = f"this {format_power(hall.power_w)} hall at {format_power(hall.rack_power_w)} a rack"
    if not spec.feasible and spec.kind != "hpc":
        return {"answer": f"{where} cannot: {spec.binding_constraint}", "answer_feasible": False}
    compute = plain(spec.compute)
    if spec.kind == "inference":
        inf, obj = plain(spec.inference), plain(spec.objective)
        tps = float(inf.get("request_rate_per_s") or 0.0) * float(obj.get("output_tokens") or 0.0)

        def at(k: str) -> str:
            pct = str(inf.get(f"{k}_percentile") or "p99")
            value = format_duration(float(inf[f"{k}_s"]))
            # a percentile ('p99', 'mean') before the value; a sentence (offline: no queue) after it
            return f"{k.upper()} {pct} {value}" if " " not in pct else f"{k.upper()} {value} ({pct})"
        slo = ", ".join(at(k) for k in ("ttft", "tpot") if inf.get(f"{k}_s") is not None)
        spares = int(inf.get("spare_replicas") or 0)
        acc = compute.get("accelerator")
        if inf.get("mode") == "disaggregated":
            p, d = inf.get("prefill_pool") or {}, inf.get("decode_pool") or {}
            spares = int(d.get("spare_replicas") or 0)
            shape = (f"{p.get('replicas')} prefill replicas of {p.get('gpus_per_replica')} + {d.get('replicas')} "
                     f"decode replicas of {d.get('gpus_per_replica')} {acc} GPUs (N+{spares} per pool)")
        else:
            shape = f"{inf.get('replicas')} replicas of {inf.get('gpus_per_replica')} {acc} GPUs" + (
                f" (N+{spares})" if spares else "")
        gpus = compute.get("gpus")
        # a load the intake gives takes what it needs of the hall; without one, the fleet fills it
        share = (f" on {gpus:,} of the {hall_gpus:,} GPUs it holds" if isinstance(gpus, int) and hall_gpus
                 and gpus < hall_gpus else "")
        return {"answer_feasible": True, "serve_gpus": gpus, "replicas": inf.get("replicas"),
                "gpus_per_replica": inf.get("gpus_per_replica"), "output_tokens_per_s": tps,
                "request_rate_per_s": inf.get("request_rate_per_s"), "ttft_s": inf.get("ttft_s"),
                "tpot_s": inf.get("tpot_s"),
                "mode": inf.get("mode"),
                "answer": f"{where} serves {format_count(tps)} output tokens/s of {obj.get('model')} at {slo}"
                          f"{share}: {shape}"}
    if spec.kind == "hpc":
        h = plain(spec.hpc)
        t = h.get("time_to_solution_s")
        if t is None:
            return {"answer": f"{where} cannot: {spec.binding_constraint}", "answer_feasible": False}
        return {"answer_feasible": True, "solve_gpus": compute.get("gpus"), "time_to_solution_s": t,
                "time_per_step_s": h.get("time_per_step_s"),
                "meets_target": plain(spec.objective).get("meets_target"),
                "answer": f"{where} solves it in {format_duration(float(t))} on "
                          f"{_gpus(compute.get('gpus'), compute.get('accelerator'))}"}
    from .result import ObjectiveLayer
    o = spec.objective
    t = (o.goodput_adjusted_time_to_train_s or o.time_to_train_s) if isinstance(o, ObjectiveLayer) else None
    return {"answer_feasible": True, "train_gpus": compute.get("gpus"), "time_to_train_s": t,
            "answer": f"{where} trains it in {format_duration(t or 0.0)} on "
                      f"{_gpus(compute.get('gpus'), compute.get('accelerator'))}"}


def _gpus(gpus: Any, accelerator: Any = None) -> str:
    """'7,168 gb200 GPUs', '1 h200-sxm GPU': a count as the rest of the report writes it."""
    count = f"{gpus:,}" if isinstance(gpus, int) else str(gpus)
    return f"{count} {accelerator + ' ' if accelerator else ''}GPU{'' if gpus == 1 else 's'}"


def _fastest(row: dict[str, Any], spec: SystemSpec) -> None:
    """HPC with a target: beside the fewest GPUs that meet it, the fastest solve the hall allows."""
    t = plain(spec.hpc).get("time_to_solution_s")
    gpus = plain(spec.compute).get("gpus")
    if t is None or gpus is None:
        return
    row.update(fastest_time_to_solution_s=t, fastest_gpus=gpus)
    row["answer"] += f"; at best {format_duration(float(t))} on {_gpus(gpus)} (the fastest the hall allows)"


def fit_intake_in_hall(hall: Hall, data: dict[str, Any], catalog: Catalog) -> list[dict[str, Any]]:
    """One row per system: the hall fit and what the hall does with the intake's workload."""
    from ..compile import recompile
    from ..intake.load import parse_workload
    from .infrastructure import hall_equipment
    w = parse_workload(data)
    assert isinstance(w, InfrastructureIntake)
    rows = []
    for system_id in _systems(data, catalog, hall):
        system = catalog.system(system_id)
        fit = fit_hall(hall, [system], equipment_for=hall_equipment(system, catalog, w))[0]
        row: dict[str, Any] = fit.model_dump(mode="json")
        if fit.feasible and fit.gpus > 0:
            pins = {**hall_pins(hall), "compute.accelerator": system.accelerator, "compute.system": system.id}
            try:
                row.update(answer(recompile(data, pins, catalog, alternatives=False), hall, fit.gpus))
                if data.get("kind") == "hpc" and data.get("target"):
                    _fastest(row, recompile(data, {**pins, "target": None}, catalog, alternatives=False))
            except WkcError as exc:
                row.update(answer_feasible=False, answer=f"not compiled: {exc}")
        rows.append(row)
    return rows
