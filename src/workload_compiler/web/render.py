"""Templates: the web app's own (web/templates) over the report's (report/templates), one Jinja2
environment; `block` renders one block of a page for an htmx swap (jinja2-fragments)."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from jinja2_fragments import render_block

from ..report.html import stylesheet, template_dirs
from ..report.view import value_text


@functools.cache
def environment() -> Environment:
    own = str(resources.files("workload_compiler").joinpath("web/templates"))
    env = Environment(loader=FileSystemLoader([own, *template_dirs()]),
                      autoescape=select_autoescape(["html", "j2"], default_for_string=True))
    env.globals["report_css"] = stylesheet
    env.filters["value"] = lambda v, key="": value_text(key, v)
    return env


def page(name: str, status: int = 200, headers: dict[str, str] | None = None, **context: Any) -> HTMLResponse:
    return HTMLResponse(environment().get_template(name).render(**context), status_code=status, headers=headers)


def block(name: str, block_name: str, status: int = 200, headers: dict[str, str] | None = None,
          **context: Any) -> HTMLResponse:
    return HTMLResponse(render_block(environment(), name, block_name, **context), status_code=status, headers=headers)


__all__ = ["block", "environment", "page"]
