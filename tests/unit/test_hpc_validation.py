"""HPC model vs the published runs of ../shared/calibration/hpc_public.yaml.

Goals (issue 7, item 7): in sample <= 8% MAPE, leave-one-GPU-out <= 10%, the records the model
cannot express listed with the missing feature named; the frozen constants of hpc/fitted.py are
what a refit (from the priors) on the same records gives. Measured 2026-12: in sample 6.6% over
43 cases; leave-one-GPU-out 8.5% overall (a100 7.3%, gh200 5.0%, h100 7.2%, v100 3.9%,
mi250x 15.2%: the AMD shares and the MD Amdahl share are identified by MI250X records only, so held
out they are the priors, published figures of other GPUs in ../shared/reference/hpc.md).
"""

import math
from dataclasses import fields, replace
from typing import Any

import pytest

from shared_data import calibration_dir, require
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.hpc.classes import gpu_family
from workload_compiler.hpc.fit import _loss, fit_constants, leave_one_gpu_out, md_serial_fraction
from workload_compiler.hpc.fitted import FITTED, PRIORS
from workload_compiler.validation.hpc_records import hpc_cases, hpc_validation, load_hpc_records

CALIBRATION = calibration_dir()
@pytest.fixture(autouse=True)
def _needs_shared_data() -> None:
    require(CALIBRATION)


@pytest.fixture(scope="module")
def data():  # type: ignore[no-untyped-def]
    records = load_hpc_records(CALIBRATION)
    cases, skipped = hpc_cases(records, load_catalog())
    return records, cases, skipped


def test_mape_per_group_within_goal() -> None:
    v = hpc_validation(CALIBRATION)
    mape = v.mape_by_group()
    assert {"hpl", "dgemm", "stream", "fft", "md:gromacs", "md:amber", "cfd:lbm"} <= set(mape)
    for group, err in mape.items():
        assert err <= 0.15, (group, err)
    assert all(math.isfinite(r.predicted) and r.predicted > 0 for r in v.rows)
    # In sample over every expressed case: 6.64% measured (goal <= 8%).
    assert len(v.rows) >= 43 and v.summary()["in_sample_mape"] <= 0.070


def test_inexpressible_records_are_listed_with_a_reason(data) -> None:  # type: ignore[no-untyped-def]
    records, cases, skipped = data
    ids = {r["id"] for r in records}
    covered = {c.record_id.split("#")[0] for c in cases} | {s.id for s in skipped}
    assert covered == ids
    reasons = {s.id: s.reason for s in skipped}
    assert "GPU count" in reasons["top500-2023-11-frontier"]
    assert reasons["lammps-lj-1gcd-mi250x-lumi"].startswith("missing feature: a Lennard-Jones")
    assert reasons["hplmxp-2022-frontier"].startswith("missing feature")
    assert all(s.reason for s in skipped)
    # Expressed since issue 7: multi-GPU FluidX3D (host-staged halos), A100 PCIe, GROMACS on 8 GCDs.
    expressed = {c.record_id.split("#")[0] for c in cases}
    assert {"lbm-fluidx3d-8xa100-sxm4-40gb", "lbm-fluidx3d-4xa100-pcie-80gb", "lbm-fluidx3d-1xa100-pcie-80gb",
            "gromacs-stmv-8gcd-mi250x-lumi-2023"} <= expressed


def test_frozen_constants_are_the_refit(data) -> None:  # type: ignore[no-untyped-def]
    records, cases, _ = data
    refit = fit_constants(cases, records)
    single = ("stream_fraction", "md_serial_fraction", "all_to_all_network_fraction", "host_staging_fraction",
              "amd_kernel_fraction", "amd_fft_fraction", "stencil_fraction")
    for name in single:
        assert getattr(FITTED, name) == pytest.approx(getattr(refit, name), rel=0.01), name
    # Coupled constants (GEMM pair, MD pair) sit on flat ridges: compare the loss, not each value.
    assert _loss(cases, FITTED) <= _loss(cases, refit) * 1.02 + 1e-9
    assert {f.name for f in fields(FITTED)} == {f.name for f in fields(refit)}
    # Every constant of fitted.py is one the fit derives: started 30% off, none stays where it began,
    # and the ones a set of records pins alone come back to the frozen values.
    moved = replace(FITTED, **{f.name: getattr(FITTED, f.name) * 1.3 for f in fields(FITTED)})
    from_moved = fit_constants(cases, records, moved)
    assert [f.name for f in fields(FITTED) if getattr(from_moved, f.name) == getattr(moved, f.name)] == []
    for name in ("stream_fraction", "md_serial_fraction", "all_to_all_network_fraction"):
        assert getattr(from_moved, name) == pytest.approx(getattr(FITTED, name), rel=0.01), name
    assert _loss(cases, FITTED) <= _loss(cases, from_moved) * 1.02 + 1e-9


def test_serial_fraction_is_amdahl_of_the_lumi_pair(data) -> None:  # type: ignore[no-untyped-def]
    """gromacs-stmv-1gcd/-8gcd-mi250x-lumi-2023: 16.213 and 78.376 ns/day on 1 and 8 GCDs."""
    records, _, _ = data
    assert md_serial_fraction(records) == pytest.approx((16.213 / 78.376 - 1 / 8) / (1 - 1 / 8))


def test_leave_one_gpu_out_predicts_every_held_out_case(data) -> None:  # type: ignore[no-untyped-def]
    records, cases, _ = data
    fast = [c for c in cases if c.group in ("stream", "cfd:lbm")]
    rows = leave_one_gpu_out(fast, records)
    assert sorted(r.id for r in rows) == sorted(c.record_id for c in fast)
    # Bandwidth-bound kernels carry over between GPUs: worst held-out case 17.4% (4x A100 PCIe FP16S
    # FluidX3D, its host staging learnt from the V100 box alone), MAPE 5.0%.
    assert max(abs(r.error) for r in rows) < 0.19
    assert sum(abs(r.error) for r in rows) / len(rows) < 0.06


def test_priors_of_the_amd_shares_and_md_serial_part_are_the_reference_figures() -> None:
    """The priors a held-out MI250X falls back to are published figures of other GPUs
    (../shared/reference/hpc.md), not fitted: FluidX3D FP32 bandwidth share 58% on MI355X against
    76-85% on NVIDIA; 512^3 complex-double FFT at 1.10 of 5.3 TB/s on MI300A against 1.75 of 4.0
    on GH200; GROMACS STMV 49.7 ns/day on one GH200 and 155.4 on four."""
    assert PRIORS.amd_kernel_fraction == pytest.approx(0.58 / ((0.76 + 0.85) / 2), abs=0.005)
    assert PRIORS.amd_fft_fraction == pytest.approx((1.10 / 5.3) / (1.75 / 4.0), abs=0.001)
    assert PRIORS.md_serial_fraction == pytest.approx((49.7 / 155.4 - 1 / 4) / (1 - 1 / 4), abs=0.0005)


def test_leave_one_gpu_out_learns_nothing_from_the_held_out_gpu(data) -> None:  # type: ignore[no-untyped-def]
    """MI250X is the only AMD GPU of the public set and the only one with 1- vs N-GPU MD runs:
    with it held out, the AMD shares and the MD Amdahl share stay at their priors (the old fold
    kept the fitted serial fraction, learnt from MI250X itself)."""
    records, cases, _ = data
    train = [k for k in cases if gpu_family(k.accelerator) != "mi250x"]
    kept = [r for r in records if "mi250x" not in str((r.get("hardware") or {}).get("gpu_type")).lower()]
    c = fit_constants(train, kept, PRIORS)
    assert (c.amd_kernel_fraction, c.amd_fft_fraction, c.md_serial_fraction) == (
        PRIORS.amd_kernel_fraction, PRIORS.amd_fft_fraction, PRIORS.md_serial_fraction)
    assert c.stream_fraction == pytest.approx(FITTED.stream_fraction, rel=0.01)   # NVIDIA records suffice


def test_unexpected_record_forms_are_skipped_not_crashed() -> None:
    """Records outside the public set (a holdout file beside it) may use other forms."""
    odd: list[dict[str, Any]] = [
        {"id": "x1", "category": "md", "hardware": {"gpu_type": "NVIDIA GH200", "gpu_count": "four"},
         "problem_size": {"value": 1066628, "notes": "2 fs, 1.2 nm cutoffs"}, "measured": {"ns_per_day": 150}},
        {"id": "x2", "category": "stream", "hardware": None, "measured": {}},
        {"id": "x3", "category": "plasma"},
        {"id": "x4", "category": "hpl", "hardware": 5, "measured": "x"},
        {"id": "x5", "category": "cfd", "application": "FluidX3D", "problem_size": {"value": "largest"},
         "hardware": {"gpu_type": "NVIDIA A100 SXM4 40GB", "gpu_count": 1e30}, "measured": {"mlups_fp32_fp32": 1}},
        {"id": "x6", "category": "stream", "hardware": {"gpu_type": "NVIDIA H100"}, "measured": {"triad_tbps": -3}}]
    cases, skipped = hpc_cases(odd, load_catalog())
    assert not cases and [s.id for s in skipped] == ["x1", "x2", "x3", "x4", "x5", "x6"]


def test_a_multi_gpu_md_record_on_a_known_node_is_expressed() -> None:
    """GROMACS STMV on 4 GH200 of one node (the form of the CSC/CSCS records): Amdahl + halo."""
    rec: dict[str, Any] = {"id": "gh200x4", "category": "md", "application": "GROMACS", "precision": "mixed",
           "hardware": {"gpu_type": "NVIDIA GH200", "gpu_count": 4, "gpus_per_node": 4},
           "problem_size": {"value": 1066628, "notes": "2 fs, 1.2 nm cutoffs"}, "measured": {"ns_per_day": 150.0}}
    cases, skipped = hpc_cases([rec], load_catalog())
    assert not skipped and cases[0].gpus == 4
    one = hpc_cases([{**rec, "hardware": {**rec["hardware"], "gpu_count": 1}}], load_catalog())[0][0]
    speedup = cases[0].predict(FITTED) / one.predict(FITTED)
    assert 1 / (FITTED.md_serial_fraction + (1 - FITTED.md_serial_fraction) / 4) * 0.9 < speedup < 4
