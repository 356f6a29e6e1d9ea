"""The calibration analysis on recorded sample runs (tests/fixtures/calibration: SYNTHETIC, generated
by make_fixtures.py from known constants plus 1-2% noise): the fits recover the constants, and a
fit that is not physical is refused rather than written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.measure.apply import entry
from workload_compiler.measure.calibration import RawRun, analyze
from workload_compiler.measure.fit import fit_collective, fit_gemm, fit_relative_line, fit_stream

FIXTURES = Path(__file__).parents[1] / "fixtures" / "calibration"
CAT = load_catalog()


def raw(name: str) -> RawRun:
    return RawRun.model_validate(yaml.safe_load((FIXTURES / f"{name}.raw.yaml").read_text()))


def test_an_exact_line_is_recovered_exactly() -> None:
    x = np.array([1e9, 1e10, 1e11, 1e12])
    fit = fit_relative_line(x, 2e-15 * x + 5e-6, "t")
    assert fit.slope == pytest.approx(2e-15) and fit.intercept == pytest.approx(5e-6) and fit.mape < 1e-12


def test_a_negative_intercept_is_refitted_through_the_origin() -> None:
    x = np.array([1e9, 2e9, 4e9])
    fit = fit_relative_line(x, 1e-12 * x - 1e-4, "t")
    assert fit.intercept == 0.0 and fit.slope > 0


@pytest.mark.parametrize(("x", "t"), [([1.0], [1.0]), ([1.0, 1.0], [1.0, 2.0]), ([1.0, 2.0], [1.0, -1.0]),
                                      ([1.0, 2.0], [2.0, 1.0])])
def test_points_that_cannot_give_a_rate_are_an_input_error(x: list[float], t: list[float]) -> None:
    with pytest.raises(InputError):
        fit_relative_line(x, t, "points")


def test_gemm_fit_is_the_efficiency_models_form() -> None:
    """eff(F) = e_max F / (F + e_max peak t0): times built from it give back e_max and t0."""
    peak, e_max, t0 = 989e12, 0.75, 8e-6
    m = n = k = np.array([512, 1024, 2048, 4096, 8192])
    t = 2.0 * m * n * k / (e_max * peak) + t0
    fit = fit_gemm(m, n, k, t, peak)
    assert fit.e_max == pytest.approx(e_max) and fit.kernel_overhead_s == pytest.approx(t0)
    from workload_compiler.perf.efficiency import gemm_efficiency
    f = 2.0 * 4096**3
    assert f / (f / (fit.e_max * peak) + fit.kernel_overhead_s) / peak == pytest.approx(
        float(gemm_efficiency(f, peak_flops=peak, e_max=e_max, kernel_overhead_s=t0)))


def test_h100_sample_recovers_its_generating_constants() -> None:
    cal = analyze(raw("h100-sxm"), CAT, "h100-sxm", "dgx-h100")
    assert cal.synthetic
    assert cal.gemm["bf16"].e_max == pytest.approx(0.76, abs=0.01)
    assert cal.gemm["bf16"].kernel_overhead_s == pytest.approx(9e-6, abs=1.5e-6)
    assert cal.gemm["fp8"].e_max == pytest.approx(0.70, abs=0.01)
    assert cal.gemm["bf16"].mape < 0.03
    assert cal.hbm is not None and cal.hbm.bytes_per_s == pytest.approx(2.95e12, rel=0.01)
    assert cal.hbm.fraction_of_datasheet == pytest.approx(2.95 / 3.35, rel=0.01)
    assert cal.collectives["all_reduce"].bytes_per_s == pytest.approx(365e9, rel=0.02)
    assert cal.collectives["all_to_all"].bytes_per_s == pytest.approx(330e9, rel=0.02)
    assert set(cal.values) == {
        "accelerator.gemm_e_max.bf16", "accelerator.gemm_kernel_overhead_s.bf16", "accelerator.gemm_e_max.fp8",
        "accelerator.gemm_kernel_overhead_s.fp8", "accelerator.hbm_bandwidth_bytes_per_s",
        "fabric.scale_up_busbw_bytes_per_s.all_reduce", "fabric.scale_up_busbw_bytes_per_s.all_to_all"}
    for key, v in cal.values.items():           # every value passes the intake's own checks
        e = entry(key, v, CAT, "calibration")
        assert e.machine_id == ("dgx-h100" if key.startswith("fabric.") else "h100-sxm")
        assert "synthetic" in v.tool


def test_without_a_node_type_the_bus_bandwidth_is_not_bound() -> None:
    cal = analyze(raw("h100-sxm"), CAT, "h100-sxm", None)
    assert not any(k.startswith("fabric.") for k in cal.values)
    assert any("--system" in n for n in cal.notes)


def test_more_ranks_than_the_scale_up_domain_is_not_a_scale_up_figure() -> None:
    run = raw("h100-sxm")
    run.collectives["all_reduce"].ranks = 16
    cal = analyze(run, CAT, "h100-sxm", "dgx-h100")
    assert "fabric.scale_up_busbw_bytes_per_s.all_reduce" not in cal.values
    assert any("scale-up domain" in n for n in cal.notes)


def test_gemm_faster_than_the_dense_peak_is_noted_not_written() -> None:
    cal = analyze(raw("bad-peak"), CAT, "h100-sxm")
    assert cal.gemm["bf16"].e_max > 1.05
    assert "accelerator.gemm_e_max.bf16" not in cal.values and any("exceeds" in n for n in cal.notes)


def test_a_precision_without_a_catalog_peak_is_skipped_with_a_note() -> None:
    run = raw("a100-sxm-80gb")
    run.gemm["fp8"] = run.gemm["bf16"]
    cal = analyze(run, CAT, "a100-sxm-80gb")
    assert "fp8" not in cal.gemm and any("fp8" in n for n in cal.notes)
    assert cal.gemm["bf16"].e_max == pytest.approx(0.80, abs=0.01)


def test_stream_and_collective_fits() -> None:
    b = np.array([1e8, 1e9, 1e10])
    s = fit_stream(b, b / 2e12 + 4e-6, 2.5e12)
    assert s.bytes_per_s == pytest.approx(2e12) and s.fraction == pytest.approx(0.8)
    size = np.array([1e6, 1e7, 1e8, 1e9])
    c = fit_collective("all_reduce", 8, size, 2 * 7 / 8 * size / 3e11 + 2e-5)
    assert c.bytes_per_s == pytest.approx(3e11) and c.latency_s == pytest.approx(2e-5)
    with pytest.raises(InputError):
        fit_collective("broadcast", 8, size, size / 1e9)
