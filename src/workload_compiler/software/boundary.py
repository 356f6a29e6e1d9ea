"""The operating boundary and the boundary register (seed 000).

Who operates which layer is never decided by the tool: every row starts 'TO DEFINE' with the four
candidate actors (Client, Proposed operator, Facility, OEM). The access model only suggests a
split, marked as a suggestion. The five register items are open questions, each with the party
that decides it; item 01 (resource scope) is filled from the sizing when the caller passes it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .data import AccessModel, SoftwareData


class BoundaryRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    layer: str
    kind: str = Field(description="system layer | software layer | operational function")
    operator: str | None = Field(default=None, description="None until the contractual chain defines it")
    candidates: list[str]
    status: str
    suggestion: str | None = None


class RegisterEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    question: str
    decided_by: str
    status: str = "OPEN"
    sizing_input: str | None = None


class BoundaryRegister(BaseModel):
    model_config = ConfigDict(extra="forbid")

    access_model: str
    rows: list[BoundaryRow]
    entries: list[RegisterEntry] = Field(description="the five register items of seed 000")
    contractual_model: str
    note: str
    source: str


def boundary_register(
    *, access: AccessModel, data: SoftwareData, resource_scope: str | None = None
) -> BoundaryRegister:
    """All rows TO DEFINE; software rows carry the access model's suggested split."""
    b = data.boundary
    rows = [
        BoundaryRow(
            layer=layer,
            kind=kind,
            candidates=list(b.actors),
            status=b.status_default,
            suggestion=access.operator_scope if kind == "software layer" else None,
        )
        for kind, layers in (
            ("system layer", b.system_layers),
            ("software layer", b.software_layers),
            ("operational function", b.operational_functions),
        )
        for layer in layers
    ]
    register = [
        RegisterEntry(
            id=i.id,
            title=i.title,
            question=i.question,
            decided_by=i.decided_by,
            sizing_input=resource_scope if i.id == "01" else None,
        )
        for i in b.register_items
    ]
    return BoundaryRegister(
        access_model=access.id,
        rows=rows,
        entries=register,
        contractual_model=b.contractual_model,
        note=b.note,
        source=b.source,
    )
