"""The public API is explicit and pinned (HABITS 12)."""

import pytest

import workload_compiler
from shared_data import REPO_ROOT

GPT3 = REPO_ROOT / "examples" / "gpt3-175b-a100.yaml"


def test_exported_members() -> None:
    assert workload_compiler.__all__ == sorted(workload_compiler.__all__)
    assert set(workload_compiler.__all__) == {
        "Infeasible", "InfeasibleError", "InputError", "SystemSpec", "WorkloadError", "compile_workload",
        "load_workload", "parse_workload", "recompile"}
    for name in workload_compiler.__all__:
        assert getattr(workload_compiler, name) is not None


def test_one_error_hierarchy_with_the_old_names_kept() -> None:
    from workload_compiler import errors
    assert issubclass(errors.InputError, errors.WorkloadError) and issubclass(errors.InputError, ValueError)
    assert issubclass(errors.InfeasibleError, errors.WorkloadError)
    assert errors.WkcError is errors.WorkloadError and errors.Infeasible is errors.InfeasibleError


def test_compile_from_a_dict() -> None:
    spec = workload_compiler.compile_workload(workload_compiler.parse_workload({
        "kind": "training", "model": {"preset": "llama3-8b"},
        "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 128},
        "compute": {"accelerator": "h100-sxm", "gpus": 64}}))
    assert spec.feasible and spec.compute is not None
    assert 0 < spec.compute.mfu < 1  # type: ignore[union-attr]


def test_compile_takes_a_dict_or_a_path_directly() -> None:
    intake = {"kind": "training", "model": {"preset": "llama3-8b"},
              "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 128},
              "compute": {"accelerator": "h100-sxm", "gpus": 64}}
    from_dict = workload_compiler.compile_workload(intake)
    assert from_dict.compute is not None and from_dict.compute.gpus == 64  # type: ignore[union-attr]
    from_path = workload_compiler.compile_workload(GPT3)
    assert from_path.compute is not None and from_path.compute.gpus == 1024  # type: ignore[union-attr]


def test_recompile_applies_pins_and_lists_them() -> None:
    base = workload_compiler.compile_workload(GPT3)
    pinned = workload_compiler.recompile(GPT3, {"compute.accelerator": "h100-sxm"})
    assert pinned.pins == {"compute.accelerator": "h100-sxm"}
    assert pinned.compute.accelerator == "h100-sxm"  # type: ignore[union-attr]
    # a faster GPU at the same count and layout trains sooner
    assert pinned.objective.time_to_train_s < base.objective.time_to_train_s  # type: ignore[union-attr]


def test_recompile_names_the_nearest_keys_for_an_unknown_pin() -> None:
    with pytest.raises(workload_compiler.InputError, match=r"did you mean facility\.power"):
        workload_compiler.recompile(GPT3, {"facility.powr": "1MW"})
