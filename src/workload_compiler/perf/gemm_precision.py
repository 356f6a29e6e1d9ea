"""The peak and element size of a training run's GEMMs at its precision (BF16, FP8, MXFP8, NVFP4)."""

from __future__ import annotations

from functools import cache
from statistics import median

from ..catalog.kernel_ceilings import ceiling_table, fraction
from ..errors import InputError
from .layout import PEAK_CLASS, Hardware, TrainingSetup


def fp4_share(hw: Hardware, setup: TrainingSetup) -> float:
    """NVFP4 GEMMs reach a smaller share of their peak than FP8 ones on the same GPU: the ratio of the
    measured kernel ceilings (catalog/data/kernel_ceilings.yaml, e.g. GB200 0.381 / 0.500). No
    published NVFP4 training run is in the calibration set, so the fitted efficiency of FP8 and
    BF16 GEMMs (1.0 here) is carried to FP4 by that measured ratio rather than assumed equal.
    Measured on the serving kernels; applying the ceilings themselves to BF16 and FP8 training GEMMs
    made the fit worse (in sample 9.6% vs 7.6%): only ratios are used, this one and the gap between
    GPUs (`gemm_speed`)."""
    if PEAK_CLASS.get(setup.precision) != "fp4":
        return 1.0
    fp4, _ = fraction(hw.accelerator_id, "gemm_compute", "fp4")
    fp8, _ = fraction(hw.accelerator_id, "gemm_compute", "fp8")
    return fp4 / fp8


@cache
def relative_ceiling(accelerator_id: str, part: str, precision: str) -> float:
    """The GPU's measured kernel ceiling over the median of the measured GPUs' (catalog/data/
    kernel_ceilings.yaml, AIConfigurator's kernel micro-benchmarks); 1.0 for a GPU not measured."""
    own, measured = fraction(accelerator_id, part, precision)
    if not measured:
        return 1.0
    table, _ = ceiling_table()
    return own / median(float(e[part][precision]) for e in table.values() if precision in e.get(part, {}))


def gemm_speed(hw: Hardware, setup: TrainingSetup) -> float:
    """The GPU's large-GEMM ceiling at the training precision over the median GPU's: the fitted
    gemm_e_max is one number for every GPU; the measured gap between GPUs rides on it (BF16: A100
    0.839, H100 0.779, GB300 0.737, B200 0.654, GB200 0.610 of the datasheet peak; FP8: H100 0.616,
    GB300 0.575, GB200 0.500). NVFP4 takes the FP8 gap (its own ratio is `fp4_share`).
    Refit with it (2026-12-04), beside the attention gap and the dropless host floor: in sample
    6.73 -> 6.27%, leave-one-source-family-out 6.52% (7.01% before that refit), the published GB300 /
    B300 / 26.02 Blackwell runs held out of every fit (tools/holdout_blackwell.py) 14.2 -> 13.2%.
    Tried alone on 2026-12-02 it had moved leave-one-family-out 7.62 -> 7.76%. A GPU not measured
    takes the median's (1.0), listed as an assumption (spine/training_setup.py)."""
    return relative_ceiling(hw.accelerator_id, "gemm_compute", gemm_ceiling_precision(setup))


def gemm_ceiling_precision(setup: TrainingSetup) -> str:
    """The kernel-ceiling precision whose gap between GPUs the training GEMMs take: their peak class,
    FP8's for NVFP4 (whose own FP4/FP8 ratio is `fp4_share`)."""
    cls = PEAK_CLASS.get(setup.precision, "bf16")
    return "fp8" if cls == "fp4" else cls


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
