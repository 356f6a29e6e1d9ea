"""Fit the inference model's few constants on the TensorRT-LLM tables; report honest errors.

    python tools/fit_inference.py [--calibration DIR] [--quick]

Fits HBM_EFFICIENCY, GEMM_EFFICIENCY, ROOFLINE_EXPONENT and GEMM_HALF_DIM (inference/fitted.py)
on every scored `entries` row of calibration/inference_public.yaml and inference_added.yaml by
Nelder-Mead on the mean |log(predicted / published)| of output tokens/s per GPU, then prints:
  * the block to paste into inference/fitted.py,
  * MAPE and maximum error per group (Hopper FP8 dense / MoE, Blackwell NVFP4 dense / MoE),
  * held-out errors, refitting without the held-out rows and testing on them: leave-one-GPU-out,
    leave-one-precision-out and leave-one-model-out, the honest generalization figures;
  * the per-kind table of leave-one-GPU-out signed errors (n, MAPE, 10th / 90th percentile, the
    factor of the symmetric band: exp of the 80th percentile of |ln(1 + error)|), kind
    = "<generation> <dense|moe> <bf16|fp8|fp4>": the input of the uncertainty bands.
No file is written. Needs only NumPy (the simplex search is below).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from workload_compiler.inference import fitted
from workload_compiler.spine.uncertainty import error_factor
from workload_compiler.validation.inference_records import (
    ThroughputCase,
    load_inference,
    predict_throughput,
    throughput_cases,
)

NAMES = ("HBM_EFFICIENCY", "GEMM_EFFICIENCY", "ROOFLINE_EXPONENT", "GEMM_HALF_DIM")
# The efficiencies multiply measured kernel ceilings (inference/kernels.py), so they may pass 1 a
# little: the ceilings are medians over many shapes, the served shapes are among the larger ones.
BOUNDS = ((0.3, 1.5), (0.2, 1.5), (1.0, 8.0), (0.0, 8192.0))
FloatVec = npt.NDArray[np.float64]
Key = Callable[[ThroughputCase], str]


def _set(x: FloatVec) -> None:
    for name, v in zip(NAMES, x, strict=True):
        setattr(fitted, name, float(v))


def errors(cases: list[ThroughputCase], x: FloatVec) -> FloatVec:
    """Signed relative errors predicted / published - 1 with the constants x."""
    _set(x)
    return np.array([predict_throughput(c)[0] / c.published - 1.0 for c in cases])


def objective(cases: list[ThroughputCase], x: FloatVec) -> float:
    if any(not lo <= v <= hi for v, (lo, hi) in zip(x, BOUNDS, strict=True)):
        return 1e9
    return float(np.mean(np.abs(np.log1p(errors(cases, x)))))


def nelder_mead(f: Callable[[FloatVec], float], x0: FloatVec, iters: int, scale: float = 0.15) -> FloatVec:
    """Plain Nelder-Mead (reflection 1, expansion 2, contraction 0.5, shrink 0.5)."""
    n = len(x0)
    step = scale * np.maximum(np.abs(x0), 1e-3)
    simplex = [x0.astype(float)] + [x0 + step * np.eye(n)[i] for i in range(n)]
    values = [f(p) for p in simplex]
    for _ in range(iters):
        order = np.argsort(values)
        simplex, values = [simplex[i] for i in order], [values[i] for i in order]
        if abs(values[-1] - values[0]) < 1e-7:
            break
        centroid = np.mean(simplex[:-1], axis=0)
        xr = centroid + (centroid - simplex[-1])
        fr = f(xr)
        if fr < values[0]:
            xe = centroid + 2.0 * (centroid - simplex[-1])
            fe = f(xe)
            simplex[-1], values[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = xr, fr
        else:
            xc = centroid + 0.5 * (simplex[-1] - centroid)
            fc = f(xc)
            if fc < values[-1]:
                simplex[-1], values[-1] = xc, fc
            else:
                simplex = [simplex[0] + 0.5 * (p - simplex[0]) for p in simplex]
                values = [f(p) for p in simplex]
    best: FloatVec = simplex[int(np.argmin(values))]
    return best


def fit(cases: list[ThroughputCase], x0: FloatVec, iters: int) -> FloatVec:
    return nelder_mead(lambda x: objective(cases, x), x0, iters)


def summary(label: str, errs: FloatVec) -> str:
    if len(errs) == 0:
        return f"{label}: n=0"
    mape, worst = 100 * np.mean(np.abs(errs)), 100 * np.max(np.abs(errs))
    return f"{label}: n={len(errs)} MAPE {mape:.1f}%  max {worst:.1f}%"


def by_groups(cases: list[ThroughputCase], e: FloatVec) -> str:
    groups = sorted({c.group for c in cases})
    parts = [summary("all", e)] + [summary(g, e[[c.group == g for c in cases]]) for g in groups]
    fp4 = np.array(["fp4" in c.kind for c in cases])
    if fp4.any() and not fp4.all():
        parts.append(summary("Blackwell FP4", e[fp4]))
    return "\n  ".join(parts)


def by_gpu(c: ThroughputCase) -> str:
    return c.device.hw.accelerator_id


def by_precision(c: ThroughputCase) -> str:
    return c.device.gemm_precision


def by_model(c: ThroughputCase) -> str:
    return c.model.arch.name


def held_out(cases: list[ThroughputCase], x: FloatVec, key: Key, iters: int) -> tuple[FloatVec, list[str]]:
    """Signed errors of every row predicted by constants fitted without the rows sharing its key,
    in the order of `cases`, and one line per fold."""
    out = np.zeros(len(cases))
    lines = []
    for held in sorted({key(c) for c in cases}):
        test_idx = [i for i, c in enumerate(cases) if key(c) == held]
        train = [c for c in cases if key(c) != held]
        xh = fit(train, x, iters)
        e = errors([cases[i] for i in test_idx], xh)
        out[test_idx] = e
        lines.append(f"  held out {held}: " + summary("test", e) + "  constants "
                     + " ".join(f"{v:.3g}" for v in xh))
    return out, lines


def kind_table(cases: list[ThroughputCase], e: FloatVec) -> str:
    """n, MAPE, the 10th / 90th percentile of the signed error and the factor of the symmetric band
    (spine/uncertainty.py error_factor: factor_p80 in catalog/data/uncertainty.yaml), per kind of case."""
    rows = ["  kind                      n   MAPE %   p10 %   p90 %  factor_p80"]
    for kind in sorted({c.kind for c in cases}):
        k = e[[c.kind == kind for c in cases]]
        rows.append(f"  {kind:<24} {len(k):3d}  {100 * np.mean(np.abs(k)):6.1f}  "
                    f"{100 * np.percentile(k, 10):6.1f}  {100 * np.percentile(k, 90):6.1f}  "
                    f"{error_factor(list(k)):11.4f}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parents[2] / "shared" / "calibration"
    ap.add_argument("--calibration", type=Path, default=default)
    ap.add_argument("--quick", action="store_true", help="fewer iterations, no hold-out refits")
    args = ap.parse_args(argv)
    cases, _ = throughput_cases(load_inference(args.calibration))
    x0 = np.array([getattr(fitted, n) for n in NAMES], dtype=np.float64)
    iters = 150 if args.quick else 600
    x = fit(cases, x0, iters)
    e = errors(cases, x)
    print("# --- fitted (tools/fit_inference.py) ---")
    for name, v in zip(NAMES, x, strict=True):
        print(f"{name} = {v:.4g}")
    print("in sample:\n  " + by_groups(cases, e))
    if args.quick:
        return 0
    logo = None
    for label, key in (("GPU", by_gpu), ("precision", by_precision), ("model", by_model)):
        he, lines = held_out(cases, x, key, iters // 2)
        print(f"leave-one-{label}-out:\n" + "\n".join(lines) + "\n  " + by_groups(cases, he))
        if label == "GPU":
            logo = he
    assert logo is not None
    print("per kind, leave-one-GPU-out signed error (predicted / published - 1):\n" + kind_table(cases, logo))
    print("per kind, in sample:\n" + kind_table(cases, e))
    _set(x)
    return 0


if __name__ == "__main__":
    sys.exit(main())
