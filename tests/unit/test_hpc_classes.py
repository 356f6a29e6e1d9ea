"""Solver-class defaults (hpc/classes.py) against the published per-unit figures they cite."""

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_compiler.errors import InputError
from workload_compiler.hpc.classes import (
    SOLVER_CLASSES,
    ClassOptions,
    class_profile,
    md_neighbors,
    with_overrides,
)


def test_lbm_matches_fluidx3d_readme() -> None:
    """FluidX3D README (calibration rot-lbm-bytes-flops-per-cell): D3Q19 per cell and step,
    153 B / 363 FLOPs (FP32), 77 B / 406 FLOPs (FP16S); 93 B and 55 B of memory per cell."""
    fp32 = class_profile("cfd_lbm", "fp32", 256**3)
    fp16 = class_profile("cfd_lbm", "fp16", 256**3)
    assert fp32.bytes_per_unit_step == 153 and fp32.flops_per_unit_step == 363
    assert fp16.bytes_per_unit_step == 77 and fp16.flops_per_unit_step == 406
    assert fp32.memory_per_unit_bytes == 93 and fp16.memory_per_unit_bytes == 55
    # arithmetic intensity 2.37 FLOP/B (README)
    assert fp32.flops_per_unit_step / fp32.bytes_per_unit_step == pytest.approx(2.37, abs=0.01)


def test_md_neighbours_follow_the_cutoff_cube() -> None:
    """rho 4/3 pi r^3 at 100 atoms/nm^3: 1.2 nm -> ~724 neighbours; FLOPs scale with r^3."""
    assert md_neighbors(1.2) == pytest.approx(723.8, rel=1e-3)
    far = class_profile("molecular_dynamics", "mixed", 1e6, ClassOptions(cutoff_nm=1.2))
    near = class_profile("molecular_dynamics", "mixed", 1e6, ClassOptions(cutoff_nm=0.9))
    pair = next(k for k in far.kernels if k.name == "nonbonded").flops_per_unit
    assert pair / next(k for k in near.kernels if k.name == "nonbonded").flops_per_unit == pytest.approx(
        (1.2 / 0.9) ** 3)


def test_dense_lu_counts_two_thirds_n_cubed() -> None:
    """HPL: 2/3 N^3 FLOPs per factorization; the matrix takes 8 N^2 bytes in FP64."""
    n = 1e5
    p = class_profile("dense_linear_algebra", "fp64", n)
    assert p.flops_per_unit_step * n == pytest.approx(2 / 3 * n**3)
    assert p.memory_per_unit_bytes * n == pytest.approx(8 * n**2)


def test_fft_flops_are_5_n_log2_n() -> None:
    n = 2048.0**3
    p = class_profile("fft_spectral", "fp32", n, ClassOptions(transforms_per_step=2))
    assert p.flops_per_unit_step * n == pytest.approx(2 * 5 * n * math.log2(n))


def test_unknown_class_and_precision_are_input_errors() -> None:
    with pytest.raises(InputError, match=r"application\.class"):
        class_profile("plasma_pic", "fp32", 1e6)
    with pytest.raises(InputError, match="precision"):
        class_profile("molecular_dynamics", "bf16", 1e6)


def test_overrides_rescale_the_class_kernels() -> None:
    """The intake's totals per unit-step spread over the class's kernels in proportion: the totals are
    the given ones, each kernel keeps its share (its own roofline), and a pin at the class default
    changes nothing (it made the answer 30% faster when the kernels were merged into one)."""
    base = class_profile("molecular_dynamics", "mixed", 1e6)
    p = with_overrides(base, flops_per_unit_step=3000, bytes_per_unit_step=600)
    assert len(p.kernels) == len(base.kernels) > 1
    assert (p.flops_per_unit_step, p.bytes_per_unit_step) == pytest.approx((3000, 600))
    for k, b in zip(p.kernels, base.kernels, strict=True):
        assert k.flops_per_unit == pytest.approx(b.flops_per_unit * 3000 / base.flops_per_unit_step)
        assert k.bytes_per_unit == pytest.approx(b.bytes_per_unit * 600 / base.bytes_per_unit_step)
    same = with_overrides(base, flops_per_unit_step=base.flops_per_unit_step,
                          bytes_per_unit_step=base.bytes_per_unit_step)
    for k, b in zip(same.kernels, base.kernels, strict=True):
        assert (k.flops_per_unit, k.bytes_per_unit) == pytest.approx((b.flops_per_unit, b.bytes_per_unit))


def test_a_pin_at_the_class_default_gives_the_class_answer() -> None:
    """`wkc sensitivity` pins the class default x 0.7 and x 1.3: its ends must straddle the answer."""
    from workload_compiler import compile_workload
    from workload_compiler.intake.load import load_workload

    path = Path(__file__).resolve().parents[2] / "examples" / "hpc-molecular-dynamics.yaml"
    base = compile_workload(path)
    assert base.hpc is not None
    intake = load_workload(path).model_dump(mode="json", by_alias=True, exclude_none=True)
    times = []
    for f in (0.7, 1.0, 1.3):
        intake["profile"] = {"bytes_per_unit_step": base.hpc.bytes_per_unit_step * f}
        spec = compile_workload(intake)
        assert spec.hpc is not None
        times.append(spec.hpc.time_per_step_s)
    assert times[1] == pytest.approx(base.hpc.time_per_step_s)
    assert times[0] < times[1] < times[2]


@settings(max_examples=20, deadline=None)
@given(cls=st.sampled_from(SOLVER_CLASSES), units=st.floats(1e3, 1e10))
def test_every_class_has_positive_costs_and_sources(cls: str, units: float) -> None:
    precision = {"molecular_dynamics": "mixed", "cfd_lbm": "fp32"}.get(cls, "fp64")
    p = class_profile(cls, precision, units)
    assert p.bytes_per_unit_step > 0 and p.flops_per_unit_step > 0 and p.memory_per_unit_bytes > 0
    for key in ("flops_per_unit_step", "bytes_per_unit_step", "memory_per_unit_bytes", "communication",
                "checkpoint_bytes_per_unit"):
        assert p.sources[key]
