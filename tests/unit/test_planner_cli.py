"""`wkc plan`: JSON contract, exit codes, the binding constraint in the message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from workload_compiler.cli.main import app

runner = CliRunner()
GPT3: dict[str, Any] = {"kind": "training", "name": "gpt3", "model": {"preset": "gpt3-175b"},
        "training": {"tokens": "300B", "seq_len": 2048, "global_batch_size": 1536, "precision": "bf16"},
        "compute": {"accelerator": "a100-sxm-80gb"}}
LAYOUT_KEYS = {"tp", "pp", "dp", "cp", "ep", "vp", "micro_batch_size", "recompute", "zero_stage",
               "sequence_parallel", "step_time_s", "step_breakdown_s", "tokens_per_s", "mfu",
               "memory_per_gpu_bytes", "memory_breakdown_bytes"}


def _write(tmp_path: Path, doc: dict[str, Any]) -> str:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_plan_json_has_the_documented_keys(tmp_path: Path) -> None:
    doc = GPT3 | {"compute": {"accelerator": "a100-sxm-80gb", "gpus": 1024,
                              "parallelism": {"pp": 8, "recompute": "full"}}}
    r = runner.invoke(app, ["plan", _write(tmp_path, doc), "--json", "--top", "3"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert 1 <= len(out["layouts"]) <= 3
    for layout in out["layouts"]:
        assert set(layout) >= LAYOUT_KEYS
        assert layout["pp"] == 8 and layout["recompute"] == "full"
        assert layout["tp"] * layout["pp"] * layout["dp"] * layout["cp"] == 1024
    s = out["search"]
    assert s["evaluated"] == sum(s["rejected"].values()) + s["feasible"]
    assert s["seconds"] >= 0
    assert out["fewest_gpus_to_hold"]["binding_term"] == "optimizer"


def test_plan_table_lists_layouts_and_rejections(tmp_path: Path) -> None:
    doc = GPT3 | {"compute": {"accelerator": "a100-sxm-80gb", "gpus": 64}}
    r = runner.invoke(app, ["plan", _write(tmp_path, doc)])
    assert r.exit_code == 0, r.output
    assert "rejected layouts" in r.stdout and "tp exceeds scale-up domain" in r.stdout
    assert "fewest GPUs that can hold the model" in r.stdout


def test_too_few_gpus_is_infeasible_and_names_model_state(tmp_path: Path) -> None:
    doc = GPT3 | {"compute": {"accelerator": "a100-sxm-80gb", "gpus": 8}}
    r = runner.invoke(app, ["plan", _write(tmp_path, doc)])
    assert r.exit_code == 3
    assert "per replica" in r.output and "8 x a100-sxm-80gb hold 680.75 GB" in r.output   # 8 x 79.25 GiB visible
    assert "Traceback" not in r.output


def test_a_deadline_beyond_the_cap_names_the_compute_bound(tmp_path: Path) -> None:
    doc = GPT3 | {"target": {"time_to_train": "1d"},
                  "compute": {"accelerator": "a100-sxm-80gb", "max_gpus": 64}}
    r = runner.invoke(app, ["plan", _write(tmp_path, doc)])
    assert r.exit_code == 3
    assert "100% of the dense peak" in r.output


LLAMA8B: dict[str, Any] = {"kind": "training", "model": {"preset": "llama3-8b"},
                           "training": {"tokens": "1T", "seq_len": 8192, "precision": "bf16"},
                           "compute": {"accelerator": "h100-sxm"}}


def _plan_and_compile(tmp_path: Path, doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    path = _write(tmp_path, doc)
    plan, spec = (runner.invoke(app, [cmd, path, "--json"]) for cmd in ("plan", "compile"))
    assert plan.exit_code == 0 and spec.exit_code == 0, (plan.output, spec.output)
    return json.loads(plan.stdout), json.loads(spec.stdout)


def test_plan_steps_on_the_fabric_compile_builds(tmp_path: Path) -> None:
    """A 2:1 oversubscribed fabric slows the cross-leaf collectives of 1,024 GPUs: plan ranks on the
    same effective bandwidth as compile (it ranked on the line rate: 3.94 s against compile's 4.21 s)."""
    plan, spec = _plan_and_compile(tmp_path, LLAMA8B | {
        "model": {"preset": "llama3-70b"}, "compute": {"accelerator": "h100-sxm", "gpus": 1024},
        "fabric": {"oversubscription": 2}})
    assert plan["layouts"][0]["step_time_s"] == spec["compute"]["step_time_s"]


def test_plan_meets_the_deadline_after_failures_as_compile_does(tmp_path: Path) -> None:
    """64 H100 train Llama 3 8B on 1T tokens in 19.29 d without failures, 19.42 d with them (goodput
    99.3%): a 19.35-day deadline needs the next count, 96, in plan as in compile (plan said 64)."""
    plan, spec = _plan_and_compile(tmp_path, LLAMA8B | {"target": {"time_to_train": "19.35d"}})
    assert plan["gpus"] == spec["compute"]["gpus"] == plan["deadline_search"]["gpus"]
    assert plan["gpus"] > 64
    assert plan["deadline_search"]["probes_time_to_train_s"]["64"] < 19.35 * 86400
    # the walk compares each count after failures: every count tried below the answer misses then
    adjusted = {int(n): t for n, t in plan["deadline_search"]["probes_goodput_adjusted_time_to_train_s"].items()}
    assert adjusted[plan["gpus"]] <= 19.35 * 86400 < adjusted[64]
    assert all(t > 19.35 * 86400 for n, t in adjusted.items() if n < plan["gpus"])
    obj = plan["objective"]
    assert obj["meets_deadline"] is True and obj["goodput_adjusted_time_to_train_s"] <= obj["deadline_s"]
    assert obj["goodput_adjusted_time_to_train_s"] == spec["objective"]["goodput_adjusted_time_to_train_s"]


def test_plan_without_a_count_or_deadline_takes_compiles_count(tmp_path: Path) -> None:
    """No GPU count, no pinned layout, no deadline: plan ranks the layouts of the count compile picks
    (the fewest whole nodes with a layout that fits) and says so, where it used to refuse."""
    plan, spec = _plan_and_compile(tmp_path, LLAMA8B | {"model": {"preset": "llama3-70b"}})
    assert plan["gpus"] == spec["compute"]["gpus"]
    assert plan["gpus_chosen_by"] == spec["provenance"]["compute.gpus"]["formula"]
    assert "fewest whole nodes" in plan["gpus_chosen_by"]
    assert plan["layouts"][0]["step_time_s"] == spec["compute"]["step_time_s"]


def test_plan_lists_the_counts_it_tried_with_thousands_separators(tmp_path: Path) -> None:
    """GPT-3 175B in 10 days on A100 needs over a thousand GPUs: each count tried reads '1,536: ...'."""
    import re

    doc = GPT3 | {"target": {"time_to_train": "10d"}}
    r = runner.invoke(app, ["plan", _write(tmp_path, doc)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    tried = r.stdout[r.stdout.index("tried "):]
    assert re.search(r"\b\d{1,3},\d{3}: \d", tried) and not re.search(r"\b\d{4,}: ", tried), tried
