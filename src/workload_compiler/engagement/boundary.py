"""The operating boundary (seed 000, "Operations & Governance"): which actor runs, spares, RMAs,
answers incidents for, and governs the data of each layer.

Access model (bare metal, scheduler, Kubernetes, managed API) x layers (facility, compute,
firmware, fabric, storage, monitoring, and the software layers) x functions (operate, spares, RMA,
incidents, data lifecycle) x actors (client, proposed operator, facility, OEM). Every cell starts
`TO DEFINE`; the intake's `boundary.cells` set `proposed` or `confirmed` with who and when. The
tool never assigns an actor: the access model only suggests one for the software layers. "These
are target operating boundaries, not available service tiers."
"""

from __future__ import annotations

from pydantic import Field

from ..errors import InputError
from ..intake.boundary import BoundaryCellIntake, BoundaryIntake
from ..software.data import SoftwareData, software_data
from ..spine.doc import Doc


class BoundaryCell(Doc):
    layer: str
    layer_kind: str = Field(description="system layer | software layer")
    function: str
    actor: str | None = Field(default=None, description="None while TO DEFINE")
    status: str = Field(description="TO DEFINE | proposed | confirmed")
    who: str | None = None
    when: str | None = None
    suggestion: str | None = Field(default=None, description="what the access model suggests (not an assignment)")


class OperatingBoundary(Doc):
    access_model: str
    access_model_name: str
    operator_scope: str = Field(description="the access model's split in words")
    layers: list[str]
    functions: list[str]
    actors: list[str]
    cells: list[BoundaryCell]
    status_counts: dict[str, int]
    contractual_model: str
    note: str = "These are target operating boundaries, not available service tiers. Actual responsibilities " \
                "are confirmed only after the contractual chain is defined."
    source: str

    def cell(self, layer: str, function: str) -> BoundaryCell:
        for c in self.cells:
            if c.layer == layer and c.function == function:
                return c
        raise KeyError((layer, function))


def _pick(field: str, value: str, allowed: list[str], wildcard: bool = True) -> list[str]:
    if wildcard and value.strip().lower() == "all":
        return list(allowed)
    for name in allowed:
        if name.lower() == value.strip().lower():
            return [name]
    raise InputError(field, value, "one of " + ", ".join(allowed) + (" or all" if wildcard else ""))


def _apply(cells: dict[tuple[str, str], BoundaryCell], i: int, given: BoundaryCellIntake, layers: list[str],
           functions: list[str], actors: list[str]) -> None:
    where = f"boundary.cells[{i}]"
    actor = _pick(f"{where}.actor", given.actor, actors, wildcard=False)[0] if given.actor else None
    for layer in _pick(f"{where}.layer", given.layer, layers):
        for function in _pick(f"{where}.function", given.function, functions):
            old = cells[(layer, function)]
            cells[(layer, function)] = old.model_copy(update={
                "actor": actor if given.status != "TO DEFINE" else None, "status": given.status, "who": given.who,
                "when": given.when.isoformat() if given.when else None})


def operating_boundary(access_model: str, intake: BoundaryIntake,
                       data: SoftwareData | None = None) -> OperatingBoundary:
    """The boundary for one access model, with the intake's cells applied in order."""
    data = data or software_data()
    b = data.boundary
    access = data.access(access_model)
    layers = [*b.system_layers, *b.software_layers]
    functions = [b.operate_function, *b.operational_functions]
    actors = list(b.actors)
    cells: dict[tuple[str, str], BoundaryCell] = {}
    for layer in layers:
        kind = "software layer" if layer in b.software_layers else "system layer"
        for function in functions:
            suggested = access.suggested_operators.get(layer) if function == b.operate_function else None
            cells[(layer, function)] = BoundaryCell(
                layer=layer, layer_kind=kind, function=function, status=b.status_default,
                suggestion=f"{suggested} (the {access.name} access model)" if suggested else None)
    for i, given in enumerate(intake.cells):
        _apply(cells, i, given, layers, functions, actors)
    ordered = list(cells.values())
    counts = {s: sum(c.status == s for c in ordered) for s in b.cell_statuses}
    return OperatingBoundary(
        access_model=access.id, access_model_name=access.name, operator_scope=access.operator_scope, layers=layers,
        functions=functions, actors=actors, cells=ordered, status_counts=counts,
        contractual_model=b.contractual_model, source=b.source)


__all__ = ["BoundaryCell", "OperatingBoundary", "operating_boundary"]
