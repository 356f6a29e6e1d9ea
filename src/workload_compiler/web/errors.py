"""Every error the server answers is a page (or, for the API and htmx, JSON or a fragment) that
names the field, the value and what is allowed; never a stack trace. Unexpected exceptions are
logged on the server with their traceback and answered 500 with the exception's class only."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException

from ..errors import Infeasible, InputError, WkcError
from .render import block, page

log = logging.getLogger("workload_compiler.web")


class Problem(BaseModel):
    field: str
    message: str


class ErrorDetail(BaseModel):
    status: int
    field: str
    message: str
    value: Any = None
    allowed: str | None = None
    problems: list[Problem] = []


class ErrorBody(BaseModel):
    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text} for code, text in (
        (401, "the access token is missing or wrong"), (404, "no such project, revision or figure"),
        (409, "the workload is infeasible and the compiler raised instead of answering"),
        (413, "the request body is over the limit"), (422, "an input is not allowed: the field is named"),
        (429, "too many requests"), (503, "the database is unavailable"))}


def _shown(value: Any) -> Any:
    text = repr(value) if not isinstance(value, str | int | float | bool | type(None)) else value
    return text[:200] if isinstance(text, str) else text


def _loc(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path")]
    return ".".join(parts) or "(request)"


def detail_for(exc: Exception) -> ErrorDetail:
    if isinstance(exc, InputError):
        return ErrorDetail(status=422, field=exc.field, message=str(exc), value=_shown(exc.value), allowed=exc.allowed)
    if isinstance(exc, ValidationError | RequestValidationError):
        errors = exc.errors()
        problems = [Problem(field=_loc(e.get("loc", ())), message=str(e.get("msg", ""))) for e in errors]
        first = problems[0] if problems else Problem(field="(request)", message="invalid input")
        return ErrorDetail(status=422, field=first.field, message="; ".join(f"{p.field}: {p.message}"
                                                                          for p in problems[:8]), problems=problems)
    if isinstance(exc, Infeasible):
        return ErrorDetail(status=409, field=exc.binding, message=exc.detail)
    if isinstance(exc, WkcError):
        status = 503 if exc.__class__.__name__ == "StoreUnavailable" else 422
        return ErrorDetail(status=status, field="(server)" if status == 503 else "(input)", message=str(exc))
    if isinstance(exc, HTTPException):
        return ErrorDetail(status=exc.status_code, field="(request)", message=str(exc.detail))
    return ErrorDetail(status=500, field="(server)",
                       message=f"internal error ({exc.__class__.__name__}); it is logged on the server")


def respond(request: Request, exc: Exception) -> Response:
    detail = detail_for(exc)
    if detail.status == 500:
        log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    if request.headers.get("hx-request") and not request.url.path.startswith("/api"):
        # swapped into the message area of the page the person is on (htmx swaps 4xx: see base.html)
        return block("_messages.html", "messages", status=detail.status, error=detail,
                     headers={"HX-Retarget": "#messages", "HX-Reswap": "innerHTML"})
    if request.url.path.startswith("/api") or "text/html" not in request.headers.get("accept", "text/html"):
        return JSONResponse({"error": detail.model_dump()}, status_code=detail.status)
    return page("error.html", status=detail.status, error=detail)


def install(app: FastAPI) -> None:
    for cls in (InputError, ValidationError, RequestValidationError, WkcError, HTTPException, Exception):
        app.add_exception_handler(cls, respond)


__all__ = ["ERROR_RESPONSES", "ErrorBody", "ErrorDetail", "detail_for", "install", "respond"]
