"""Every bundled example renders readably: at 80 and 120 columns no line is longer than the
terminal, no word or number is split or cut; the Markdown report's tables are valid (a Markdown
parser sees every table line as a row of the header's width); `--json` passes a strict parser."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from rich.console import Console

from workload_compiler import compile_workload
from workload_compiler.report.markdown import render_markdown
from workload_compiler.report.terminal import render
from workload_compiler.spine.result import SystemSpec

EXAMPLES = sorted(p for p in (Path(__file__).parents[2] / "examples").glob("*.yaml")
                  if re.search(r"^kind:", p.read_text(encoding="utf-8"), re.M))   # intakes, not offer files
_SPECS: dict[Path, SystemSpec] = {}
TOKEN = re.compile(r"[\w.%+-]+")


def spec_of(path: Path) -> SystemSpec:
    if path not in _SPECS:
        _SPECS[path] = compile_workload(path)
    return _SPECS[path]


def terminal(spec: SystemSpec, width: int, detail: bool = False) -> str:
    with io.StringIO() as sink:
        console = Console(width=width, record=True, force_terminal=False, color_system=None, file=sink)
        render(spec, console, detail=detail)
        return console.export_text()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("detail", [False, True], ids=["concise", "detail"])
def test_terminal_report_fits_80_and_120_columns_without_split_words(path: Path, detail: bool) -> None:
    spec = spec_of(path)
    wide = set(TOKEN.findall(terminal(spec, 1000, detail)))
    for width in (80, 120):
        text = terminal(spec, width, detail)
        too_long = [line for line in text.splitlines() if len(line) > width]
        assert not too_long, f"{width} columns: {too_long[0]!r}"
        assert "…" not in text, "a value was cut"
        split = sorted(set(TOKEN.findall(text)) - wide)
        assert not split, f"{width} columns: words split across lines: {split[:8]}"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_concise_report_leads_with_the_verdict_and_stays_short(path: Path) -> None:
    spec = spec_of(path)
    text = terminal(spec, 80)
    first = "\n".join(text.splitlines()[1:4])   # the summary panel: the name (wrapped), then the verdict
    verdicts = ("MEETS TARGET", "FEASIBLE", "TARGET OPEN", "MISSES TARGET", "INFEASIBLE")
    assert any(word in first for word in verdicts), first
    assert len(text.splitlines()) < len(terminal(spec, 80, detail=True).splitlines())
    assert len(text.splitlines()) <= 400   # the six layers ~150 lines, engagement sections 3 rows each


def _table_rows(tokens: list[Any]) -> list[int]:
    """Cells per row of every table the parser found."""
    widths, cells = [], 0
    for t in tokens:
        if t.type == "tr_open":
            cells = 0
        elif t.type in ("th_open", "td_open"):
            cells += 1
        elif t.type == "tr_close":
            widths.append(cells)
    return widths


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("detail", [False, True], ids=["concise", "detail"])
def test_markdown_tables_are_valid(path: Path, detail: bool) -> None:
    md = render_markdown(spec_of(path), detail=detail)
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    table_lines = [line for line in md.splitlines() if line.startswith("|") and not line.startswith("|---")]
    rows = _table_rows(tokens)
    assert len(rows) == len(table_lines), "a table line the parser does not read as a row"
    tables, current = [], None
    for t in tokens:
        if t.type == "table_open":
            current = []
        elif t.type == "table_close":
            tables.append(current)
        elif t.type in ("th_open", "td_open") and current is not None:
            current.append(t)
    assert tables, "no table in the report"
    for line in md.splitlines():
        if line.startswith("|"):
            assert line.rstrip().endswith("|"), line


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_json_document_is_strict_json(path: Path) -> None:
    from typer.testing import CliRunner

    from workload_compiler.cli.main import app
    result = CliRunner().invoke(app, ["compile", str(path), "--json"])
    assert result.exit_code in (0, 3)

    def refuse(name: str) -> None:
        raise ValueError(f"{name} is not JSON")
    doc = json.loads(result.stdout, parse_constant=refuse)
    assert doc["kind"] in ("training", "inference", "hpc", "generic")
    assert doc["verdict"] in ("meets target", "feasible", "target open", "misses target", "infeasible")


# Meta's Llama 3 405B layout on 8,192 H100 (arXiv:2407.21783 §3.3.2, Table 4): its tensors fit in
# the HBM, the fitted runtime reserve does not (planner/tight_memory.py), so it compiles tight.
TIGHT = {"kind": "training", "name": "Llama 3 405B, Meta's layout",
         "model": {"preset": "llama3.1-405b"},
         "training": {"seq_len": 8192, "precision": "bf16", "framework": "fsdp", "global_batch_size": 2048,
                      "tokens": "1T"},
         "compute": {"accelerator": "h100-sxm", "gpus": 8192,
                     "parallelism": {"tp": 8, "pp": 16, "dp": 64, "cp": 1, "zero_stage": 2, "recompute": "none",
                                     "pipeline_layout": "E|(t|)*126L", "micro_batch_size": 1,
                                     "tp_comm_overlap": False}}}


def test_a_tight_memory_fit_is_warned_in_the_summary_of_every_report() -> None:
    from workload_compiler.report.html import render_html
    spec = compile_workload(TIGHT)
    assert spec.feasible and spec.compute is not None
    warning = spec.compute.warnings[0]                   # type: ignore[union-attr]
    assert warning.startswith("memory tight") and "runtime reserve" in warning
    summary = terminal(spec, 80).split("top assumptions")[0]
    assert "warnings" in summary and "memory tight" in summary
    markdown = render_markdown(spec)
    assert markdown.index("**Warnings**") < markdown.index("## ") and "memory tight" in markdown
    assert 'data-testid="warning"' in render_html(spec)


def test_a_layout_string_wider_than_the_line_breaks_after_its_separators_inside_the_summary() -> None:
    """A pipeline layout string wider than the summary's value column (GPT-OSS-120B's uneven stages
    on 64 B200: 60 characters) once overflowed the panel, its tail folded to the terminal's first
    column. It now breaks after its '|' separators, inside the panel, and joins back unchanged."""
    spec = compile_workload({"kind": "training", "model": {"preset": "gpt-oss-120b"},
                             "training": {"tokens": "1T", "seq_len": 4096, "global_batch_size": 512,
                                          "precision": "bf16"},
                             "compute": {"accelerator": "b200", "gpus": 64}})
    layout = spec.compute["parallelism"]["pipeline_layout"]
    assert layout is not None and len(layout) > 60
    panel = terminal(spec, 80).split("╰")[0].splitlines()[1:]     # the summary panel's body
    assert all(line.startswith("│ ") and line.endswith("│") for line in panel)
    rows = [line[2:-1] for line in panel]
    start = next(i for i, row in enumerate(rows) if row.strip().startswith(layout[:12]))
    column = len(rows[start]) - len(rows[start].lstrip())      # the value column
    pieces: list[str] = []
    for row in rows[start:]:
        if len("".join(pieces)) >= len(layout):
            break
        assert len(row) - len(row.lstrip()) == column, f"a piece left the value column: {row!r}"
        pieces.append(row.strip())
    assert "".join(pieces) == layout and len(pieces) > 1
