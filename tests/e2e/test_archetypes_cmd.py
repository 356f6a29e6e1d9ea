"""Inference and HPC through the same spine (issue "Production inference and HPC archetypes"):
the result keys the issue names, rendered by `wkc compile`."""

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from workload_compiler.cli.main import app

EXAMPLES = Path(__file__).parents[2] / "examples"
runner = CliRunner()


def compile_json(path: Path) -> dict:  # type: ignore[type-arg]
    result = runner.invoke(app, ["compile", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_inference_example_has_the_contract_keys() -> None:
    doc = compile_json(EXAMPLES / "llama3.3-70b-chat.yaml")
    assert doc["kind"] == "inference" and doc["feasible"]
    for key in ("accelerator", "gpus"):
        assert key in doc["compute"]
    assert {"tp", "pp", "ep"} <= set(doc["compute"]["parallelism"])
    inf = doc["inference"]
    for key in ("replicas", "batch_size", "kv_bytes_per_token", "kv_capacity_tokens",
                "output_tokens_per_s_per_gpu", "ttft_s", "tpot_s", "cost_per_million_tokens"):
        assert inf[key] is not None, key
    # The SLOs the intake names are met by the configuration the search returns.
    assert inf["ttft_s"] <= 2.0 and inf["tpot_s"] <= 0.050
    # Llama 3.3 70B: 80 layers x 8 KV heads x 128 x 2 (K, V) x 1 byte (fp8) = 163,840 B per token.
    assert inf["kv_bytes_per_token"] == 80 * 8 * 128 * 2 * 1
    assert doc["software"]["scheduler"] and doc["facility"]["it_power_w"] > 0


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("hpc-*.yaml")))
def test_every_hpc_example_compiles_with_its_bound(example: str) -> None:
    doc = compile_json(EXAMPLES / example)
    assert doc["kind"] == "hpc" and doc["feasible"]
    hpc = doc["hpc"]
    assert hpc["bound"] in ("compute", "memory", "network", "io")
    assert hpc["time_per_step_s"] > 0 and hpc["time_to_solution_s"] > 0
    assert doc["compute"]["gpus"] >= 1
    assert doc["assumptions"], "class defaults are assumptions and must be listed"


def test_one_hpc_class_per_solver_family() -> None:
    classes = {yaml.safe_load(p.read_text())["application"]["class"] for p in EXAMPLES.glob("hpc-*.yaml")}
    assert classes == {"cfd_lbm", "cfd_fv", "molecular_dynamics", "weather_climate", "fft_spectral",
                       "dense_linear_algebra"}


def test_context_overflow_is_bad_input(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text("kind: inference\nmodel: {preset: llama3.1-8b}\n"
                 "serving: {context_window: 4096, input_tokens: 4000, output_tokens: 512}\n")
    result = runner.invoke(app, ["compile", str(f)])
    assert result.exit_code == 2 and "Traceback" not in result.output
