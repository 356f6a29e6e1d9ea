"""Roofline and communication of the HPC model against published per-GPU figures."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import CatalogGap, InputError
from workload_compiler.hpc.classes import class_profile
from workload_compiler.hpc.comm import decompose, halo_faces
from workload_compiler.hpc.device import hpc_device
from workload_compiler.hpc.fitted import FITTED
from workload_compiler.hpc.roofline import compute_rate, kernel_time, peak_flops
from workload_compiler.hpc.scaling import step_times

CAT = load_catalog()


def _mlups(acc: str, precision: str = "fp32") -> float:
    units = 256.0**3
    p = class_profile("cfd_lbm", precision, units)
    return units / float(step_times(p, hpc_device(CAT, acc), units, 1).total_s[0]) / 1e6


def test_lbm_on_h100_is_bandwidth_bound_near_published() -> None:
    """reference/hpc.md: FluidX3D on H100 SXM 17,602 MLUP/s (0.80 x 3350 GB/s / 153 B)."""
    assert _mlups("h100-sxm") == pytest.approx(17602, rel=0.10)
    b = step_times(class_profile("cfd_lbm", "fp32", 256.0**3), hpc_device(CAT, "h100-sxm"), 256.0**3, 1)
    assert b.bound() == "memory"


def test_fp16_storage_gains_less_where_the_ridge_is_near() -> None:
    """FP16S halves the bytes (153 -> 77 B) but adds FLOPs (363 -> 406): on A100 80GB the kernel
    nears the ridge and gains 1.80x, on V100 the full 2.0x (FluidX3D README, calibration
    lbm-fluidx3d-1xa100-sxm4-80gb 10228 -> 18448 MLUP/s, -1xv100-sxm2-32gb 4471 -> 8947)."""
    a100 = _mlups("a100-sxm-80gb", "fp16") / _mlups("a100-sxm-80gb", "fp32")
    v100 = _mlups("v100", "fp16") / _mlups("v100", "fp32")
    assert a100 == pytest.approx(18448 / 10228, rel=0.03)
    assert v100 == pytest.approx(8947 / 4471, rel=0.05)
    assert a100 < v100 < 153 / 77


def test_hpl_rate_is_power_capped_on_mi250x_and_not_on_a100() -> None:
    """Lockwood HPL per GPU (calibration hpl-per-accelerator-*): MI250X 34-36 TF of a 95.7 TF matrix
    peak (power binds), A100 11-15 TF of 19.5 TF (peak binds); H100 node 45.7 TF."""
    kernel = class_profile("dense_linear_algebra", "fp64", 1e5).kernels[0]
    mi = compute_rate(hpc_device(CAT, "mi250x"), kernel, "fp64")
    a100 = compute_rate(hpc_device(CAT, "a100-sxm-40gb"), kernel, "fp64")
    assert mi == pytest.approx(FITTED.gemm_fp64_flops_per_j * 560.0)
    assert 34e12 * 0.9 < mi < 36e12 * 1.1
    assert a100 == pytest.approx(FITTED.gemm_fraction * 19.5e12)
    assert compute_rate(hpc_device(CAT, "h100-sxm"), kernel, "fp64") == pytest.approx(45.7e12, rel=0.05)


def test_missing_fp64_is_a_catalog_gap_naming_it() -> None:
    """Gaudi 3's catalog entry has no FP64 figure: never extrapolate from another precision; the
    gap names the catalog field (the compile leaves compute not sized with it)."""
    with pytest.raises(CatalogGap, match="fp64") as err:
        peak_flops(hpc_device(CAT, "gaudi3"), "fp64", "vector")
    assert err.value.missing == ("accelerators.gaudi3.peak_flops.fp64",)
    assert isinstance(err.value, InputError)   # a caller outside the compile still gets exit 2


def test_mi355x_fp64_is_its_published_vector_rate() -> None:
    """OLCF Lux user guide: MI355X 78.6 TFLOPS FP64 vector (catalog supplement); no matrix rate found."""
    peak, basis = peak_flops(hpc_device(CAT, "mi355x"), "fp64", "gemm")
    assert peak == pytest.approx(78.6e12) and basis == "peak_flops.fp64"


def test_b300_uses_its_cut_fp64() -> None:
    """Blackwell Ultra cut FP64 to 1.2 TF (catalog): an FP64 GEMM runs at that, not at B200's 37 TF."""
    peak, basis = peak_flops(hpc_device(CAT, "b300"), "fp64", "gemm")
    assert peak == pytest.approx(1.2e12) and basis.startswith("peak_flops.fp64")


def test_decompose_is_balanced() -> None:
    assert decompose(8, 3) == (2, 2, 2)
    assert decompose(12, 3) == (3, 2, 2)
    assert decompose(64, 2) == (8, 8)


def test_halo_surface_per_gpu_shrinks_as_volume_per_gpu_does() -> None:
    """Surface/volume: a GPU's halo falls as (N/g)^(2/3) once every axis is split."""
    s8 = sum(halo_faces(1e9, 8, 3, 1.0, 8)[:2])
    s64 = sum(halo_faces(1e9, 64, 3, 1.0, 8)[:2])
    assert s64 / s8 == pytest.approx((1 / 8) ** (2 / 3), rel=1e-6)
    inside, off, _, _ = halo_faces(1e9, 64, 3, 1.0, 8)
    assert inside > 0 and off > 0   # a 2x2x2 node block keeps half its faces inside the node


def test_cufftmp_strong_scaling_is_all_to_all_bound() -> None:
    """cuFFTMp 2048^3 single precision on Selene A100: 78 ms on 8 GPUs, 4 ms on 2048 (19.5x)."""
    units = 2048.0**3
    p = class_profile("fft_spectral", "fp32", units)
    d = hpc_device(CAT, "a100-sxm-80gb")
    b = step_times(p, d, units, [8, 2048])
    assert b.total_s[0] == pytest.approx(0.078, rel=0.15)
    assert b.total_s[1] == pytest.approx(0.004, rel=0.15)
    assert b.bound(1) == "network"


@settings(max_examples=25, deadline=None)
@given(n=st.floats(1e3, 1e9), factor=st.floats(1.01, 100))
def test_kernel_time_grows_with_units(n: float, factor: float) -> None:
    p = class_profile("molecular_dynamics", "mixed", 1e6)
    d = hpc_device(CAT, "a100-sxm-80gb")
    small, large = kernel_time(p, d, n), kernel_time(p, d, n * factor)
    assert np.all(large.total_s > small.total_s) and np.all(small.total_s > 0)
