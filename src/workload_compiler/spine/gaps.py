"""Catalog gaps never fail a compile: the part a missing catalog number sizes comes back "not sized".

A layer whose own number is missing (a node power for the facility, a scale-up bandwidth for the
fabric) is marked where it is built (spine/infrastructure.py, spine/serving.py, hpc/compile.py).
A number the compute layer needs (a peak, an HBM bandwidth, a reference system) leaves nothing
to size below it: `gap_spec` returns the specification with what is known (the objective where it
can be computed), every layer from compute down marked not sized with the reason, and the gap as
the binding constraint. `collect_not_sized` lists the not-sized layers of any specification in
`SystemSpec.not_sized`, so a reader finds them without walking the layers.
"""

from __future__ import annotations

from typing import Any

from ..errors import CatalogGap
from .result import NotSized, SystemSpec

LAYERS_BELOW_OBJECTIVE = ("compute", "fabric", "storage", "software", "facility")


def binding_of(gap: CatalogGap) -> str:
    return f"catalog gap: {', '.join(gap.missing)} unknown, needed for {gap.needed_for}"


def gap_spec(kind: str, name: str | None, gap: CatalogGap, objective: Any = None) -> SystemSpec:
    """The specification when the compute layer cannot be sized: infeasible, the gap binding, the
    objective kept when given, every layer below it not sized (they need the compute layer's GPUs)."""
    below = NotSized(not_sized=f"not sized: needs the compute layer, which is not sized "
                               f"({', '.join(gap.missing)} unknown)", missing=list(gap.missing))
    sections: dict[str, Any] = {layer: below.model_dump() for layer in LAYERS_BELOW_OBJECTIVE}
    sections["compute"] = NotSized.from_gap(gap).model_dump()
    spec = SystemSpec(kind=kind, name=name, feasible=False, binding_constraint=binding_of(gap),
                      objective=objective, **sections)
    return collect_not_sized(spec)


def collect_not_sized(spec: SystemSpec) -> SystemSpec:
    """Fill `spec.not_sized` (layer -> reason) from the layers that carry a `not_sized` reason."""
    doc = spec.model_dump(include=set(SystemSpec.model_fields) - {"assumptions", "provenance", "not_sized"})
    for layer, section in doc.items():
        if isinstance(section, dict) and isinstance(section.get("not_sized"), str):
            spec.not_sized[layer] = section["not_sized"]
    return spec
