"""`wkc revisions [PROJECT] [--json]`: the projects, or one project's revisions REV 01, 02, ..."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from ..report.layout import fitted
from .common import out, user_errors
from .store_common import DbOption, open_store


def revisions_command(
    project: Annotated[str | None, typer.Argument(help="project name; omit to list the projects")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
    db: DbOption = None,
) -> None:
    """List a project's revisions (or, without PROJECT, the projects)."""
    with user_errors():
        store = open_store(db)
        if project is None:
            projects = store.projects()
            if as_json:
                print(json.dumps([{"project": n, "revisions": c, "last_saved": t.isoformat() if t else None}
                                  for n, c, t in projects], indent=2))
                return
            table = Table("project", "revisions", "last saved", title="Projects", title_justify="left")
            for name, count, last in projects:
                table.add_row(name, str(count), last.strftime("%Y-%m-%d %H:%M UTC") if last else "—")
            out.print(table)
            return
        infos = store.revisions(project)
    if as_json:
        print(json.dumps([{"revision": i.label, "number": i.number, "created_at": i.created_at.isoformat(),
                           "feasible": i.feasible, "note": i.note, "tool_version": i.tool_version,
                           "catalog_version": i.catalog_version, "schema_version": i.schema_version}
                          for i in infos], indent=2))
        return
    # the catalog's digest shortened as git shortens a commit (12 hex digits, no ellipsis; --json has it
    # whole); a table where the terminal holds it, else a block a revision
    rows = [[i.label, i.created_at.strftime("%Y-%m-%d %H:%M:%S"), "feasible" if i.feasible else "infeasible",
             i.tool_version, i.catalog_version.split(":")[-1][:12], i.note or "—"] for i in infos]
    console = out.get()
    console.print(fitted(["revision", "saved (UTC)", "verdict", "tool", "catalog", "note"], rows, console.width,
                         [project]))


def register(app: typer.Typer) -> None:
    app.command("revisions")(revisions_command)
