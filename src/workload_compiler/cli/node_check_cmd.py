"""`wkc node-check`: the Linux layer of this node (CPU/NUMA, GPU and NIC PCIe placement, RDMA ports,
hugepages, kernel parameters, driver and library versions, device naming) against the readiness
checklist of a sized spec (`--spec INTAKE`): pass, fail or not applicable here, with why.
`--fleet DIR` compares many nodes' `--json` reports and lists the differences that break a job at
scale. `--save-snapshot` / `--snapshot` move a node's raw readings to where the check runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import InputError
from ..paths import existing_directory
from .common import out, user_errors

if TYPE_CHECKING:
    from ..measure.fleet import FleetReport
    from ..measure.node_readiness import NodeCheck
    from ..measure.node_snapshot import NodeSnapshot

_STYLE = {"pass": "[green]pass[/]", "fail": "[red]fail[/]", "not applicable here": "[dim]not applicable here[/]"}


def node_check_command(
    spec: Annotated[Path | None, typer.Option("--spec", help="intake YAML whose sized spec sets the checklist, "
                                              "GPUs, NICs and rates per node")] = None,
    snapshot: Annotated[Path | None, typer.Option("--snapshot", help="check a saved snapshot instead of this "
                                                  "node")] = None,
    save_snapshot: Annotated[Path | None, typer.Option("--save-snapshot", help="also write this node's raw "
                                                       "readings (JSON)")] = None,
    fleet: Annotated[Path | None, typer.Option("--fleet", help="directory of `node-check --json` reports to "
                                               "compare")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="exit 1 when an item fails (or nodes differ)")] = False,
) -> None:
    """Check this node's Linux layer against the readiness checklist of a sized spec."""
    with user_errors():
        if fleet is not None:
            report = _fleet(fleet)
            if as_json:
                print(json.dumps(report.model_dump(mode="json"), indent=2))
            else:
                _render_fleet(report)
            bad = bool(report.differences or report.failing)
        else:
            check = _check(spec, snapshot, save_snapshot)
            if as_json:
                print(json.dumps(check.model_dump(mode="json", by_alias=True), indent=2))
            else:
                _render(check)
            bad = check.summary.get("fail", 0) > 0
    if strict and bad:
        raise typer.Exit(1)


def _load_snapshot(path: Path) -> NodeSnapshot:
    from pydantic import ValidationError

    from ..measure.node_snapshot import NodeSnapshot
    try:
        return NodeSnapshot.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("--snapshot", str(path), "an existing snapshot file (node-check --save-snapshot)") from None
    except ValidationError as exc:
        raise InputError("--snapshot", str(path), f"a node snapshot (JSON): {str(exc).splitlines()[0]}") from None


def _check(spec: Path | None, snapshot: Path | None, save: Path | None) -> NodeCheck:
    from ..catalog.loader import load_catalog
    from ..compile import compile_workload
    from ..measure.node_expect import default_expectations, spec_expectations
    from ..measure.node_read import node_report
    from ..measure.node_readiness import check_node
    from ..measure.node_snapshot import collect
    snap = _load_snapshot(snapshot) if snapshot is not None else collect()
    if save is not None:
        save.write_text(snap.model_dump_json(by_alias=True, indent=1), encoding="utf-8")
    expect = (spec_expectations(compile_workload(spec), load_catalog(), str(spec)) if spec is not None
              else default_expectations())
    return check_node(node_report(snap), expect)


def _fleet(directory: Path) -> FleetReport:
    from pydantic import ValidationError

    from ..measure.fleet import compare
    from ..measure.node_readiness import NodeCheck
    existing_directory(directory, "--fleet", "a directory of `wkc node-check --json` reports")
    checks: dict[str, NodeCheck] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            c = NodeCheck.model_validate_json(path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise InputError(f"--fleet {path}", "(not a node-check report)",
                             f"the JSON `wkc node-check --json` prints: {str(exc).splitlines()[0]}") from None
        name = c.report.hostname if c.report.hostname not in checks else f"{c.report.hostname} ({path.name})"
        checks[name] = c
    if len(checks) < 2:
        raise InputError("--fleet", str(directory), f"two reports or more to compare (found {len(checks)})")
    return compare(checks)


def _render(c: NodeCheck) -> None:
    from rich.table import Table
    r = c.report
    gpus = f"{len(r.gpus)} GPU(s)" + (f" ({', '.join(sorted({g.model or g.device_id for g in r.gpus}))})"
                                     if r.gpus else "")
    rdma = sum(1 for n in r.nics if n.rdma_device)
    out.print(f"[bold]{r.hostname}[/] · {r.cpu_model}, {r.sockets} socket(s), {r.cores} cores, {len(r.numa)} NUMA "
              f"node(s) · {gpus} · {rdma} RDMA NIC(s) · {r.versions.get('os', '?')}, kernel "
              f"{r.versions.get('kernel', '?')}", highlight=False)
    out.print(f"checked against: {c.expectations.source}", highlight=False)
    table = Table(show_lines=False)
    for col in ("item", "status", "why"):
        table.add_column(col, overflow="fold")
    for item in c.items:
        label = item.id + ("" if item.origin == "spec checklist" else " [dim](node-check)[/]")
        table.add_row(label, _STYLE[item.status], item.why)
    out.print(table)
    s = c.summary
    out.print(f"{s.get('pass', 0)} pass, {s.get('fail', 0)} fail, {s.get('not applicable here', 0)} not applicable "
              "here", highlight=False)


def _render_fleet(f: FleetReport) -> None:
    from rich.table import Table
    out.print(f"[bold]{len(f.nodes)} nodes[/]: {', '.join(f.nodes)}", highlight=False)
    if f.differences:
        table = Table(title="differences that break a job at scale")
        for col in ("property", "majority", "outliers", "why it matters"):
            table.add_column(col, overflow="fold")
        for d in f.differences:
            odd = "; ".join(f"{v}: {', '.join(h)}" for v, h in d.values.items() if v != d.majority)
            table.add_row(d.key, d.majority, odd, d.why)
        out.print(table)
    else:
        out.print("[green]no differences[/] in " + ", ".join(f.identical))
    for item, hosts in f.failing.items():
        out.print(f"[red]fails[/] {item} on {', '.join(hosts)}", highlight=False)
    if f.identical:
        out.print("identical on every node: " + ", ".join(f"{k} ({v})" for k, v in f.identical.items()),
                  highlight=False)


def register(app: typer.Typer) -> None:
    app.command("node-check")(node_check_command)
