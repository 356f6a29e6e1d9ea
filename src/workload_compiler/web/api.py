"""The JSON API (documented by FastAPI's OpenAPI at /openapi.json, browsable at /docs): compile
with pins, the schemas, the examples, projects, revisions and their diffs."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from ..report.diff_view import sections as diff_sections
from ..store.revisions import RevisionInfo, diff_revisions, parse_rev, rev_label
from ..versions import versions
from .errors import ERROR_RESPONSES
from .forms import form_fields, kinds
from .runtime import runtime
from .sources import example_intake, example_names

router = APIRouter(prefix="/api", responses=ERROR_RESPONSES)

PinValue = str | int | float | bool | None
_EXAMPLE: dict[str, Any] = {"intake": {"kind": "training", "model": {"preset": "llama3-8b"},
                       "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 128},
                       "compute": {"accelerator": "h100-sxm", "gpus": 64}},
            "pins": {"facility.power": "1MW"}}


class CompileRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE]})

    intake: dict[str, Any] = Field(description="an intake as in YAML (see /api/schema/intake); units as text")
    pins: dict[str, PinValue] = Field(default_factory=dict, description="dotted intake key -> value, e.g. "
                                                                         "facility.power: 1.5MW; null unpins")


class CompileResponse(BaseModel):
    key: str = Field(description="id of (intake, pins); the page's figures and reports use it")
    compile_s: float = Field(description="server wall time of the compile (0 when cached)")
    cached: bool
    result: dict[str, Any] = Field(description="the result document (see /api/schema/result)")


class SaveRequest(CompileRequest):
    note: str = Field(default="", max_length=2000)


class RevisionOut(BaseModel):
    project: str
    revision: str
    number: int
    created_at: str
    note: str
    feasible: bool
    tool_version: str
    catalog_version: str
    schema_version: str


class RevisionFull(RevisionOut):
    intake: dict[str, Any]
    pins: dict[str, Any]
    result: dict[str, Any]


class ProjectOut(BaseModel):
    project: str
    revisions: int
    last_saved: str | None


class DiffRowOut(BaseModel):
    path: str
    old: str
    new: str
    kind: str


class DiffOut(BaseModel):
    project: str
    from_revision: str
    to_revision: str
    changes: dict[str, list[DiffRowOut]]


def _out(i: RevisionInfo) -> RevisionOut:
    return RevisionOut(project=i.project, revision=i.label, number=i.number, created_at=i.created_at.isoformat(),
                       note=i.note, feasible=i.feasible, tool_version=i.tool_version,
                       catalog_version=i.catalog_version, schema_version=i.schema_version)


@router.post("/compile", response_model=CompileResponse, summary="Compile an intake with pins")
def compile_api(request: Request, body: CompileRequest) -> CompileResponse:
    done = runtime(request).cache.compile(body.intake, dict(body.pins))
    return CompileResponse(key=done.key, compile_s=done.compile_s, cached=done.cached,
                           result=done.spec.model_dump(mode="json"))


@router.get("/schema/{name}", summary="The JSON Schema of the intake or the result")
def schema_api(name: str) -> Response:
    from ..errors import InputError
    from ..schema_export import NAMES, shipped
    if name not in NAMES:
        raise InputError("name", name, "intake or result")
    return Response(shipped(name), media_type="application/schema+json")


@router.get("/kinds", summary="The archetypes and the fields of each intake form")
def kinds_api() -> dict[str, list[dict[str, Any]]]:
    return {k: [asdict(f) for f in form_fields(k)] for k in kinds()}


@router.get("/versions", summary="Tool, catalog and schema versions")
def versions_api() -> dict[str, str]:
    return versions()


@router.get("/examples", summary="The bundled example intakes")
def examples_api() -> list[str]:
    return example_names()


@router.get("/examples/{name}", summary="One example intake")
def example_api(name: str) -> dict[str, Any]:
    return example_intake(name)


@router.get("/projects", response_model=list[ProjectOut], summary="Projects with their revision counts")
def projects_api(request: Request) -> list[ProjectOut]:
    return [ProjectOut(project=n, revisions=c, last_saved=t.isoformat() if t else None)
            for n, c, t in runtime(request).store().projects()]


@router.get("/projects/{project}/revisions", response_model=list[RevisionOut], summary="A project's revisions")
def revisions_api(request: Request, project: str) -> list[RevisionOut]:
    return [_out(i) for i in runtime(request).store().revisions(project)]


@router.post("/projects/{project}/revisions", response_model=RevisionOut, status_code=201,
             summary="Compile and save the next revision (append-only)")
def save_api(request: Request, project: str, body: SaveRequest) -> RevisionOut:
    rt = runtime(request)
    done = rt.cache.compile(body.intake, dict(body.pins))
    return _out(rt.store().save(project, body.intake, dict(body.pins), done.spec, body.note))


@router.get("/projects/{project}/revisions/{rev}", response_model=RevisionFull, summary="One stored revision")
def revision_api(request: Request, project: str, rev: str) -> RevisionFull:
    stored = runtime(request).store().revision(project, parse_rev(rev))
    return RevisionFull(**_out(stored.info).model_dump(), intake=stored.intake, pins=stored.pins, result=stored.result)


@router.get("/projects/{project}/diff/{rev_a}/{rev_b}", response_model=DiffOut, summary="What changed")
def diff_api(request: Request, project: str, rev_a: str, rev_b: str) -> DiffOut:
    store = runtime(request).store()
    a, b = parse_rev(rev_a, "rev_a"), parse_rev(rev_b, "rev_b")
    diff = diff_revisions(store.revision(project, a), store.revision(project, b))
    return DiffOut(project=project, from_revision=rev_label(a), to_revision=rev_label(b),
                   changes={h: [DiffRowOut(**asdict(r)) for r in rows] for h, rows in diff_sections(diff)})


def health() -> JSONResponse:
    return JSONResponse({"ok": True, **json.loads(json.dumps(versions()))})


__all__ = ["health", "router"]
