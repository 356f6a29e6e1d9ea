"""MIG and fractional GPUs for small serving models (seed 001: "MIG and inference serving").

For each MIG profile of the sized accelerator (catalog/data/mig_profiles.yaml, from NVIDIA's MIG
user guide and mig-parted): the slice's memory, whether one replica fits in it, the latency and
throughput it would reach, and the GPUs the service then needs.

    slice memory         memory_slices / 8 x HBM x the engine's memory fraction
    replica needs        weights + KV of the sized batch x (input + output tokens) + activations
                         + runtime reserve (the sized per-GPU breakdown, one replica on one GPU)
    slice throughput     whole-GPU tokens/s x min(compute_slices / 7, memory_slices / 8)
    slice TTFT / TPOT    prefill / (compute_slices / 7); decode TPOT / (memory_slices / 8)
                         (ASSUMPTION: prefill compute-bound, decode bandwidth-bound, both linear in the slice)
    slices needed        ceil(output tokens/s demanded / slice throughput) + the sizing's spare replicas
    fractional GPUs      slices x max(compute_slices / 7, memory_slices / 8): what per-slice billing charges
    GPUs                 ceil(slices / instances per GPU), at least two when there is a spare (a spare
                         slice on the same GPU does not survive its failure); cost = GPUs x GPU-hour

A replica that needs more than one GPU does not fit a slice (MIG instances do not span GPUs).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field

from ..catalog.loader import Catalog, package_yaml
from ..quantity import quantity
from ..spine.doc import Doc
from ..units import counted, format_bytes_decimal
from .view import get_path, number

COMPUTE_SLICES, MEMORY_SLICES = 7, 8


class MigProfile(Doc):
    profile: str
    compute_slices: int = quantity("count", "compute slices (of 7)")
    memory_slices: int = quantity("count", "memory slices (of 8)")
    max_instances: int = quantity("count", "instances of this profile per GPU")
    memory_bytes: float = quantity("B", "usable memory of the slice (engine memory fraction applied)")
    fits: bool
    why: str
    replicas_per_gpu: int = quantity("count", "model replicas one GPU holds in this profile")
    throughput_tokens_per_s: float | None = quantity("tokens/s", "one slice's served output tokens/s", default=None)
    ttft_s: float | None = quantity("s", "prefill time on the slice", default=None)
    tpot_s: float | None = quantity("s", "time per output token on the slice", default=None)
    gpus_needed: int | None = quantity("count", "GPUs the load needs in this profile", default=None)
    cost_usd_per_hour: float | None = quantity("USD/h", "GPUs x GPU-hour", default=None)
    slices_needed: int | None = quantity("count", "slices the load needs", default=None)
    fractional_gpus: float | None = quantity("count", "slices x the share of a GPU one slice holds", default=None)
    cost_usd_per_hour_fractional: float | None = quantity("USD/h", "billed per slice: fractional GPUs x GPU-hour",
                                                          default=None)


class MigSection(Doc):
    accelerator: str
    supported: bool
    source: str
    replica_memory_bytes: float | None = quantity("B", "what one replica needs", default=None)
    gpus_whole: int | None = quantity("count", "GPUs the load needs without MIG", default=None)
    cost_usd_per_hour_whole: float | None = quantity("USD/h", "the sized fleet of whole GPUs", default=None)
    profiles: list[MigProfile] = Field(default_factory=list)
    best_profile: str | None = None
    gpus_with_mig: int | None = quantity("count", "GPUs the load needs with the best profile", default=None)
    cost_usd_per_hour_with_mig: float | None = quantity("USD/h", "the fleet partitioned at the best profile",
                                                        default=None)
    saving_fraction: float | None = quantity("fraction", "1 - MIG cost / whole-GPU cost", default=None)
    verdict: str


def _profile(name: str, shape: dict[str, Any], hbm: float, fraction: float, need: float | None,
             per_gpu_replica_tput: float | None, doc: dict[str, Any], demand: float | None,
             spares: int, gpu_hour: float | None, replica_gpus: int) -> MigProfile:
    c, m, n = int(shape["compute_slices"]), int(shape["memory_slices"]), int(shape["max_instances"])
    mem = m / MEMORY_SLICES * hbm * fraction
    c_share, m_share = c / COMPUTE_SLICES, m / MEMORY_SLICES
    if replica_gpus > 1:
        return MigProfile(profile=name, compute_slices=c, memory_slices=m, max_instances=n, memory_bytes=mem,
                          fits=False, why=f"a replica spans {replica_gpus} GPUs; MIG slices do not span GPUs",
                          replicas_per_gpu=0)
    fits_mem = need is not None and need <= mem
    ttft = (number(doc, "inference.ttft_prefill_s") or 0.0) / c_share
    tpot = (number(doc, "inference.tpot_s") or 0.0) / m_share
    ttft_t, tpot_t = number(doc, "objective.ttft_target_s"), number(doc, "objective.tpot_target_s")
    slo = (ttft_t is None or ttft <= ttft_t) and (tpot_t is None or tpot <= tpot_t)
    tput = None if per_gpu_replica_tput is None else per_gpu_replica_tput * min(c_share, m_share)
    gpus = cost = slices = fractional = cost_fractional = None
    if fits_mem and slo and tput and demand:
        slices = math.ceil(demand / tput) + spares
        # a spare slice on the same GPU does not survive that GPU's failure: N+1 keeps two GPUs
        gpus = max(math.ceil(slices / n), 2 if spares else 1)
        cost = gpus * gpu_hour if gpu_hour else None
        fractional = slices * max(c_share, m_share)
        cost_fractional = fractional * gpu_hour if gpu_hour else None
    if not fits_mem:
        why = f"one replica needs {format_bytes_decimal(need or 0.0)}, the slice holds {format_bytes_decimal(mem)}"
    elif not slo:
        why = (f"fits in memory but misses the latency target on the slice (TTFT {ttft:.3g} s, TPOT "
               f"{tpot * 1e3:.3g} ms)")
    else:
        why = f"fits: {counted(n, 'replica')} per GPU, TTFT {ttft:.3g} s, TPOT {tpot * 1e3:.3g} ms"
    ok = fits_mem and slo
    return MigProfile(profile=name, compute_slices=c, memory_slices=m, max_instances=n, memory_bytes=mem, fits=ok,
                      why=why, replicas_per_gpu=n if ok else 0, throughput_tokens_per_s=tput if ok else None,
                      ttft_s=ttft, tpot_s=tpot, gpus_needed=gpus, cost_usd_per_hour=cost, slices_needed=slices,
                      fractional_gpus=fractional, cost_usd_per_hour_fractional=cost_fractional)


def _replica_memory(doc: dict[str, Any]) -> float | None:
    breakdown = get_path(doc, "compute.memory_breakdown_bytes") or {}
    weights = number(doc, "objective.weight_bytes")
    kv = number(doc, "inference.kv_bytes_per_token")
    state = number(doc, "inference.ssm_state_bytes_per_sequence") or 0.0    # a hybrid's Mamba-2 state
    batch = number(doc, "inference.batch_size") or 1.0
    tokens = (number(doc, "objective.input_tokens") or 0.0) + (number(doc, "objective.output_tokens") or 0.0)
    if weights is None or kv is None:
        return None
    return weights + (kv * tokens + state) * batch + float(breakdown.get("activations", 0.0)) + \
        float(breakdown.get("runtime_reserve", 0.0))


def mig_section(doc: dict[str, Any], catalog: Catalog) -> MigSection | None:
    if doc.get("kind") != "inference" or not get_path(doc, "compute.accelerator"):
        return None
    data = package_yaml("mig_profiles.yaml")
    acc = catalog.accelerator(str(get_path(doc, "compute.accelerator")))
    names = data["profiles_by_accelerator"].get(acc.id)
    gpus = int(number(doc, "compute.gpus") or 0)
    gpu_hour = number(doc, "inference.cost_usd_per_gpu_hour")
    whole_cost = gpus * gpu_hour if gpu_hour else None
    if names is None:
        return MigSection(accelerator=acc.id, supported=False, source=str(data["source"]), gpus_whole=gpus,
                          cost_usd_per_hour_whole=whole_cost,
                          verdict=f"{acc.id} has no MIG profiles in the catalog: fractional GPUs are not available")
    need = _replica_memory(doc)
    replica_gpus = int(number(doc, "inference.gpus_per_replica") or 1)
    tput = number(doc, "inference.output_tokens_per_s_per_gpu")
    demand = (number(doc, "objective.request_rate_per_s") or 0.0) * (number(doc, "objective.output_tokens") or 0.0)
    spares = int(number(doc, "inference.spare_replicas") or 0)
    fraction = number(doc, "compute.memory_fraction") or 1.0
    profiles = [_profile(name, data["shapes"][shape], acc.memory_bytes, fraction, need, tput, doc, demand or None,
                         spares, gpu_hour, replica_gpus) for shape, name in names.items()]
    priced = [p for p in profiles if p.fits and p.gpus_needed is not None]
    best = min(priced, key=lambda p: (p.gpus_needed or 0, p.fractional_gpus or 0.0)) if priced else None
    saving = None
    if best is not None and best.gpus_needed and gpus:
        saving = 1.0 - best.gpus_needed / gpus
    if replica_gpus > 1:
        verdict = f"the model needs {replica_gpus} GPUs per replica: no MIG slice holds it"
    elif best is None:
        verdict = "no MIG profile holds a replica within the latency targets: whole GPUs"
    else:
        assert best.gpus_needed is not None and best.slices_needed is not None   # priced: both are set
        fewer = f" ({100 * saving:.0f}% fewer)" if saving else " (no fewer)"
        verdict = (f"{best.profile}: {counted(best.replicas_per_gpu, 'replica')} per GPU; the service needs "
                   f"{counted(best.gpus_needed, 'GPU')} partitioned instead of {gpus:,} whole{fewer}"
                   f"; billed per slice, {counted(best.slices_needed, 'slice')} = {best.fractional_gpus:.2f} GPUs")
    return MigSection(
        accelerator=acc.id, supported=True, source=str(data["source"]), replica_memory_bytes=need, gpus_whole=gpus,
        cost_usd_per_hour_whole=whole_cost, profiles=profiles, best_profile=best.profile if best else None,
        gpus_with_mig=best.gpus_needed if best else None,
        cost_usd_per_hour_with_mig=best.cost_usd_per_hour if best else None, saving_fraction=saving, verdict=verdict)


__all__ = ["MigProfile", "MigSection", "mig_section"]
