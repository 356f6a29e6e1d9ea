"""`wkc diff PROJECT REV_A REV_B [--json]`: what changed between two revisions, inputs first, then
every output that moved, old -> new."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated

import typer
from rich.text import Text

from ..report.layout import fitted, natural_width
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
    console = out.get()
    for heading, rows in parts:
        cells = [[r.path, r.old, r.new] for r in rows]
        if natural_width(["", "was", "now"], cells) <= console.width:
            console.print(fitted(["", "was", "now"], cells, console.width, [f"{heading} ({len(rows)})"]))
            continue
        # narrower than the table: one line a change ('path: was -> now'); a cut path
        # ('compute.step_breakdown…' six times over) did not say which value moved
        console.print(Text(f"{heading} ({len(rows)})", style="bold"))
        for path, old, new in cells:
            console.print(Text(f"{path}: {old} -> {new}"))


def register(app: typer.Typer) -> None:
    app.command("diff")(diff_command)
