"""The generic archetype through the same spine: its own data-path pass (generic/compile.py), then
the shared fabric, software and facility layers, the way inference and HPC go (spine/serving.py)."""

from __future__ import annotations

from ..catalog.loader import Catalog
from ..intake.generic import GenericWorkload
from ..provenance import Trace
from .result import SystemSpec
from .serving import _layers_below, _spec


def compile_generic_spec(w: GenericWorkload, catalog: Catalog) -> SystemSpec:
    from ..generic.compile import compile_generic
    trace = Trace()
    spec = _spec("generic", w.name, compile_generic(w, catalog, trace))
    _layers_below(spec, w, catalog, "generic", trace)
    spec.assumptions, spec.provenance = trace.assumptions, trace.provenance
    return spec
