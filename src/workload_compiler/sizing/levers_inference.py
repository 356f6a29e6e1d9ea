"""Inference levers: quantized weights or KV cache, disaggregated serving, fewer replicas (and the
load they then serve at the SLO), the SLO the capped fleet meets at the full load, no spare
replica, larger replicas under a replica cap, a denser accelerator or system, liquid cooling, more
sites, more GPUs."""

from __future__ import annotations

import math
from typing import Any

from ..intake.inference import InferenceWorkload
from ..spine.doc import plain
from . import measures as m
from .context import Context, Variant
from .levers_common import accelerators, liquid_cooling, more_gpus, two_sites

WEIGHTS_NEXT = {"bf16": "fp8", "fp16": "fp8", "fp8": "int4", "int8": "int4"}
KV_NEXT = {"bf16": "fp8", "fp16": "fp8"}


def _serving(ctx: Context) -> InferenceWorkload:
    w = ctx.w
    assert isinstance(w, InferenceWorkload)
    return w


def _resolved(ctx: Context, key: str, default: str) -> str:
    """A serving setting as the baseline resolved it (given or assumed)."""
    objective = plain(ctx.base.objective)
    value = objective.get(key)
    return str(value) if value is not None else default


def _quantize(ctx: Context) -> list[Variant]:
    out = []
    weights = _resolved(ctx, "weights", _serving(ctx).serving.weights or "bf16")
    nxt = WEIGHTS_NEXT.get(weights)
    if nxt:
        out.append(Variant(name=f"{nxt} weights", lever="weights", change=f"weights {weights} -> {nxt} (quantized "
                           "checkpoint: less memory per replica, faster decode)", pins={"serving.weights": nxt}))
    kv = _resolved(ctx, "kv_cache_dtype", _serving(ctx).serving.kv_cache_dtype or "bf16")
    if kv in KV_NEXT:
        out.append(Variant(name="fp8 KV cache", lever="kv_cache", change=f"KV cache {kv} -> fp8: twice the "
                           "sequences per GB of HBM", pins={"serving.kv_cache_dtype": "fp8"}))
    return out


def _disaggregated(ctx: Context) -> list[Variant]:
    s = _serving(ctx).serving
    mode = plain(ctx.base.inference).get("mode")
    if s.scenario == "offline" or mode == "disaggregated" or s.mode == "disaggregated":
        return []
    return [Variant(name="disaggregated serving", lever="disaggregated",
                    change="separate prefill and decode pools (KV cache moved between them)",
                    pins={"serving.mode": "disaggregated"})]


def _at_the_limit(ctx: Context) -> list[Variant]:
    """The capped fleet: the load it serves at the SLO, and the SLO it meets at the full load."""
    limit = ctx.gpu_limit()
    s = _serving(ctx).serving
    if limit is None or (s.request_rate is None and s.concurrency is None):
        return []
    fleet = {"compute.gpus": limit.value, "compute.max_gpus": None}
    out = [Variant(name="fewer replicas", lever="replicas", pins={**fleet, "serving.request_rate": None,
                                                                  "serving.concurrency": None},
                   change=f"the {limit.value:,} GPUs the limit allows, at the SLO: the load they serve")]
    if s.ttft is not None or s.tpot is not None:
        out.append(Variant(name="relaxed SLO", lever="slo", pins={**fleet, "serving.ttft": None, "serving.tpot": None},
                           change=f"the {limit.value:,} GPUs the limit allows at the full load: the latency they "
                                  "reach"))
    return out


def _availability(ctx: Context) -> list[Variant]:
    a = _serving(ctx).serving.availability
    if not isinstance(a, str) or not a.startswith("n+"):
        return []
    return [Variant(name="no spare replica", lever="availability", pins={"serving.availability": "none"},
                    change=f"availability {a} -> none (no spare: a replica failure drops capacity)")]


def _bigger_replicas(ctx: Context) -> list[Variant]:
    replica_cap = ctx.limit("replica cap")
    gpr, replicas = m.inference(ctx.base, "gpus_per_replica"), m.inference(ctx.base, "replicas")
    spares = int(m.inference(ctx.base, "spare_replicas") or 0)
    acc = ctx.accelerator
    if replica_cap is None or not gpr or not replicas or acc is None:
        return []
    # the GPUs of the active replicas spread over as many replicas as the cap leaves after spares
    active_cap = max(1, int(float(replica_cap.value)) - spares)
    want = gpr * (replicas - spares) / active_cap
    domain = ctx.catalog.hardware(acc, ctx.system).scale_up_domain_gpus
    tp = min(domain, 2 ** math.ceil(math.log2(max(want, 2 * gpr))))
    if tp <= gpr:
        return []
    return [Variant(name="larger replicas", lever="tp", pins={"compute.parallelism.tp": tp},
                    change=f"tensor parallel {int(gpr)} -> {tp} per replica: fewer, larger replicas")]


def levers(ctx: Context) -> list[Variant]:
    memory_binds = "memory" in str(ctx.base.binding_constraint or "")
    out = _quantize(ctx) + _disaggregated(ctx) + _at_the_limit(ctx) + _availability(ctx) + _bigger_replicas(ctx)
    out += accelerators(ctx, memory_binds) + liquid_cooling(ctx, {}) + two_sites(ctx, {})
    s = _serving(ctx).serving
    load = "the load" if s.request_rate is None else "the request rate"
    extra: dict[str, Any] = {}
    out += more_gpus(ctx, None, extra, f"as many GPUs as {load} needs at the SLO (no GPU limit)")
    return out
