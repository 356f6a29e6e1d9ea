"""The inference and HPC archetypes through the same spine: their own objective/compute passes
(inference/compile.py, hpc/compile.py), then the shared fabric, software and facility layers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..catalog.loader import Catalog
from ..errors import CatalogGap
from ..intake.hpc import HpcWorkload
from ..intake.inference import InferenceWorkload
from ..intake.infrastructure import InfrastructureIntake
from ..provenance import Trace
from .infrastructure import build_fabric, build_facility, build_software, layer_dict
from .result import NotSized, SystemSpec


def _layers_below(spec: SystemSpec, w: InfrastructureIntake, catalog: Catalog, kind: str, trace: Trace) -> None:
    """Fabric, software and facility for the compute the archetype chose (gpus, system, layout)."""
    compute = spec.compute if isinstance(spec.compute, dict) else None
    if not spec.feasible or not compute or not compute.get("gpus"):
        return
    system = catalog.system(compute.get("system") or catalog.default_system(compute["accelerator"]).id)
    gpus = int(compute["gpus"])
    par = compute.get("parallelism") or {}
    tp, pp = int(par.get("tp", 1)), int(par.get("pp", 1))
    if gpus % (tp * pp):
        # Two pools of different shapes (disaggregated prefill/decode): the fabric sees replicas of
        # the decode pool's TP group; only placement checks depend on the shape.
        tp, pp = (tp, 1) if gpus % tp == 0 else (1, 1)
    layout = {"tp": tp, "pp": pp, "dp": gpus // (tp * pp), "cp": 1, "ep": int(par.get("ep", 1)), "etp": 1}
    fabric = switch = None
    if gpus > system.gpus_per_node:
        try:
            fabric, switch = build_fabric(system, catalog, w, gpus=gpus, layout=layout, trace=trace)
            spec.fabric = layer_dict(fabric)
        except CatalogGap as gap:   # a number the fabric needs is unknown: say so, do not guess
            spec.fabric = NotSized.from_gap(gap).model_dump()
    spec.facility = layer_dict(build_facility(system, fabric, switch, w, gpus=gpus, trace=trace))
    software = build_software(w, catalog.accelerator(compute["accelerator"]).vendor, kind, fabric=fabric,
                              multi_node=gpus > system.gpus_per_node, trace=trace)
    spec.software = layer_dict(software)


def _spec(kind: str, name: str | None, sections: dict[str, Any]) -> SystemSpec:
    known = set(SystemSpec.model_fields) - {"assumptions", "provenance", "kind", "name"}
    return SystemSpec(kind=kind, name=sections.get("name") or name,
                      **{k: v for k, v in sections.items() if k in known})


def archetype_spec(kind: str, w: Any, catalog: Catalog,
                   sections: Callable[[Any, Catalog, Trace], dict[str, Any]]) -> SystemSpec:
    """An archetype's own pass (`sections`), then the shared layers below it, one trace for both."""
    trace = Trace()
    spec = _spec(kind, w.name, sections(w, catalog, trace))
    _layers_below(spec, w, catalog, kind, trace)
    spec.assumptions, spec.provenance = trace.assumptions, trace.provenance
    return spec


def compile_inference_spec(w: InferenceWorkload, catalog: Catalog) -> SystemSpec:
    from ..inference.compile import compile_inference
    return archetype_spec("inference", w, catalog, compile_inference)


def compile_hpc_spec(w: HpcWorkload, catalog: Catalog) -> SystemSpec:
    from ..hpc.compile import compile_hpc
    return archetype_spec("hpc", w, catalog, compile_hpc)
