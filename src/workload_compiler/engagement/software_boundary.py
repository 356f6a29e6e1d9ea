"""`software.boundary`: the compact view of the operating boundary and the boundary register that
the software layer carried before they became top-level sections (`operating_boundary`,
`boundary_register`). Result keys are a contract, so the first shape stays, filled from the new
sections: a row per layer (its Operate cell) and per operational function (agreed across the
layers, or TO DEFINE), and the five register items."""

from __future__ import annotations

from pydantic import Field

from ..spine.doc import Doc
from .boundary import OperatingBoundary
from .register import BoundaryRegister

_ORDER = ("TO DEFINE", "proposed", "confirmed")   # a summary row is as decided as its least decided cell


class BoundaryRow(Doc):
    layer: str
    kind: str = Field(description="system layer | software layer | operational function")
    operator: str | None = Field(default=None, description="None until the contractual chain defines it")
    candidates: list[str]
    status: str
    suggestion: str | None = None


class RegisterEntry(Doc):
    id: str
    title: str
    question: str
    decided_by: str
    status: str
    sizing_input: str | None = None


class SoftwareBoundary(Doc):
    access_model: str
    rows: list[BoundaryRow]
    entries: list[RegisterEntry] = Field(description="the five register items of seed 000")
    contractual_model: str
    note: str
    source: str
    full: str = "operating_boundary and boundary_register hold every cell and item"


def software_boundary(b: OperatingBoundary, r: BoundaryRegister) -> SoftwareBoundary:
    operate = b.functions[0]
    rows = []
    for layer in b.layers:
        c = b.cell(layer, operate)
        rows.append(BoundaryRow(layer=layer, kind=c.layer_kind, operator=c.actor, candidates=list(b.actors),
                                status=c.status, suggestion=c.suggestion))
    for function in b.functions[1:]:
        cells = [b.cell(layer, function) for layer in b.layers]
        status = min((c.status for c in cells), key=lambda s: _ORDER.index(s) if s in _ORDER else 0)
        actors = {c.actor for c in cells}
        rows.append(BoundaryRow(layer=function, kind="operational function", candidates=list(b.actors),
                                operator=actors.pop() if len(actors) == 1 else None, status=status))
    entries = [RegisterEntry(id=i.id, title=i.title, question=i.question, decided_by=i.decided_by, status=i.status,
                             sizing_input=i.answer if i.id == "01" else i.sizing_view) for i in r.items]
    return SoftwareBoundary(access_model=b.access_model, rows=rows, entries=entries,
                            contractual_model=b.contractual_model, note=r.note, source=b.source)


__all__ = ["BoundaryRow", "RegisterEntry", "SoftwareBoundary", "software_boundary"]
