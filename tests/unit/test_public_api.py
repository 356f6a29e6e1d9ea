"""The public API is explicit and pinned (HABITS 12)."""

import workload_compiler


def test_exported_members() -> None:
    assert workload_compiler.__all__ == sorted(workload_compiler.__all__)
    assert set(workload_compiler.__all__) == {
        "Infeasible", "InputError", "SystemSpec", "compile_workload", "load_workload", "parse_workload"}


def test_compile_from_a_dict() -> None:
    spec = workload_compiler.compile_workload(workload_compiler.parse_workload({
        "kind": "training", "model": {"preset": "llama3-8b"},
        "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 128},
        "compute": {"accelerator": "h100-sxm", "gpus": 64}}))
    assert spec.feasible and spec.compute is not None
    assert 0 < spec.compute.mfu < 1  # type: ignore[union-attr]
