"""How sure we are: a band on every headline number, from our own held-out error on published runs
of the same kind (accelerator generation x dense/MoE x precision class).

The table (catalog/data/uncertainty.yaml) is written by the fitting tools: for each kind, the
signed errors e = predicted / published - 1 of the runs each predicted by constants fitted
without their source family (tools/fit_training.py) or their GPU (tools/fit_inference.py). A
prediction x of a time then lies, as the held-out runs did, in [x / (1 + e_high), x / (1 + e_low)];
a rate in [x (1 + e_low), x (1 + e_high)] of the published value's direction, i.e. published =
x / (1 + e). A section marked `band: symmetric` (the throughput models) puts the published value
within a factor f of the prediction either way: e_low = 1/f - 1, e_high = f - 1, with ln f the 80th
percentile of |ln(1 + e)| (from 10 runs up, else the largest seen; `error_factor`). The sign of our
error on a kind does not carry to the next release or GPU (the calibration set's Blackwell MoE
runs, Megatron-Bridge 25.09-25.11, came out up to 23% fast; its 26.02 and GB300 runs up to 27%
slow): a band that follows the sign seen covered 19 of 33 such held-out runs, the symmetric one 28
(tools/holdout_blackwell.py). A factor, not +-s, so that an error of 100% or more still bounds a
time above (x / (1 - s) has no meaning there). Other sections keep the signed 10th and 90th
percentiles (the smallest and largest error below 10 runs). The basis says which. A kind never validated gets no
band but a sentence saying so: we do not guess how wrong we are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from ..catalog.loader import package_yaml
from ..hpc.classes import SIZED_FOR_TARGET, gpu_family
from ..perf.objective import SIZED_FOR_DEADLINE
from .result import Band, SystemSpec

TABLE = "uncertainty.yaml"
MIN_RUNS = 3      # fewer held-out runs of a kind than this give no band (one run is not a spread)
MANY_RUNS = 10    # from this many runs up a band is a percentile; below, the extreme errors seen


def sized_for_deadline(spec: SystemSpec) -> bool:
    """The training GPU count was sized for the deadline (its provenance is that rule's)."""
    chosen = spec.provenance.get("compute.gpus")
    return chosen is not None and chosen.formula == SIZED_FOR_DEADLINE


def error_factor(errors: Sequence[float]) -> float:
    """f of a symmetric band (the published value within a factor f of the prediction, either way)
    over held-out signed errors e = predicted / published - 1: exp of the 80th percentile of
    |ln(1 + e)| from MANY_RUNS up (the band a new run of the kind falls in 4 times in 5), else of the
    largest |ln(1 + e)| seen."""
    a = sorted(abs(math.log1p(float(e))) for e in errors)
    if not a:
        raise ValueError("no held-out errors")
    if len(a) < MANY_RUNS:
        return math.exp(a[-1])
    pos = 0.8 * (len(a) - 1)              # linear interpolation, as numpy.percentile's default
    i = int(pos)
    return math.exp(a[i] + (a[min(i + 1, len(a) - 1)] - a[i]) * (pos - i))


def generation(architecture: str) -> str:
    """'Blackwell Ultra' -> 'Blackwell', 'Hopper (+ Grace CPU, NVLink-C2C)' -> 'Hopper', 'CDNA3' -> 'CDNA3'."""
    m = re.match(r"[A-Za-z]+\d*", architecture.strip().strip("'\""))
    return m.group(0) if m else architecture


def precision_class(precision: str) -> str:
    p = precision.lower()
    if p in ("bf16", "fp16"):
        return "bf16"
    return "fp4" if "fp4" in p else "fp8"


def case_kind(architecture: str, moe: bool, precision: str, hybrid: bool = False, lora: bool = False,
              sparse: bool = False) -> str:
    """The kind of case a band is looked up by: 'Hopper dense fp8', 'Blackwell moe bf16'; a hybrid
    Mamba-2 model is a kind of its own ('Hopper hybrid fp8': no published run of it was validated),
    and so are a LoRA fine-tune ('Hopper dense fp8 lora') and a sparse-attention model ('Blackwell
    moe fp8 sparse': DeepSeek-V3.2)."""
    body = "hybrid" if hybrid else "moe" if moe else "dense"
    return (f"{generation(architecture)} {body} {precision_class(precision)}" + (" lora" if lora else "")
            + (" sparse" if sparse else ""))


def _section(name: str) -> dict[str, Any]:
    table = package_yaml(TABLE)
    section: dict[str, Any] = table.get(name) or {}
    return section


def error_range(section: str, kind: str, accelerator: str | None = None) -> tuple[float, float, str] | None:
    """(e_low, e_high, basis) of a kind in a table section, or None when no run of the kind was validated.
    `accelerator`: the case's catalog id; the basis says so when no run on that GPU itself was among the
    section's (`accelerators`: a GB300 case banded by its generation's B200 and GB200 runs)."""
    sec = _section(section)
    entry = (sec.get("kinds") or {}).get(kind)
    if not entry or int(entry["n"]) < MIN_RUNS:
        return None
    many = int(entry["n"]) >= MANY_RUNS
    if sec.get("band") == "symmetric":
        factor = float(entry["factor_p80"])
        lo, hi = 1.0 / factor - 1.0, factor - 1.0
        how = f"within a factor {factor:.2f} either way ({'80th percentile' if many else 'the largest error'})"
    else:
        lo, hi = float(entry["low"]), float(entry["high"])
        how = f"{'10th-90th percentile' if many else 'smallest to largest error'} {lo * 100:+.0f}% to {hi * 100:+.0f}%"
    basis = (f"MAPE {float(entry['mape_pct']):.1f}% over {entry['n']} published {kind} runs, {how}; "
             f"{sec.get('method', 'held-out error')}")
    validated = sec.get("accelerators")
    if accelerator and validated and accelerator not in validated:
        basis += f"; no run on {accelerator} itself was validated (runs on {', '.join(validated)})"
    families = sec.get("gpu_families")
    if accelerator and families and gpu_family(accelerator) not in families:
        basis += (f"; no {gpu_family(accelerator)} run was validated (runs on {', '.join(families)}, "
                  "each predicted without its own GPU's runs)")
    return lo, hi, basis


def overall_mape(section: str, kind: str | None = None) -> tuple[float, int, str]:
    """(held-out MAPE as a fraction, runs, method) over every run of a table section, or over the
    runs of `kind` when at least MIN_RUNS of them were held out."""
    sec = _section(section)
    entry = sec["overall"]
    own = (sec.get("kinds") or {}).get(kind) if kind is not None else None
    if own and int(own["n"]) >= MIN_RUNS:
        entry = own
    return float(entry["mape_pct"]) / 100.0, int(entry["n"]), str(sec.get("method", "held-out error"))


def not_validated(section: str, kind: str) -> Band:
    sec = _section(section)
    what = sec.get("quantity", section)
    n = int(((sec.get("kinds") or {}).get(kind) or {}).get("n", 0))
    if n:
        return Band(basis=f"only {n} published {kind} run(s) held out for {what}: too few for a band")
    return Band(basis=f"no published {kind} run was validated for {what}: no band, the number is unchecked")


def _published_range(value: float, section: str, kind: str, quantity: str, accelerator: str | None = None) -> Band:
    """Where the published value lay for held-out runs, for a predicted `value` of a time or a rate.

    A section's errors are defined on a time (e = T_pred / T_pub - 1, so T_pub = T_pred / (1 + e)
    and R_pub = R_pred (1 + e)) or on a rate (e = R_pred / R_pub - 1, the reverse)."""
    r = error_range(section, kind, accelerator)
    if r is None or not math.isfinite(value):
        return not_validated(section, kind)
    lo, hi, basis = r
    on_time = _section(section).get("defined_on", "time") == "time"
    if (quantity == "time") == on_time:
        return Band(low=value / (1.0 + hi), high=value / (1.0 + lo), basis=basis)
    return Band(low=value * (1.0 + lo), high=value * (1.0 + hi), basis=basis)


def time_band(value: float, section: str, kind: str, accelerator: str | None = None) -> Band:
    """A duration (step time, time to train)."""
    return _published_range(value, section, kind, "time", accelerator)


def rate_band(value: float, section: str, kind: str, accelerator: str | None = None) -> Band:
    """A rate (tokens/s)."""
    return _published_range(value, section, kind, "rate", accelerator)


def count_band(value: float, section: str, kind: str, step: int, accelerator: str | None = None) -> Band:
    """A GPU count sized for a rate: it scales as 1 / rate, rounded up to whole `step`s (nodes) when
    the count itself is whole nodes, else to whole GPUs (an HPC run on 2 GPUs of a node)."""
    b = _published_range(1.0, section, kind, "rate", accelerator)
    if b.low is None or b.high is None:
        return b
    step = step if value % step == 0 else 1
    return Band(low=step * math.ceil(value / b.high / step), high=step * math.ceil(value / b.low / step),
                basis=b.basis)


def _get(layer: Any, key: str) -> Any:
    if layer is None:
        return None
    return layer.get(key) if isinstance(layer, dict) else getattr(layer, key, None)


def _moe(objective: Any) -> bool:
    params, active = _get(objective, "params"), _get(objective, "active_params")
    return bool(params and active and active < 0.99 * params)


def spec_uncertainty(spec: SystemSpec, gpu: str, architecture: str) -> dict[str, Band]:
    """The bands of a compiled spec's headline numbers, by the kind of its case. `gpu` is the catalog
    id of its accelerator, `architecture` the catalog's text for it (its generation is the first word)."""
    out: dict[str, Band] = {}
    moe, hybrid = _moe(spec.objective), "model.hybrid_pattern" in spec.provenance
    sparse = "model.sparse_attention_topk" in spec.provenance
    if spec.kind == "training" and spec.compute is not None and _get(spec.compute, "step_time_s") is not None:
        lora = "training.lora.rank" in spec.provenance
        kind = case_kind(architecture, moe, str(_get(spec.objective, "precision") or "bf16"), hybrid, lora, sparse)
        step = "training_step_time"
        for key, layer, band in (("step_time_s", spec.compute, time_band), ("tokens_per_s", spec.compute, rate_band),
                                 ("tokens_per_s_per_gpu", spec.compute, rate_band),
                                 ("time_to_train_s", spec.objective, time_band),
                                 ("goodput_adjusted_time_to_train_s", spec.objective, time_band)):
            value = _get(layer, key)
            if isinstance(value, (int, float)):
                where = "compute" if layer is spec.compute else "objective"
                out[f"{where}.{key}"] = band(float(value), step, kind, gpu)
        memory = _get(spec.compute, "memory_per_gpu_bytes")
        if isinstance(memory, (int, float)):
            out["compute.memory_per_gpu_bytes"] = time_band(float(memory), "training_memory", kind, gpu)
        node = int(_get(spec.compute, "gpus_per_node") or 1)
        needed = _get(spec.objective, "gpus_for_target")
        if isinstance(needed, (int, float)) and needed > 0:
            out["objective.gpus_for_target"] = count_band(float(needed), step, kind, node, gpu)
        if sized_for_deadline(spec):
            out["compute.gpus"] = count_band(float(_get(spec.compute, "gpus")), step, kind, node, gpu)
    if spec.kind == "inference" and spec.inference is not None:
        weights = str(_get(spec.inference, "weights") or _get(spec.compute, "gemm_precision") or "bf16")
        kind = case_kind(architecture, moe, weights, hybrid, sparse=sparse)
        for key in ("output_tokens_per_s_per_gpu", "output_tokens_per_s"):
            value = _get(spec.inference, key)
            if isinstance(value, (int, float)):
                out[f"inference.{key}"] = rate_band(float(value), "inference_throughput", kind, gpu)
        for key in ("ttft_s", "tpot_s"):
            value = _get(spec.inference, key)
            if isinstance(value, (int, float)):
                out[f"inference.{key}"] = Band(basis=f"no published {key.split('_')[0].upper()} of any kind was "
                                                     "validated (the calibration rows are offline throughput): "
                                                     "no band, the number is unchecked")
    if spec.kind == "hpc" and spec.hpc is not None:
        out |= _hpc_bands(spec, gpu)
    return out


def _hpc_bands(spec: SystemSpec, gpu: str) -> dict[str, Band]:
    """An HPC run's time per step and time to solution (and its GPU count when sized for the target),
    by its solver class: the class's runs on other GPUs, each predicted without its own GPU's runs."""
    kind, section = str(_get(spec.hpc, "solver_class")), "hpc_time_per_step"
    out = {f"hpc.{key}": time_band(float(value), section, kind, gpu)
           for key in ("time_per_step_s", "time_to_solution_s")
           if isinstance(value := _get(spec.hpc, key), (int, float))}
    chosen = spec.provenance.get("compute.gpus")
    if chosen is not None and chosen.formula == SIZED_FOR_TARGET and spec.compute is not None:
        node = int(_get(spec.compute, "gpus_per_node") or 1)
        out["compute.gpus"] = count_band(float(_get(spec.compute, "gpus")), section, kind, node, gpu)
    return out


__all__ = [
    "Band",
    "case_kind",
    "count_band",
    "error_factor",
    "error_range",
    "generation",
    "not_validated",
    "precision_class",
    "rate_band",
    "sized_for_deadline",
    "spec_uncertainty",
    "time_band",
]
