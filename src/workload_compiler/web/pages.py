"""The workbench pages: the intake, the layer view (htmx swaps of one block), saving revisions,
the projects and their diffs, report downloads. JSON lives in api.py."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from starlette.datastructures import UploadFile

from ..errors import InputError
from ..report.diff_view import sections as diff_sections
from ..spine.result import SystemSpec
from ..store.revisions import check_project_name, diff_revisions, parse_rev, rev_label
from .context import workbench_context
from .engine import Compiled
from .forms import intake_from_form, kinds, pin_fields, read_value
from .render import block, page
from .reports import report_response
from .runtime import runtime
from .sources import example_intake, example_names, model_from_hf, parse_yaml_text, state_from_json

router = APIRouter(include_in_schema=False)


def _kind(value: Any) -> str:
    known = kinds()
    if value not in known:
        raise InputError("kind", value, f"one of: {', '.join(known)}")
    return str(value)


def _bench(request: Request, ctx: dict[str, Any], status: int = 200) -> HTMLResponse:
    """The whole page, or for htmx only the workbench block (and the message area, out of band)."""
    if request.headers.get("hx-request"):
        body = bytes(block("workbench.html", "workbench", **ctx).body).decode()
        notes = bytes(block("_messages.html", "messages", **ctx).body).decode()
        return HTMLResponse(body + f'<div id="messages" hx-swap-oob="innerHTML">{notes}</div>', status_code=status)
    return page("workbench.html", status=status, **ctx)


def _compile_view(request: Request, kind: str, intake: dict[str, Any], pins: dict[str, Any], *,
                  prev_key: str = "", **extra: Any) -> HTMLResponse:
    compiled = runtime(request).cache.compile(intake, pins)
    previous = runtime(request).cache.get(prev_key) if prev_key else None
    response = _bench(request, workbench_context(kind, intake, pins, compiled, previous=previous, **extra))
    response.headers.append("server-timing", f"compile;dur={compiled.compile_s * 1e3:.2f}")
    return response


@router.get("/", response_class=HTMLResponse)
def home(request: Request, example: str | None = None, kind: str | None = None) -> HTMLResponse:
    rt = runtime(request)
    if kind is not None and example is None:
        k = _kind(kind)
        return _bench(request, workbench_context(k, {"kind": k}, {}, None))
    name = example or (rt.settings.example if rt.settings.example in example_names() else None)
    if name is None:
        return _bench(request, workbench_context("training", {"kind": "training"}, {}, None))
    intake = example_intake(name)
    return _compile_view(request, _kind(intake.get("kind")), intake, {}, example=name)


@router.get("/intake/{kind}", response_class=HTMLResponse)
def intake_tab(request: Request, kind: str) -> HTMLResponse:
    k = _kind(kind)
    return _bench(request, workbench_context(k, {"kind": k}, {}, None))


async def _form(request: Request) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
    """The posted fields, and the uploaded files as (file name, bytes) (the spooled files are closed)."""
    async with request.form() as form:
        values = {k: v for k, v in form.multi_items() if isinstance(v, str)}
        files = {k: (v.filename or k, await v.read()) for k, v in form.multi_items()
                 if isinstance(v, UploadFile) and v.filename}
    return values, files


def _page_state(values: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The intake and pins the page carries in its hidden fields."""
    return state_from_json(values.get("state_intake", "{}"), values.get("state_pins", "{}"))


@router.post("/compile", response_class=HTMLResponse)
async def compile_page(request: Request) -> HTMLResponse:
    values, files = await _form(request)
    kind = _kind(values.get("kind", "training"))
    _, pins = _page_state(values)
    source = values.get("source", "fields")
    notes: list[str] = []
    if source == "yaml":
        upload = files.get("yaml_file")
        text = upload[1].decode("utf-8", "replace") if upload else values.get("yaml", "")
        intake = parse_yaml_text(text)
        kind = _kind(intake.get("kind"))
    else:
        intake = intake_from_form(kind, values)
        if source == "hf":
            upload = files.get("hf_config")
            if upload is None:
                raise InputError("hf_config", None, "a config.json file to upload")
            model, notes = model_from_hf(upload[1], upload[0])
            intake["model"] = model
    return _compile_view(request, kind, intake, pins, prev_key=values.get("prev_key", ""), notes=notes,
                         project=values.get("project") or None)


@router.post("/pin", response_class=HTMLResponse)
async def pin_page(request: Request) -> HTMLResponse:
    values, _ = await _form(request)
    kind = _kind(values.get("kind", "training"))
    intake, pins = _page_state(values)
    layer = values.get("active_layer", "")
    fields = {f.key: f for f in pin_fields(kind, layer)}
    for name, text in values.items():
        if name.startswith("pin:") and name[4:] in fields and (v := read_value(fields[name[4:]], text)) is not None:
            pins[name[4:]] = v
    if values.get("unpin"):
        pins.pop(values["unpin"], None)
    return _compile_view(request, kind, intake, pins, prev_key=values.get("prev_key", ""), active_layer=layer,
                         project=values.get("project") or None)


@router.post("/save", response_class=HTMLResponse)
async def save_page(request: Request) -> HTMLResponse:
    values, _ = await _form(request)
    kind = _kind(values.get("kind", "training"))
    intake, pins = _page_state(values)
    project = check_project_name(values.get("save_project", ""))
    rt = runtime(request)
    compiled: Compiled = rt.cache.compile(intake, pins)
    info = rt.store().save(project, intake, pins, compiled.spec, values.get("note", ""))
    return _bench(request, workbench_context(kind, intake, pins, compiled, project=project, rev_label=info.label,
                                             active_layer=values.get("active_layer") or None, saved=info))


def with_sensitivity(spec: SystemSpec) -> SystemSpec:
    """A copy of `spec` with its sensitivity section (sizing/sensitivity.py), the cached one untouched."""
    from ..sizing.sensitivity import analyse
    copy = spec.model_copy()
    copy.sensitivity = analyse(spec)
    return copy


@router.get("/figure/{key}/{name}.svg")
def figure_svg(request: Request, key: str, name: str) -> Response:
    from ..report.figures import FIGURE_NAMES, figure
    if name not in FIGURE_NAMES:
        raise InputError("figure", name, f"one of: {', '.join(FIGURE_NAMES)}")
    found = runtime(request).cache.get(key)
    if found is None:
        return HTMLResponse('<p class="note">This plot is no longer cached: recompile to redraw it.</p>')
    spec = found.spec
    if name == "sensitivity" and spec.sensitivity is None:
        spec = with_sensitivity(spec)  # asked for: the tornado is computed once per state
    drawn = runtime(request).figure(key, name, lambda: figure(spec, name))
    return HTMLResponse(drawn or "", headers={"Cache-Control": "private, max-age=3600"})


@router.post("/report.{fmt}")
async def report_download(request: Request, fmt: str) -> Response:
    values, _ = await _form(request)
    intake, pins = _page_state(values)
    compiled = runtime(request).cache.compile(intake, pins)
    spec = compiled.spec if compiled.spec.sensitivity is not None or fmt == "md" else with_sensitivity(compiled.spec)
    return report_response(spec, intake, fmt, None)


@router.get("/projects", response_class=HTMLResponse)
def projects_page(request: Request) -> HTMLResponse:
    rt = runtime(request)
    return page("projects.html", projects=rt.store().projects(), store_label=rt.store_label)


@router.get("/projects/{project}", response_class=HTMLResponse)
def project_page(request: Request, project: str) -> HTMLResponse:
    return page("project.html", project=project, revisions=runtime(request).store().revisions(project))


@router.get("/projects/{project}/rev/{rev}", response_class=HTMLResponse)
def revision_page(request: Request, project: str, rev: str) -> HTMLResponse:
    stored = runtime(request).store().revision(project, parse_rev(rev))
    kind = _kind(stored.intake.get("kind"))
    return _compile_view(request, kind, stored.intake, stored.pins, project=project, rev_label=stored.info.label)


@router.get("/projects/{project}/rev/{rev}/report.{fmt}")
def revision_report(request: Request, project: str, rev: str, fmt: str) -> Response:
    """The report of a stored revision: its stored result, not a recompile (a revision never changes)."""
    stored = runtime(request).store().revision(project, parse_rev(rev))
    return report_response(stored.spec(), stored.intake, fmt, stored.info)


@router.get("/projects/{project}/diff", response_class=HTMLResponse)
def diff_page(request: Request, project: str, a: str, b: str) -> HTMLResponse:
    store = runtime(request).store()
    ra, rb = parse_rev(a, "a"), parse_rev(b, "b")
    diff = diff_revisions(store.revision(project, ra), store.revision(project, rb))
    return page("diff.html", project=project, a_label=rev_label(ra), b_label=rev_label(rb), parts=diff_sections(diff),
                project_url=quote(project))


__all__ = ["router"]
