"""`wkc compile` end to end: the result keys the issues name, exit codes, no tracebacks."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workload_compiler.cli.main import app

EXAMPLES = Path(__file__).parents[2] / "examples"
runner = CliRunner()

TRAINING_KEYS = {
    "objective": ["total_flops", "time_to_train_s"],
    "compute": ["accelerator", "gpus", "nodes", "step_time_s", "step_breakdown_s", "tokens_per_s",
                "model_tflops_per_gpu", "mfu", "memory_per_gpu_bytes", "memory_breakdown_bytes"],
    "fabric": ["scale_up_domain", "scale_out", "per_gpu_scale_out_bytes_per_s", "violations"],
    "storage": ["dataset_bytes", "read_bytes_per_s", "checkpoint_bytes", "checkpoint_write_s",
                "checkpoint_interval_s", "capacity_bytes"],
    "reliability": ["job_mtbf_s", "goodput"],
    "facility": ["it_power_w", "facility_power_w", "pue", "racks", "rack_power_w", "cooling",
                 "coolant_flow_l_per_min", "cdus", "floor_area_m2"],
}


def compile_json(path: Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = runner.invoke(app, ["compile", str(path), "--json"])
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}


def test_gpt3_example_has_every_contract_key() -> None:
    code, doc = compile_json(EXAMPLES / "gpt3-175b-a100.yaml")
    assert code == 0
    assert doc["schema_version"] and doc["kind"] == "training"
    for layer, keys in TRAINING_KEYS.items():
        for key in keys:
            assert key in doc[layer], f"{layer}.{key}"
    par = doc["compute"]["parallelism"]
    assert (par["tp"], par["pp"], par["dp"], par["recompute"], par["zero_stage"]) == (8, 8, 16, "full", 1)
    assert sum(doc["compute"]["step_breakdown_s"].values()) == pytest.approx(doc["compute"]["step_time_s"])
    for key in ("topology", "tiers", "leaf_switches", "spine_switches", "core_switches", "cables", "transceivers"):
        assert key in doc["fabric"]["scale_out"]
    assert all({"field", "value", "why"} <= set(a) for a in doc["assumptions"])
    assert doc["provenance"]["compute.gpus"]["source"] == "given"
    assert doc["provenance"]["compute.step_time_s"]["source"] == "derived"


def test_gpt3_time_to_train_is_near_the_paper() -> None:
    # Narayanan et al. 2021 (arXiv:2104.04473) §5.1 / Eq. 4: 300B tokens on 1024 A100 at 140 TFLOP/s
    # per GPU take about 34 days. Our prediction must land within 15% of that figure.
    code, doc = compile_json(EXAMPLES / "gpt3-175b-a100.yaml")
    assert code == 0
    days = doc["objective"]["time_to_train_s"] / 86400
    assert days == pytest.approx(34, rel=0.15)


def test_markdown_and_terminal_render() -> None:
    md = runner.invoke(app, ["compile", str(EXAMPLES / "gpt3-175b-a100.yaml"), "--md"])
    assert md.exit_code == 0 and "## 3 · Fabric" in md.stdout and "Assumptions requiring validation" in md.stdout
    term = runner.invoke(app, ["compile", str(EXAMPLES / "gpt3-175b-a100.yaml")])
    assert term.exit_code == 0 and "Compute" in term.stdout


@pytest.mark.parametrize(("body", "needle"), [
    ("kind: training\nmodel: {preset: gpt-9}\n", "model.preset"),
    ("kind: training\nmodel: {preset: gpt3-175b}\ncompute: {accelerator: tpu-v9}\n", "compute.accelerator"),
    ("kind: training\nmodel: {preset: gpt3-175b}\ncompute: {gpus: 64, parallelism: {tp: 8, pp: 4, dp: 4}}\n",
     "compute.gpus = 64"),
    ("kind: training\nmodel: {preset: gpt3-175b}\ncompute: {parallelism: {tp: 7}}\n", "divisor"),
    ("kind: training\nmodel: {preset: gpt3-175b}\ntraining: {tokens: -5B}\n", "tokens"),
    ("kind: training\nmodel: {preset: gpt3-175b\n", "YAML"),
    ("kind: training\nmodel: {preset: gpt3-175b}\ntraining: {precision: fp8}\ncompute: {accelerator: a100-sxm-80gb}\n",
     "FP8"),
])
def test_bad_input_exits_2_with_the_field_named(tmp_path: Path, body: str, needle: str) -> None:
    f = tmp_path / "w.yaml"
    f.write_text(body)
    result = runner.invoke(app, ["compile", str(f)])
    assert result.exit_code == 2, result.output
    assert needle in result.output
    assert "Traceback" not in result.output


def test_model_that_fits_nowhere_exits_3_naming_memory(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text("kind: training\nmodel: {preset: llama3.1-405b}\ncompute: {accelerator: h100-sxm, gpus: 8}\n")
    result = runner.invoke(app, ["compile", str(f), "--json"])
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["feasible"] is False and "memory" in doc["binding_constraint"]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "intake.yaml"
    path.write_text(text, encoding="utf-8")
    return path


TRAIN_ON = """kind: training
model: {preset: llama3-8b}
training: {tokens: 100B, seq_len: 4096, global_batch_size: 256}
compute: {accelerator: %s, gpus: 32}
"""


def test_a_missing_node_power_is_not_sized_not_an_error(tmp_path: Path) -> None:
    """Issue 7: `wkc compile` failed with exit 2 on mi300x ("node_max_power_w: None is not
    allowed"). Now: exit 0, the facility layer not sized with the missing catalog field, the
    other layers filled; the terminal and Markdown reports render it."""
    path = _write(tmp_path, TRAIN_ON % "mi300x")
    code, doc = compile_json(path)
    assert code == 0 and doc["feasible"] is True
    assert doc["facility"]["missing"] == ["systems.mi300x-oam-8.node_max_power_w"]
    assert doc["not_sized"]["facility"].startswith("not sized")
    assert doc["compute"]["gpus"] == 32 and doc["fabric"] and doc["storage"] and doc["software"]
    for flag in ([], ["--md"]):
        result = runner.invoke(app, ["compile", str(path), *flag])
        assert result.exit_code == 0 and "node_max_power_w" in result.stdout and "Traceback" not in result.stdout


def test_a_missing_compute_number_is_an_answer_with_the_gap_named(tmp_path: Path) -> None:
    """V100 has no BF16 (catalog null): exit 3 (an answer), the gap named, no traceback."""
    code, doc = compile_json(_write(tmp_path, TRAIN_ON % "v100"))
    assert code == 3 and doc["feasible"] is False
    assert "accelerators.v100.peak_flops.bf16" in doc["binding_constraint"]
    assert doc["objective"]["total_flops"] > 0 and "compute" in doc["not_sized"]
