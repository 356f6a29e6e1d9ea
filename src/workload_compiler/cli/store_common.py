"""What the revision commands share: opening the store named by $WKC_DATABASE_URL (or --db)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..extras import require_extra

DbOption = Annotated[str | None, typer.Option("--db", help="database URL (default: $WKC_DATABASE_URL, else a "
                                                           "SQLite file in the user data folder)")]


def open_store(url: str | None):  # type: ignore[no-untyped-def]  # Store: imported lazily
    require_extra("store")
    from ..store.revisions import Store

    return Store.open(url)
