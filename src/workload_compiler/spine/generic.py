"""The generic archetype through the same spine: its own data-path pass (generic/compile.py), then
the shared fabric, software and facility layers, the way inference and HPC go (spine/serving.py)."""

from __future__ import annotations

from ..catalog.loader import Catalog
from ..intake.generic import GenericWorkload
from .result import SystemSpec
from .serving import archetype_spec


def compile_generic_spec(w: GenericWorkload, catalog: Catalog) -> SystemSpec:
    from ..generic.compile import compile_generic
    return archetype_spec("generic", w, catalog, compile_generic)
