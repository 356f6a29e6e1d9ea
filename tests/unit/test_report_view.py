"""The panels, figures and Markdown read the result document and nothing else."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from shared_data import REPO_ROOT
from workload_compiler import compile_workload, recompile
from workload_compiler.report.figures import figure, figures, tornado_bars, tornado_sets
from workload_compiler.report.markdown import render_markdown
from workload_compiler.report.plots import TornadoBar, tornado_svg
from workload_compiler.report.view import LAYER_KEYS, kpis, layer_of_section, panels, verdict

EXAMPLES = {p.stem: p for p in sorted((REPO_ROOT / "examples").glob("*.yaml"))}
FAST = ["gpt3-175b-a100", "llama3.3-70b-chat", "hpc-cfd-lbm", "hpc-molecular-dynamics"]


@pytest.fixture(scope="module")
def gpt3():  # type: ignore[no-untyped-def]
    return compile_workload(EXAMPLES["gpt3-175b-a100"])


def test_six_panels_in_spine_order_with_provenance(gpt3) -> None:  # type: ignore[no-untyped-def]
    ps = panels(gpt3)
    assert [p.layer.key for p in ps] == list(LAYER_KEYS) == ["objective", "compute", "fabric", "storage",
                                                             "software", "facility"]
    facility = {r.path: r for r in ps[-1].details}
    assert facility["facility.pue"].source == "assumed" and facility["facility.pue"].note
    assert facility["facility.it_power_w"].text == "958.19 kW"   # HDR fabric (QM8790 stand-in)
    compute = {r.path: r for r in ps[1].headline}
    assert compute["compute.parallelism"].text.startswith("TP 8 · PP 8 · DP 16")


def test_a_section_no_panel_names_lands_in_the_objective() -> None:
    assert layer_of_section("facility") == "facility" and layer_of_section("storage") == "storage"
    assert layer_of_section("some_new_section_of_a_new_kind") == "objective"


def test_verdict_and_headline_tiles(gpt3) -> None:  # type: ignore[no-untyped-def]
    assert verdict(gpt3)[0] == "warn" and "deadline" in verdict(gpt3)[1]
    pinned = recompile(EXAMPLES["gpt3-175b-a100"], {"facility.power": "1MW"})
    assert verdict(pinned)[0] == "fail" and "hall" in verdict(pinned)[1]  # the binding constraint is named
    tiles = kpis(gpt3)
    labels = [k.label for k in tiles]
    assert labels[:3] == ["accelerator", "GPUs", "time to train"]
    # a headline with a band carries it on its tile, as the terminal summary does ("How sure")
    band = gpt3.uncertainty["objective.goodput_adjusted_time_to_train_s"]
    assert band.low is not None and tiles[2].band.endswith(" d") and " to " in tiles[2].band
    assert tiles[0].band == ""


@pytest.mark.parametrize("name", FAST)
def test_figures_are_svg_and_only_those_with_data(name: str) -> None:
    spec = compile_workload(EXAMPLES[name])
    drawn = {f.name: f.svg for f in figures(spec)}
    assert "step" in drawn and "power" in drawn
    assert all(svg.startswith("<svg") and "</svg>" in svg for svg in drawn.values())
    compute = spec.model_dump(mode="json").get("compute") or {}
    assert ("memory" in drawn) == bool(compute.get("memory_breakdown_bytes"))
    assert figure(spec, "sensitivity") is None  # no sensitivity section in these results


def test_alternatives_are_placed_on_time_and_gpu_hours_when_unpriced(gpt3) -> None:  # type: ignore[no-untyped-def]
    svg = figure(gpt3, "alternatives")
    assert svg is not None and "GPU-hours (no price given)" in svg.svg
    for alt in gpt3.alternatives:
        assert alt.name in svg.svg


def test_the_tornado_reads_a_sensitivity_section_and_ranks_by_swing() -> None:
    metric, bars = tornado_bars({"metric": "gpus", "rows": [
        {"assumption": "pue", "low": -10, "high": 12}, {"assumption": "mfu", "low": -300, "high": 500},
        {"assumption": "broken"}]})
    assert metric == "gpus" and [b.label for b in bars] == ["pue", "mfu"]
    svg = tornado_svg(bars, metric=metric)
    assert svg.index(">pue<") < svg.index(">mfu<")  # the widest swing is drawn last: on top


def test_the_tornado_of_a_compiled_sensitivity_section() -> None:
    from workload_compiler.sizing.sensitivity import analyse

    spec = compile_workload(EXAMPLES["gpt3-175b-a100"])
    spec.sensitivity = analyse(spec)
    sets = dict(tornado_sets(spec.model_dump(mode="json")["sensitivity"]))
    assert "time (days)" in sets and "facility power (MW)" in sets
    pue = next(b for b in sets["facility power (MW)"] if b.label.startswith("facility.pue"))
    assert pue.low < 0 < pue.high             # a lower PUE draws less from the grid, a higher one more
    assert not any(b.label.startswith("facility.pue") for b in sets["time (days)"])  # and does not move time
    drawn = figure(spec, "sensitivity")
    assert drawn is not None and "Sensitivity" in drawn.svg
    assert tornado_svg([TornadoBar("x", 0, 0)], metric="days").startswith("<svg")


@pytest.mark.parametrize("name", FAST)
def test_markdown_tables_are_valid(name: str) -> None:
    """Every table row parses as a row of its table (no multi-line value breaks one)."""
    text = render_markdown(compile_workload(EXAMPLES[name]))
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables = [t for t in tokens if t.type == "table_open"]
    assert tables
    pipe_lines = [line for line in text.splitlines() if line.startswith("|")]
    rows_parsed = sum(1 for t in tokens if t.type == "tr_open")
    assert rows_parsed == len(pipe_lines) - len(tables)  # every '|' line is a row, bar the separators
    for line in pipe_lines:
        assert line.rstrip().endswith("|")
