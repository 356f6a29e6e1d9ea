"""`wkc cache [--clear]`: where the planner keeps its searches between runs, how many, how large.

Searches are keyed by their inputs and a fingerprint of this code and its data (planner/search_cache.py),
so an entry is never stale; `--clear` frees the space. `WKC_CACHE=off` or a command's
`--no-cache` runs without it; `WKC_CACHE_DIR` moves it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .common import user_errors


def cache_command(
    clear: Annotated[bool, typer.Option("--clear", help="remove every stored search")] = False,
) -> None:
    """Show (or clear) the planner's on-disk search cache."""
    from ..planner import search_cache
    from ..units import format_bytes_decimal

    with user_errors():
        where = search_cache.cache_dir()
        if where is None:
            print("search cache: off (WKC_CACHE)")
            return
        # plain print: a path is never wrapped at the terminal's width
        print(f"search cache: {where}")
        if clear:
            print(f"removed: {_searches(search_cache.clear())}")
            return
        entries = list(where.glob("*.json")) if where.is_dir() else []
        size = sum(p.stat().st_size for p in entries)
        print(f"holds: {_searches(len(entries))}, {format_bytes_decimal(size)} "
              f"(past {search_cache.MAX_ENTRIES} the least recently used go)")


def _searches(n: int) -> str:
    return f"{n} search" if n == 1 else f"{n} searches"


def register(app: typer.Typer) -> None:
    app.command("cache")(cache_command)
