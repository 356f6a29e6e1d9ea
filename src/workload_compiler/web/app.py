"""The web application: `create_app(settings)` wires the pages, the API, the static files
(htmx vendored in the package), the error pages and the guard (token, rate, body size)."""

from __future__ import annotations

from importlib import resources

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from ..store.revisions import Store
from ..versions import tool_version
from . import api, errors, pages
from .guard import Guard
from .runtime import Runtime
from .settings import Settings


def create_app(settings: Settings | None = None, store: Store | None = None) -> FastAPI:
    """The FastAPI app, the guard in front of it. `store` overrides the database URL."""
    s = (settings or Settings()).checked()
    app = FastAPI(title="Workload compiler", version=tool_version(),
                  description="Size GPU infrastructure from the workload up: compile an intake (with pins) into "
                              "the six-layer system specification; save revisions; diff them.")
    app.state.runtime = Runtime(s, store)
    static = resources.files("workload_compiler").joinpath("web/static")
    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    app.add_api_route("/healthz", api.health, methods=["GET"], summary="Liveness and versions")
    errors.install(app)
    app.add_middleware(Guard, settings=s)
    return app


__all__ = ["create_app"]
