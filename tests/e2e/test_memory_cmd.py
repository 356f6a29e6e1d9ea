"""`wkc memory`: seed 003's weight-storage calculator (7B x 16 bit / 8 = 14.00 GB = 13.04 GiB)."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from workload_compiler.cli.memory_cmd import register

runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.callback()
    def _root() -> None:   # keeps `memory` a subcommand, as under `wkc`
        pass

    return app


def test_seed_003_seven_billion_at_16_bits() -> None:
    result = runner.invoke(_app(), ["memory", "--params", "7B", "--bits", "16"])
    assert result.exit_code == 0, result.output
    assert "14.00 GB" in result.output and "13.04 GiB" in result.output
    assert "50% of 32-bit storage" in result.output and "█" in result.output
    for excluded in ("activations", "KV cache", "gradients", "optimizer state", "quantization metadata"):
        assert excluded in result.output


def test_json_keys_and_values() -> None:
    result = runner.invoke(_app(), ["memory", "--params", "405e9", "--format", "mxfp4", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert {"params", "bits_per_param", "weight_bytes", "weight_gib", "format"} <= doc.keys()
    assert doc["params"] == 405e9 and doc["format"] == "mxfp4"
    assert doc["bits_per_param"] == 4.25            # OCP MX: 4 + 8/32
    assert doc["weight_bytes"] == 405e9 * 4.25 / 8
    assert doc["weight_gib"] == pytest.approx(doc["weight_bytes"] / 2**30)
    assert not any("quantization metadata" in e for e in doc["excludes"])   # scales are counted


def test_preset_uses_the_checkpoint_format() -> None:
    result = runner.invoke(_app(), ["memory", "--preset", "gpt-oss-120b", "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["format"].startswith("mxfp4") and 4.25 < doc["bits_per_param"] < 5


@pytest.mark.parametrize("args", [
    ["memory", "--params", "7B", "--format", "fp5"],
    ["memory", "--params", "seven", "--bits", "16"],
    ["memory", "--bits", "16"],
    ["memory", "--params", "7B", "--preset", "llama3-8b"],
    ["memory", "--params", "7B", "--bits", "16", "--format", "fp8"],
    ["memory", "--preset", "llama-9000"],
    ["memory", "--params", "7B", "--bits", "0"],
])
def test_bad_input_exits_2_without_traceback(args: list[str]) -> None:
    result = runner.invoke(_app(), args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


def test_model_names_a_preset_as_in_wkc_fit_and_counts_read_in_words() -> None:
    """`wkc memory --model llama3-8b` (the flag wkc fit takes) was 'No such option'; '8.03 B
    parameters' read as bytes beside '16.06 GB'."""
    from typer.testing import CliRunner

    from workload_compiler.cli.main import app
    result = CliRunner().invoke(app, ["memory", "--model", "Llama3-8B"])
    assert result.exit_code == 0 and "8.03 billion parameters" in result.stdout and "16.06 GB" in result.stdout
