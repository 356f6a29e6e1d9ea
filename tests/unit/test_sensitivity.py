"""The tornado (sizing/sensitivity.py): every assumption with a range in the catalog is moved across
it, its ends are real recompiles, the rows are ranked by the largest relative swing, and the
assumptions that are not varied say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workload_compiler import compile_workload, recompile
from workload_compiler.catalog.loader import package_yaml
from workload_compiler.cli.main import app
from workload_compiler.sizing.result import SensitivitySection
from workload_compiler.sizing.sensitivity import analyse

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.fixture(scope="module")
def gpt3() -> SensitivitySection:
    return analyse(compile_workload(EXAMPLES / "gpt3-175b-a100.yaml"))


def test_every_assumption_is_a_row_or_says_why_not(gpt3: SensitivitySection) -> None:
    spec = compile_workload(EXAMPLES / "gpt3-175b-a100.yaml")
    fields = {a.field for a in spec.assumptions}
    rows = {r.field for r in gpt3.rows}
    assert fields <= rows | set(gpt3.not_varied)
    ranges = package_yaml("sensitivity.yaml")["ranges"]
    for r in gpt3.rows:
        assert r.source
        if r.pin is not None:
            assert ranges[r.field]["pin"] == r.pin


def test_ranked_by_relative_swing(gpt3: SensitivitySection) -> None:
    swings = [r.relative_swing for r in gpt3.rows]
    assert swings == sorted(swings, reverse=True) and swings[0] > 0.1


def test_the_ends_are_the_recompiled_values(gpt3: SensitivitySection) -> None:
    pue = next(r for r in gpt3.rows if r.field == "facility.pue")
    assert pue.low is not None and pue.high is not None
    hi = recompile(EXAMPLES / "gpt3-175b-a100.yaml", {"facility.pue": 1.6}, alternatives=False)
    assert pue.high.value == 1.6 and pue.high.facility_power_w == pytest.approx((hi.facility or {})["facility_power_w"])
    assert pue.low.facility_power_w is not None and pue.low.facility_power_w < pue.high.facility_power_w
    assert pue.swing.get("time_s", 0.0) == 0.0          # PUE moves power, not time
    # reliability moves time, not power
    rate = next(r for r in gpt3.rows if r.field == "reliability.failure_rate")
    assert rate.swing["time_s"] > 0 and rate.swing.get("facility_power_w", 0.0) == 0.0


def test_the_step_time_model_error_is_a_row(gpt3: SensitivitySection) -> None:
    row = next(r for r in gpt3.rows if r.field == "compute.step_time_s")
    base = gpt3.baseline.time_s
    e = package_yaml("uncertainty.yaml")["training_step_time"]["overall"]["mape_pct"] / 100.0
    assert base and row.swing["time_s"] == pytest.approx(2 * e * base)
    assert f"{e:.2%}" in row.source


def test_the_hpc_model_error_is_a_row_of_its_solver_class() -> None:
    """An HPC run's own model row: time x (1 +/- the held-out MAPE of its solver class), the 9
    molecular-dynamics runs for the MD example (tools/hpc_uncertainty.py)."""
    section = analyse(compile_workload(EXAMPLES / "hpc-molecular-dynamics.yaml"))
    row = next(r for r in section.rows if r.field == "hpc.time_per_step_s")
    kinds = package_yaml("uncertainty.yaml")["hpc_time_per_step"]["kinds"]
    e = kinds["molecular_dynamics"]["mape_pct"] / 100.0
    base = section.baseline.time_s
    assert base and row.swing["time_s"] == pytest.approx(2 * e * base)
    assert "molecular_dynamics runs" in row.source and row.swing.get("gpus", 0) == 0


def test_deadline_driven_gpus_move_with_the_assumption() -> None:
    # a deadline picks the GPU count: a worse failure rate needs more GPUs to hold it
    data = {"kind": "training", "model": {"preset": "llama3-8b"}, "training": {"tokens": "2T", "seq_len": 4096},
            "target": {"time_to_train": "20d"}, "compute": {"accelerator": "h100-sxm"}}
    section = analyse(compile_workload(data))
    rate = next(r for r in section.rows if r.field == "reliability.failure_rate")
    assert rate.swing.get("gpus", 0) > 0 and rate.high is not None and rate.high.note


def test_inference_rows_report_replicas_and_dollars_per_hour() -> None:
    section = analyse(compile_workload(EXAMPLES / "llama3.3-70b-chat.yaml"))
    engine = next((r for r in section.rows if r.field == "serving.engine"), None)
    if engine is not None:
        assert engine.method.startswith("full recompile")
    else:   # each engine recompiled to the same GPUs, time, power and $: no bar, a reason
        assert section.not_varied["serving.engine"].startswith("no effect on this job's")
    assert section.baseline.replicas and section.baseline.cost_usd      # $/h from the example's rate card


def test_a_range_that_moves_nothing_is_not_a_bar() -> None:
    """A tornado bar of zero length ('False .. False' with every delta '—') is listed among the
    assumptions not varied, with the values tried, instead of as a row."""
    section = analyse(compile_workload(EXAMPLES / "llama3-70b-plan.yaml"))
    assert all(r.relative_swing > 0 for r in section.rows)
    reason = section.not_varied["storage.host_path_bytes_per_s_per_node"]
    assert reason.startswith("no effect on this job's") and "False" in reason and "True" in reason


def test_cli_sensitivity_and_compile_flag() -> None:
    result = CliRunner().invoke(app, ["sensitivity", str(EXAMPLES / "gpt3-175b-a100.yaml"), "--json", "--top", "3"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert len(doc["rows"]) == 3 and doc["rows"][0]["relative_swing"] >= doc["rows"][2]["relative_swing"]
    result = CliRunner().invoke(app, ["compile", str(EXAMPLES / "hpc-cfd-fv.yaml"), "--json", "--sensitivity"])
    doc = json.loads(result.stdout)
    assert doc["sensitivity"]["rows"] and doc["sensitivity"]["baseline"]["time_s"] > 0
    text = CliRunner().invoke(app, ["sensitivity", str(EXAMPLES / "gpt3-175b-a100.yaml")])
    assert text.exit_code == 0 and "facility.pue" in text.stdout


def test_values_read_in_their_declared_units_and_markdown_matches_the_terminal() -> None:
    """A varied value reads in the unit its field declares (28.0 GB/s, 10.0 min), not from its key's
    spelling; Markdown shows the range and '—' where nothing moves, as the terminal does (it printed
    '0', '0.00 ms' and '0.00 W')."""
    import io

    from rich.console import Console

    from workload_compiler.report.markdown import render_markdown
    from workload_compiler.report.sizing_view import terminal_sensitivity
    spec = compile_workload(EXAMPLES / "gpt3-175b-a100.yaml")
    spec.sensitivity = analyse(spec)
    md = render_markdown(spec)
    rows = {line.split(" | ")[0].lstrip("| "): line for line in md.splitlines() if line.startswith("| ")}
    assert "28.0 GB/s" in rows["storage.write_bytes_per_s"] and "10.0 min" in rows["reliability.restart_s"]
    assert " .. " in rows["facility.pue"] and "0.00 W" not in md and "| 0 |" not in md
    console = Console(width=200, record=True, file=io.StringIO())
    panel = terminal_sensitivity(spec, 200)
    assert panel is not None
    console.print(panel)
    assert "28.0 GB/s" in console.export_text()
