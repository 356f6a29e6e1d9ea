"""`wkc catalog`: tables and JSON of the hardware catalog, on a fresh Typer app."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from workload_compiler.arch.presets import list_presets, preset_source
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.cli import catalog_cmd


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()
    catalog_cmd.register(app)

    @app.callback()
    def _root() -> None:  # keeps `catalog` a named subcommand
        pass

    return app


def _run(app: typer.Typer, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["catalog", *args], env={"COLUMNS": "300", "NO_COLOR": "1"})
    return result.exit_code, result.output


def test_default_lists_accelerators_and_systems(app: typer.Typer) -> None:
    code, text = _run(app)
    assert code == 0
    assert "Accelerators" in text and "Systems" in text
    h100 = next(line for line in text.splitlines() if "│ h100-sxm " in line)
    # NVIDIA H100 datasheet: 80 GB (74.5 GiB), 3.35 TB/s, 989.4 dense BF16, FP4 unknown
    for cell in ("80", "74.5", "3.35", "989.4", "1,978.9", "—", "700"):
        assert cell in h100


def test_unknown_precision_shows_dash_not_a_number(app: typer.Typer) -> None:
    code, text = _run(app, "accelerators")
    assert code == 0
    v100 = next(line for line in text.splitlines() if "│ v100" in line)
    cells = [c.strip() for c in v100.split("│")[1:-1]]
    assert cells[5] == "—"  # V100 has no BF16


def test_json_matches_the_catalog(app: typer.Typer) -> None:
    code, text = _run(app, "systems", "--json")
    assert code == 0
    doc = json.loads(text)
    ids = [s["id"] for s in doc["systems"]]
    assert ids == list(load_catalog().systems)
    gb200 = next(s for s in doc["systems"] if s["id"] == "gb200-nvl72")
    assert (gb200["gpus_per_node"], gb200["scale_up_domain_gpus"]) == (4, 72)


@pytest.mark.parametrize("kind", ["switches", "nics", "models"])
def test_other_kinds(app: typer.Typer, kind: str) -> None:
    code, text = _run(app, kind)
    assert code == 0
    expected = {"switches": "quantum2-qm9700", "nics": "connectx7", "models": "Model presets"}[kind]
    assert expected in text


def test_bad_kind_is_a_usage_error(app: typer.Typer) -> None:
    code, text = _run(app, "gpus")
    assert code == 2
    assert "accelerators" in text


def test_models_json_lists_every_preset_with_its_source(app: typer.Typer) -> None:
    """`catalog models --json`: one row per preset file (catalog/data/models/), each citing a source."""
    code, text = _run(app, "models", "--json")
    assert code == 0
    doc = json.loads(text)
    assert [m["id"] for m in doc["models"]] == list_presets()
    assert all(m["source"] == preset_source(m["id"]) and m["source"] for m in doc["models"])
    assert set(doc) == {"schema_version", "models"}
    # the figures a preset is picked by: DeepSeek-V3's 61 layers of hidden 7,168, 256 experts routed
    # top-8 (its config.json), and a count in which the active parameters are a fraction of all
    v3 = next(m for m in doc["models"] if m["id"] == "deepseek-v3")
    assert (v3["layers"], v3["hidden_size"], v3["moe_experts"], v3["moe_top_k"]) == (61, 7168, 256, 8)
    assert 0.04 < v3["active_params"] / v3["params"] < 0.07
    dense = next(m for m in doc["models"] if m["id"] == "llama3-8b")
    assert dense["moe_experts"] == 0 and dense["active_params"] == dense["params"]
