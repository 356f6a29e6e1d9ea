"""`wkc serve`: the workbench in a browser (FastAPI + htmx, served from the package; works offline).

Binds 127.0.0.1 unless told otherwise; any other address needs a token (--token or $WKC_TOKEN)
and the server refuses to start without one. The database (SQLite file by default, PostgreSQL by
$WKC_DATABASE_URL) is migrated at start and its location printed.
"""

from __future__ import annotations

import secrets
from typing import Annotated

import typer

from .common import err, user_errors
from .store_common import DbOption


def serve_command(
    host: Annotated[str, typer.Option("--host", help="address to bind; beyond loopback a token is required")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port")] = 8000,
    token: Annotated[str | None, typer.Option("--token", help="access token (or $WKC_TOKEN); 'generate' makes one",
                                              envvar="WKC_TOKEN", show_envvar=True)] = None,
    db: DbOption = None,
    rate: Annotated[int, typer.Option("--rate", help="requests a minute per client (0: no limit)")] = 600,
    max_body: Annotated[int, typer.Option("--max-body", help="largest request body, bytes")] = 2 * 1024 * 1024,
) -> None:
    """Serve the workbench: intake, layer view with pins, revisions, diffs and reports."""
    from ..extras import require_extra

    with user_errors():
        require_extra("web")
        from ..store.revisions import Store
        from ..web.app import create_app
        from ..web.settings import Settings

        if token == "generate":
            token = secrets.token_urlsafe(24)
        settings = Settings(host=host, port=port, token=token, database_url=db, rate_per_minute=rate,
                            max_body_bytes=max_body).checked()
        store = Store.open(db)
        from ..store.db import describe

        err.print(f"database: {describe(store.url)}", highlight=False)
        app = create_app(settings, store)
    shown = "localhost" if host in ("127.0.0.1", "::1") else host
    url = f"http://{shown}:{port}/" + (f"?token={settings.token}" if settings.token else "")
    err.print(f"workbench: {url}", highlight=False)
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
