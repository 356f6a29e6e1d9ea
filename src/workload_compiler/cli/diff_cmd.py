"""`wkc diff PROJECT REV_A REV_B [--json]`: what changed between two revisions, inputs first, then
every output that moved, old -> new."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated

import typer
from rich.table import Table

from .common import out, user_errors
from .store_common import DbOption, open_store


def diff_command(
    project: Annotated[str, typer.Argument(help="project name")],
    rev_a: Annotated[str, typer.Argument(help="the older revision: 1, 01 or 'REV 01'")],
    rev_b: Annotated[str, typer.Argument(help="the newer revision")],
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
    db: DbOption = None,
) -> None:
    """Show what changed from REV_A to REV_B."""
    from ..report.diff_view import sections
    from ..store.revisions import diff_revisions, parse_rev, rev_label

    with user_errors():
        a, b = parse_rev(rev_a, "REV_A"), parse_rev(rev_b, "REV_B")
        store = open_store(db)
        diff = diff_revisions(store.revision(project, a), store.revision(project, b))
    parts = sections(diff)
    if as_json:
        print(json.dumps({"project": project, "from": rev_label(a), "to": rev_label(b),
                          "changes": {h: [asdict(r) for r in rows] for h, rows in parts}}, indent=2))
        return
    out.print(f"[bold]{project}[/]: {rev_label(a)} -> {rev_label(b)}", highlight=False)
    if not parts:
        out.print("no change")
    for heading, rows in parts:
        table = Table("", "was", "now", title=f"{heading} ({len(rows)})", title_justify="left")
        for r in rows:
            table.add_row(r.path, r.old, r.new)
        out.print(table)


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_command)
