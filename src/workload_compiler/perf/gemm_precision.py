"""The peak and element size of a training run's GEMMs at its precision (BF16, FP8, MXFP8, NVFP4)."""

from __future__ import annotations

from ..catalog.kernel_ceilings import fraction
from ..errors import InputError
from .layout import PEAK_CLASS, Hardware, TrainingSetup


def fp4_share(hw: Hardware, setup: TrainingSetup) -> float:
    """NVFP4 GEMMs reach a smaller share of their peak than FP8 ones on the same GPU: the ratio of the
    measured kernel ceilings (catalog/data/kernel_ceilings.yaml, e.g. GB200 0.381 / 0.500). No
    published NVFP4 training run is in the calibration set, so the fitted efficiency of FP8 and
    BF16 GEMMs (1.0 here) is carried to FP4 by that measured ratio rather than assumed equal.
    Measured on the serving kernels; applying the same ceilings to BF16 and FP8 training GEMMs made
    the fit worse (in sample 9.6% vs 7.6%), so only the FP4/FP8 ratio is used. Taking only the gap
    between GPUs (each GPU's ceiling over the median GPU's at that precision, one gemm_e_max refit
    over it; 2026-12-02) moved in sample 7.08 -> 7.04% but leave-one-family-out 7.62 -> 7.76% and
    Blackwell dense FP8 10.2 -> 10.9%, so it is not used either."""
    if PEAK_CLASS.get(setup.precision) != "fp4":
        return 1.0
    fp4, _ = fraction(hw.accelerator_id, "gemm_compute", "fp4")
    fp8, _ = fraction(hw.accelerator_id, "gemm_compute", "fp8")
    return fp4 / fp8


def gemm_precision(setup: TrainingSetup, hw: Hardware) -> tuple[float, float]:
    """(dense peak FLOP/s, bytes per element) of the GEMMs at the training precision."""
    p = setup.precision
    cls = PEAK_CLASS.get(p)
    if cls is None:
        raise InputError("precision", p, f"one of {', '.join(PEAK_CLASS)}")
    if cls == "bf16":
        return hw.peak_flops_bf16, 2.0
    peak = hw.peak_flops_fp4 if cls == "fp4" else hw.peak_flops_fp8
    if peak is None:
        raise InputError("precision", p, f"{hw.accelerator_id} publishes no dense {p.upper()} peak "
                         f"(no {p.upper()} tensor cores in the catalog); use bf16")
    return peak, 0.5 if p == "nvfp4" else 1.0
