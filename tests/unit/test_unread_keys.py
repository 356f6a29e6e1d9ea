"""A key of a shared section that the archetype does not read is refused, each named with the keys that
apply (intake/infrastructure.py reject_unread): a serving fleet reads no dataset, checkpoint writes,
training restarts or training layout; an HPC run sizes its scratch and checkpoints from `io`."""

from __future__ import annotations

import pytest

from workload_compiler.compile import compile_workload
from workload_compiler.errors import InputError

LLAMA_8B = {"kind": "inference", "model": {"preset": "llama3.1-8b"},
            "serving": {"input_tokens": 1000, "output_tokens": 200, "weights": "bf16"},
            "compute": {"accelerator": "h100-sxm"}}


def test_training_storage_keys_in_a_serving_intake_are_refused_each_named() -> None:
    with pytest.raises(InputError) as err:
        compile_workload({**LLAMA_8B, "storage": {"dataset_tokens": "1T", "checkpoint_mode": "async"}})
    fields = [p.field for p in err.value.problems]
    assert fields == ["storage.checkpoint_mode", "storage.dataset_tokens"]
    assert "only loads its model checkpoint" in str(err.value)


def test_an_hpc_storage_key_points_to_io() -> None:
    hpc = {"kind": "hpc", "application": {"class": "molecular_dynamics"}, "problem": {"size": 1e6, "unit": "atoms"},
           "steps": 1000, "storage": {"tier": "best"}}
    with pytest.raises(InputError) as err:
        compile_workload(hpc)
    assert err.value.field == "storage.tier" and "io (output_bytes_per_step" in str(err.value)


def test_a_training_runs_reliability_keys_are_refused_for_serving_and_hpc_failure_rates_kept() -> None:
    with pytest.raises(InputError) as err:
        compile_workload({**LLAMA_8B, "reliability": {"restart_time": "10min", "failures_per_gpu_day": 0.001}})
    assert [p.field for p in err.value.problems] == ["reliability.restart_time"]
    hpc = {"kind": "hpc", "application": {"class": "molecular_dynamics"}, "problem": {"size": 1e6, "unit": "atoms"},
           "steps": 1000}
    with pytest.raises(InputError) as err:
        compile_workload({**hpc, "reliability": {"checkpoint_interval": "1h"}})
    assert err.value.field == "reliability.checkpoint_interval" and "io.checkpoint_every" in str(err.value)
    spec = compile_workload({**hpc, "reliability": {"failures_per_gpu_day": 0.001}})
    assert spec.feasible


def test_a_training_layouts_keys_are_refused_for_serving_its_own_kept() -> None:
    with pytest.raises(InputError) as err:
        compile_workload({**LLAMA_8B, "compute": {"accelerator": "h100-sxm",
                                                  "parallelism": {"tp": 2, "zero_stage": 3, "dp": 4}}})
    assert [p.field for p in err.value.problems] == ["compute.parallelism.dp", "compute.parallelism.zero_stage"]
    assert "serving.max_replicas" in str(err.value)
    spec = compile_workload({**LLAMA_8B, "compute": {"accelerator": "h100-sxm", "parallelism": {"tp": 2}}})
    assert spec.compute is not None and spec.compute["parallelism"]["tp"] == 2  # type: ignore[index]


def test_an_explicit_null_is_not_given_and_is_not_refused() -> None:
    spec = compile_workload({**LLAMA_8B, "storage": {"dataset_tokens": None}, "reliability": {"restart_time": None},
                             "compute": {"accelerator": "h100-sxm", "parallelism": {"dp": None}}})
    assert spec.feasible
