"""The collision engine on limits the seed cases do not cover: a budget, a replica cap, an HPC
target, a pinned GPU count that already meets everything (no collision, no alternatives), and
the result document's typed sections."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workload_compiler import compile_workload, recompile
from workload_compiler.cost.result import CostSection
from workload_compiler.quantity import unit_of
from workload_compiler.sizing.result import Alternative

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_a_budget_is_a_target_in_dollars() -> None:
    spec = recompile(EXAMPLES / "gpt3-175b-a100.yaml", {"cost": {"gpu_hour_usd": 1.5, "budget_usd": "500K"},
                                                        "target.time_to_train": None})
    budget = next(c for c in spec.collisions if c.constraint == "budget")
    assert budget.kind == "target" and budget.unit == "USD" and budget.limit == 500e3
    assert spec.cost is not None and budget.requirement == spec.cost.cost_usd
    assert "budget is" in budget.detail
    assert spec.alternatives and all(any(ch.key == "cost.budget_usd" for ch in a.checks) for a in spec.alternatives)


def test_a_replica_cap_collides_and_larger_replicas_are_offered() -> None:
    spec = recompile(EXAMPLES / "llama3.3-70b-chat.yaml", {"serving.max_replicas": 2, "compute.max_gpus": None})
    cap = next(c for c in spec.collisions if c.constraint == "replica cap")
    assert cap.requirement is not None and cap.requirement > 2 and cap.limit == 2
    assert not spec.feasible                      # the sized fleet exceeds a pinned limit
    larger = next(a for a in spec.alternatives if a.lever == "tp")
    assert larger.feasible and larger.gpus_per_replica and larger.replicas is not None
    assert larger.gpus_per_replica > (spec.inference or {})["gpus_per_replica"]
    assert larger.replicas < cap.requirement


def test_an_hpc_target_missed_on_pinned_gpus() -> None:
    data: dict[str, Any] = {"kind": "hpc", "name": "spectral", "application": {"class": "fft_spectral"},
                            "problem": {"size": "2048^3"}, "precision": "fp64", "steps": 2000,
                            "target": {"time_to_solution": "100s"}, "compute": {"accelerator": "a100-sxm-80gb",
                                                                              "gpus": 64},
                            "cost": {"gpu_hour_usd": {"a100-sxm-80gb": 1.5, "h100-sxm": 2.0}}}
    spec = compile_workload(data)
    gpu = next(c for c in spec.collisions if c.unit == "count")
    assert gpu.limit == 64 and gpu.requirement is not None and gpu.requirement > 64
    levers = {a.lever for a in spec.alternatives}
    assert {"precision", "accelerator", "schedule", "gpus"} <= levers
    faster = next(a for a in spec.alternatives if a.lever == "gpus")
    assert faster.meets_targets and faster.time_to_solution_s is not None and faster.time_to_solution_s <= 7200
    assert faster.cost_usd is not None


def test_no_collision_no_alternatives() -> None:
    spec = recompile(EXAMPLES / "gpt3-175b-a100.yaml", {"target.time_to_train": "40d"})
    assert spec.collisions == [] and spec.alternatives == [] and spec.feasible


def test_sections_are_typed_with_units() -> None:
    assert unit_of(Alternative, "time_to_train_s") == "s"
    assert unit_of(Alternative, "cost_usd") == "USD"
    assert unit_of(CostSection, "energy_wh") == "Wh"
    schema = compile_workload(EXAMPLES / "gpt3-175b-a100.yaml").model_json_schema()
    assert "Alternative" in schema["$defs"] and "CostSection" in schema["$defs"]


def test_a_variant_on_another_machine_leaves_the_baselines_measurements_behind() -> None:
    measured = {"accelerator.hbm_bandwidth_bytes_per_s": {
        "value": 2.95e12, "unit": "B/s", "machine": {"kind": "accelerator", "id": "h100-sxm"},
        "date": "2026-05-01", "tool": "wkc calibrate"}}
    spec = recompile(EXAMPLES / "gpt3-175b-a100.yaml", {"compute.accelerator": "h100-sxm",
                                                        "target.time_to_train": "10d",
                                                        "measured": {"values": measured}})
    denser = next(a for a in spec.alternatives if a.lever == "accelerator")
    assert denser.feasible and denser.accelerator == "b200"
    assert denser.notes and "h100-sxm" in denser.notes[0]
    same = next(a for a in spec.alternatives if a.lever == "tokens")
    assert same.feasible and not same.notes


def test_more_gpus_is_offered_only_where_a_gpu_limit_binds() -> None:
    # GPT-3 175B on A100 with a $500K budget: the pinned 1,024 GPUs (and dp 16) are a limit to lift
    # (the "gpus" lever: here named "right-sized cluster", sizing/collide.py); without them the
    # intake has no GPU limit, and that variant would be the baseline compiled again
    budget = {"cost": {"gpu_hour_usd": 1.5, "budget_usd": "500K"}, "target.time_to_train": None}
    pinned = recompile(EXAMPLES / "gpt3-175b-a100.yaml", budget)
    assert any(a.lever == "gpus" for a in pinned.alternatives)
    free = recompile(EXAMPLES / "gpt3-175b-a100.yaml", {**budget, "compute.gpus": None, "compute.parallelism": None})
    assert free.alternatives and not any(a.lever == "gpus" for a in free.alternatives)
