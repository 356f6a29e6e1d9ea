"""Acceptance targets: the rates the sizing assumed, at the job's sizes, each with the source of its
expected fraction of peak."""

from __future__ import annotations

import pytest
from engagement_builders import H100_4096, HPL, compiled

from workload_compiler.hpc.fitted import FITTED as HPC
from workload_compiler.perf.collectives import NIC_EFFICIENCY, NVLINK_EFFICIENCY
from workload_compiler.perf.efficiency import HBM_EFFICIENCY


def targets(path):  # type: ignore[no-untyped-def]
    a = compiled(path).acceptance
    assert a is not None
    return a.targets


def test_every_target_of_the_4096_gpu_job_has_a_source_and_a_tool() -> None:
    ts = targets(H100_4096)
    assert all(t.fraction_source and t.tool and t.expected > 0 for t in ts)
    tests = {(t.test, (t.tier or "").split(" (")[0]) for t in ts}
    for expected in [("NCCL all-reduce bus bandwidth", "scale-up"), ("NCCL all-reduce bus bandwidth", "scale-out"),
                     ("NCCL all-to-all bus bandwidth", "scale-up"), ("NCCL all-to-all bus bandwidth", "scale-out"),
                     ("GEMM throughput", "per GPU"), ("HBM bandwidth", "per GPU"),
                     ("storage aggregate read", "aggregate over 512 nodes"),
                     ("storage aggregate write", "aggregate over 512 nodes")]:
        assert expected in tests, expected


def test_collective_targets_sit_below_the_line_rate_by_the_models_efficiency() -> None:
    ts = targets(H100_4096)
    up = next(t for t in ts if t.test.startswith("NCCL all-reduce") and t.tier and t.tier.startswith("scale-up"))
    out = next(t for t in ts if t.test.startswith("NCCL all-reduce") and t.tier and t.tier.startswith("scale-out"))
    assert up.ranks == 8 and out.ranks == 4096
    assert up.fraction_of_peak is not None and up.fraction_of_peak <= NVLINK_EFFICIENCY
    assert out.fraction_of_peak is not None and out.fraction_of_peak <= NIC_EFFICIENCY
    # the scale-out message is the job's gradient shard: params / (tp x pp) x 2 B
    spec = compiled(H100_4096)
    par = spec.compute.parallelism  # type: ignore[union-attr]
    params = spec.objective.params  # type: ignore[union-attr]
    assert out.message_bytes == pytest.approx(params / (par.tp * par.pp) * 2)
    assert "nccl-tests" in out.tool and out.command and "4096 ranks" in out.command


def test_gemm_and_hbm_targets_use_the_fitted_and_babelstream_fractions() -> None:
    ts = targets(H100_4096)
    bf16 = next(t for t in ts if t.test == "GEMM throughput" and (t.precision or "").startswith("bf16"))
    assert bf16.peak == pytest.approx(989.4e12) and "the job's" in (bf16.precision or "")
    # the step model's own GEMM efficiency at 2 x 8192^3 FLOP (perf/efficiency.py, perf/fitted.py)
    from workload_compiler.perf.efficiency import gemm_efficiency
    from workload_compiler.perf.fitted import FITTED
    expected = float(gemm_efficiency(2 * 8192**3, peak_flops=989.4e12, e_max=FITTED.gemm_e_max,
                                     kernel_overhead_s=FITTED.gemm_kernel_overhead_s))
    assert bf16.fraction_of_peak == pytest.approx(expected) and 0.5 < expected < FITTED.gemm_e_max
    assert "perf/fitted.py" in bf16.fraction_source
    hbm = next(t for t in ts if t.test == "HBM bandwidth")
    assert hbm.expected == pytest.approx(HBM_EFFICIENCY * 3.35e12)


def test_hpl_target_for_an_hpc_job() -> None:
    ts = targets(HPL)
    hpl = next(t for t in ts if t.test == "HPL Rmax")
    per_gpu = min(HPC.gemm_fraction * 67e12, HPC.gemm_fp64_flops_per_j * 700)
    assert hpl.expected == pytest.approx(512 * per_gpu)
    assert "HPL per GPU" in hpl.fraction_source
    fp64 = next(t for t in ts if t.test == "GEMM throughput" and t.precision == "fp64")
    assert fp64.fraction_of_peak == HPC.gemm_fraction


def test_an_hpc_jobs_scratch_target_cites_its_io_plan_not_a_tier() -> None:
    """An HPC job sizes its scratch from its own output and checkpoints, with no catalog tier: the
    target's source said "DGX H100 RA Table 6, 'None' tier"."""
    from engagement_builders import EXAMPLES

    from workload_compiler import compile_workload

    acceptance = compile_workload(EXAMPLES / "hpc-cfd-fv.yaml").acceptance
    assert acceptance is not None
    scratch = next(t for t in acceptance.targets if t.test == "scratch write")
    assert "scratch_plan" in scratch.fraction_source and "None" not in scratch.fraction_source


def test_the_readiness_checklist_gets_numeric_targets() -> None:
    spec = compiled(H100_4096)
    checks = {c["id"]: c for c in spec.software["readiness"]}  # type: ignore[index]
    collective = checks["collective_tests"]["acceptance"]
    assert collective and all(x["unit"] == "B/s" and x["expected"] > 0 for x in collective)
    assert {x["test"] for x in checks["gpu_diagnostics"]["acceptance"]} >= {"GEMM throughput", "HBM bandwidth"}


def test_scale_out_all_to_all_is_bounded_by_one_gpus_nic() -> None:
    ts = targets(H100_4096)
    a2a = next(t for t in ts if t.test.startswith("NCCL all-to-all") and (t.tier or "").startswith("scale-out"))
    assert a2a.peak == pytest.approx(50e9) and a2a.fraction_of_peak is not None
    assert a2a.fraction_of_peak <= NIC_EFFICIENCY


def test_a_generic_ddp_job_is_tested_at_its_gradient_bucket_and_says_it_does_no_all_to_all() -> None:
    from engagement_builders import IMAGE

    from workload_compiler.engagement.acceptance import DDP_BUCKET_BYTES
    ts = targets(IMAGE)
    ar = next(t for t in ts if t.test.startswith("NCCL all-reduce"))
    a2a = next(t for t in ts if t.test.startswith("NCCL all-to-all"))
    # ResNet-50: 25.56M params x 2 B = 51 MB of gradients, all-reduced in 25 MiB buckets
    assert ar.message_bytes == pytest.approx(DDP_BUCKET_BYTES) and "51.1 MB" in ar.sized_for
    assert "does no all-to-all" in a2a.sized_for


def test_a_rate_measured_on_the_sized_machine_is_the_target_and_says_so() -> None:
    from engagement_builders import intake

    from workload_compiler import compile_workload
    from workload_compiler.perf.efficiency import gemm_efficiency
    data = intake(H100_4096)
    run = {"unit": "1", "machine": {"kind": "accelerator", "id": "h100-sxm"}, "date": "2026-05-01",
           "tool": "wkc calibrate 0.1.0"}
    data["measured"] = {"values": {
        "accelerator.gemm_e_max.bf16": {**run, "value": 0.80},
        "accelerator.gemm_kernel_overhead_s.bf16": {**run, "value": 2e-5, "unit": "s"},
        "accelerator.hbm_bandwidth_bytes_per_s": {**run, "value": 3.0e12, "unit": "B/s"}}}
    spec = compile_workload(data)
    assert spec.acceptance is not None
    ts = spec.acceptance.targets
    bf16 = next(t for t in ts if t.test == "GEMM throughput" and (t.precision or "").startswith("bf16"))
    fp8 = next(t for t in ts if t.test == "GEMM throughput" and t.precision == "fp8")
    assert bf16.fraction_of_peak == pytest.approx(float(gemm_efficiency(
        2 * 8192**3, peak_flops=989.4e12, e_max=0.80, kernel_overhead_s=2e-5)))
    assert "measured on the sized accelerator h100-sxm" in bf16.fraction_source
    assert "perf/fitted.py" in fp8.fraction_source                  # fp8 was not measured
    hbm = next(t for t in ts if t.test == "HBM bandwidth")
    assert hbm.expected == pytest.approx(3.0e12) and "measured" in hbm.fraction_source
