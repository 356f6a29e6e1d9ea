"""The inference and HPC archetypes through the same spine: their own objective/compute passes
(inference/compile.py, hpc/compile.py), then the shared fabric, software and facility layers, the
cost layer and (with `with_alternatives`) the collision engine.

A pinned hall (`facility.power`) caps the GPUs of both: the inference fleet is searched within what
the hall holds of each candidate accelerator's system (without a request rate the fleet fills the
hall: "this hall serves N tokens/s"); an HPC job without a time target runs on the count the hall
allows that solves fastest ("time to solution in this hall").
"""

from __future__ import annotations

from typing import Any

from ..catalog.loader import Catalog
from ..catalog.schema import System
from ..errors import CatalogGap
from ..intake.hpc import HpcWorkload
from ..intake.inference import InferenceWorkload
from ..intake.infrastructure import InfrastructureIntake
from ..provenance import Trace
from ..sizing.hall import describe, hall_fit
from .doc import plain
from .infrastructure import build_fabric, build_facility, build_software
from .result import NotSized, SystemSpec


def _layers_below(spec: SystemSpec, w: InfrastructureIntake, catalog: Catalog, kind: str, trace: Trace) -> None:
    """Fabric, software and facility for the compute the archetype chose (gpus, system, layout)."""
    compute = None if isinstance(spec.compute, NotSized) else spec.compute
    if not spec.feasible or compute is None or not compute.get("gpus"):
        return
    system = catalog.system(compute.get("system") or catalog.default_system(compute["accelerator"]).id)
    gpus = int(compute["gpus"])
    par = compute.get("parallelism") or {}
    tp, pp = int(par.get("tp") or 1), int(par.get("pp") or 1)
    if gpus % (tp * pp):
        # Two pools of different shapes (disaggregated prefill/decode): the fabric sees replicas of
        # the decode pool's TP group; only placement checks depend on the shape.
        tp, pp = (tp, 1) if gpus % tp == 0 else (1, 1)
    layout = {"tp": tp, "pp": pp, "dp": gpus // (tp * pp), "cp": 1, "ep": int(par.get("ep") or 1), "etp": 1}
    fabric = switch = None
    try:   # one node: its scale-up domain and no scale-out switch (tiers 0), as a one-node training
        fabric, switch = build_fabric(system, catalog, w, gpus=gpus, layout=layout, trace=trace)
        spec.fabric = fabric
    except CatalogGap as gap:   # a number the fabric needs is unknown: say so, do not guess
        spec.fabric = NotSized.from_gap(gap)
    spec.facility = build_facility(system, fabric, switch, w, gpus=gpus, trace=trace)
    software = build_software(w, catalog.accelerator(compute["accelerator"]).vendor, kind, fabric=fabric,
                              multi_node=gpus > system.gpus_per_node, trace=trace)
    spec.software = software


def _spec(kind: str, name: str | None, sections: dict[str, Any]) -> SystemSpec:
    known = set(SystemSpec.model_fields) - {"assumptions", "provenance", "kind", "name"}
    return SystemSpec(kind=kind, name=sections.get("name") or name,
                      **{k: v for k, v in sections.items() if k in known})


def _finish(spec: SystemSpec, w: InferenceWorkload | HpcWorkload, catalog: Catalog, trace: Trace,
            with_alternatives: bool) -> SystemSpec:
    from ..cost.section import cost_section, mirror_inference_keys
    spec.cost = cost_section(spec, catalog, w.cost, trace)
    if spec.cost is not None and spec.kind == "inference":
        mirror_inference_keys(spec, spec.cost)
    spec.assumptions, spec.provenance = trace.assumptions, trace.provenance
    if with_alternatives:
        from ..sizing.engine import attach
        attach(spec, w, catalog)
    return spec


def _hall_cap(w: InferenceWorkload | HpcWorkload, system_id: str, catalog: Catalog, trace: Trace) -> int | None:
    """GPUs of `system_id` the pinned hall holds (0 when not one unit fits); None without a hall."""
    fit = hall_fit(w, system_id, catalog)
    if fit is None:
        return None
    trace.derived("facility.hall_gpus", fit.gpus, f"{describe(w.facility)}: {fit.binding} binds ({fit.detail})")
    return fit.gpus


def _capped(w: Any, cap: int) -> Any:
    compute = w.compute.model_copy(update={"max_gpus": min(cap, w.compute.max_gpus or cap)})
    return w.model_copy(update={"compute": compute})


def _hall_infeasible(kind: str, w: Any, system_id: str) -> SystemSpec:
    return SystemSpec(kind=kind, name=w.name, feasible=False,
                      binding_constraint=f"hall: no {system_id} fits in {describe(w.facility)}")


def _inference_once(w: InferenceWorkload, catalog: Catalog, trace: Trace) -> SystemSpec:
    from ..inference.compile import compile_inference
    spec = _spec("inference", w.name, compile_inference(w, catalog, trace))
    _layers_below(spec, w, catalog, "inference", trace)
    return spec


def _inference_in_hall(w: InferenceWorkload, catalog: Catalog, trace: Trace) -> SystemSpec:
    """The fleet within what the hall holds of each candidate accelerator; the best by the search's
    own rank (fewest GPUs, then most output tokens/s per GPU)."""
    from ..inference.resolve import DEFAULT_CANDIDATES
    c = w.compute
    if c.accelerator is not None or c.system is not None:
        acc = catalog.accelerator(c.accelerator or catalog.system(str(c.system)).accelerator).id
        candidates = [(acc, c.system or catalog.default_system(acc).id)]
    else:
        candidates = [(a, catalog.default_system(a).id) for a in DEFAULT_CANDIDATES]
    best: tuple[tuple[float, float], SystemSpec, Trace] | None = None
    for acc, system_id in candidates:
        t = Trace()
        cap = _hall_cap(w, system_id, catalog, t)
        if not cap:
            continue
        fill = w.serving.request_rate is None and w.serving.concurrency is None and w.compute.gpus is None
        pinned = w.compute.model_copy(update={"accelerator": acc, "system": system_id,
                                              **({"gpus": min(cap, w.compute.max_gpus or cap)} if fill else {})})
        if fill:   # no load given: the fleet fills the hall, and the answer is what it serves
            t.derived("compute.gpus", pinned.gpus, "no request rate: every GPU the hall holds serves")
        variant = _capped(w.model_copy(update={"compute": pinned}), cap)
        spec = _inference_once(variant, catalog, t)
        if spec.feasible and spec.compute is not None and not isinstance(spec.compute, NotSized):
            inf = plain(spec.inference)
            key = (float(spec.compute["gpus"]), -float(inf.get("output_tokens_per_s_per_gpu") or 0.0))
            if best is None or key < best[0]:
                best = (key, spec, t)
    if best is None:
        return _hall_infeasible("inference", w, candidates[0][1])
    _, spec, t = best
    trace.provenance.update(t.provenance)
    trace.assumptions[:] = t.assumptions
    if len(candidates) > 1:
        trace.assumed("compute.accelerator", [a for a, _ in candidates],
                      "not given: each candidate searched within what the hall holds of its reference system")
    return spec


def compile_inference_spec(w: InferenceWorkload, catalog: Catalog, *, with_alternatives: bool = True) -> SystemSpec:
    trace = Trace()
    spec = _inference_in_hall(w, catalog, trace) if w.facility.power is not None else _inference_once(
        w, catalog, trace)
    return _finish(spec, w, catalog, trace, with_alternatives)


def _hpc_once(w: HpcWorkload, catalog: Catalog, trace: Trace) -> SystemSpec:
    """The HPC passes; with fabric pins, once more on the fabric of the count chosen (the pins'
    effective scale-out bandwidth depends on how many GPUs share the leaf switches)."""
    from ..hpc.compile import compile_hpc
    sections = compile_hpc(w, catalog, trace)
    compute = sections.get("compute") or {}
    if w.fabric != type(w.fabric)() and compute.get("gpus"):
        system = catalog.system(str(compute["system"]))
        bw = _hpc_scale_out(w, system, catalog, int(compute["gpus"]), trace)
        if bw is not None:
            sections = compile_hpc(w, catalog, trace, scale_out_bytes_per_s=bw)
    spec = _spec("hpc", w.name, sections)
    _layers_below(spec, w, catalog, "hpc", trace)
    return spec


def _hpc_scale_out(w: HpcWorkload, system: System, catalog: Catalog, gpus: int, trace: Trace) -> float | None:
    from .fabric_pins import compute_switch, scale_out_effect
    effect = scale_out_effect(w.fabric, system, compute_switch(w.fabric, system, catalog), gpus)
    if effect.effective_bytes_per_s == effect.line_bytes_per_s and w.fabric.nic_bandwidth is None:
        return None
    trace.derived("compute.scale_out_bytes_per_s_per_gpu", effect.effective_bytes_per_s, effect.formula)
    return effect.effective_bytes_per_s


def _hpc_in_hall(w: HpcWorkload, catalog: Catalog, trace: Trace) -> SystemSpec:
    """Capped at what the hall holds; without a time target (and no pinned count), on the count of the
    strong-scaling table that solves fastest within the hall."""
    from ..hpc.resolve import DEFAULT_ACCELERATOR
    c = w.compute
    acc = catalog.accelerator(c.accelerator or (catalog.system(c.system).accelerator if c.system
                                                 else DEFAULT_ACCELERATOR)).id
    system_id = c.system or catalog.default_system(acc).id
    cap = _hall_cap(w, system_id, catalog, trace)
    if not cap:
        return _hall_infeasible("hpc", w, system_id)
    capped = _capped(w, cap)
    targeted = any(v is not None for v in w.target.model_dump().values())
    if targeted or c.gpus is not None:
        return _hpc_once(capped, catalog, trace)
    # the strong-scaling table of the full hall covers every doubling up to what it holds
    full = _hpc_once(capped.model_copy(update={"compute": capped.compute.model_copy(update={"gpus": cap})}),
                     catalog, Trace())
    rows = (plain(full.hpc).get("scaling") or {}).get("strong") or []
    if not rows:
        return _hpc_once(capped, catalog, trace)
    fastest = min((r for r in rows if r["gpus"] <= cap), key=lambda r: r["time_per_step_s"])
    pinned = capped.compute.model_copy(update={"gpus": int(fastest["gpus"])})
    spec = _hpc_once(capped.model_copy(update={"compute": pinned}), catalog, trace)
    trace.derived("compute.gpus", fastest["gpus"], "the count the hall allows that solves fastest "
                  "(strong-scaling table, no time target)")
    return spec


def compile_hpc_spec(w: HpcWorkload, catalog: Catalog, *, with_alternatives: bool = True) -> SystemSpec:
    trace = Trace()
    spec = _hpc_in_hall(w, catalog, trace) if w.facility.power is not None else _hpc_once(w, catalog, trace)
    return _finish(spec, w, catalog, trace, with_alternatives)
