"""Disaggregated serving: a prefill pool and a decode pool of the same accelerator, the KV cache of
each prompt sent from one to the other (DistServe, Zhong et al. 2024, arXiv:2401.09670; Splitwise,
Patel et al. 2024, arXiv:2311.18677; NVIDIA Dynamo). Every function is vectorized over layouts.

Prefill replica (layout tp_p, pp_p; steps of C = max_num_tokens prompt tokens per scheduler,
pp_p micro-batches in flight, no decode tokens beside them):
    capacity   mu_p = C g pp / (ISL t(C))           requests/s (t: performance.step_time)
    latency    ceil(ISL / c) t(c),  c = min(ISL, C)  one prompt, chunked (as the aggregated model)
    queue      M/D/1 per scheduler group, service ISL t(C) / (C pp)   (queueing.py)
Decode replica (tp_d, pp_d): steps of B decode tokens only, so TPOT = t(B) is not inflated by
prefill chunks, which is what disaggregation buys; B is capped by the KV cache at ISL + OSL
tokens (the engine's rule, memory.py); mu_d = B / (OSL t(B)); the TPOT tail is t at the Poisson
tail of the busy slots and the wait for a decode slot is M/D/c, as in online.py.
KV transfer of one prompt: each GPU sends (receives) its shard of the ISL-token KV cache,
    t_x = max(KV(ISL) f_p, KV(ISL) f_d) / B_link + alpha      (f: memory.kv_shard_fraction)
over NVLink when a prefill and a decode replica fit in one scale-up domain (placed side by side),
else over the GPU's own scale-out NIC (perf/collectives.py achievable bandwidths). No overlap of
the transfer with the prefill (layer-wise streaming would hide part of it): conservative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..perf import collectives
from ..perf.layout import FloatArray, Hardware
from .engines import Engine
from .layout import ServingLayout
from .memory import MemoryPlan, kv_shard_fraction, memory_plan, ssm_state_bytes_per_gpu
from .model import ServedModel
from .online import Traffic, replica_memory
from .performance import Device, StepTime, step_time
from .queueing import busy_quantile, md1_wait_quantile, mdc_wait_quantile

DECODE_BATCH_POINTS = 40
_BISECTION_STEPS = 40


@dataclass(frozen=True, kw_only=True)
class PrefillPool:
    """One prefill replica per layout; every field broadcasts to the layout's shape."""

    layout: ServingLayout
    plan: MemoryPlan
    fits: npt.NDArray[np.bool_]
    latency_s: FloatArray            # one prompt alone, no queue
    requests_per_s: FloatArray       # capacity of one replica
    group_service_s: FloatArray      # M/D/1 service time of one prompt in one scheduler group
    groups: FloatArray               # scheduler (attention-DP) groups


@dataclass(frozen=True, kw_only=True)
class DecodePool:
    """One decode replica per layout x decode batch; fields broadcast to (..., layouts, batches)."""

    layout: ServingLayout
    plan: MemoryPlan
    slots: FloatArray
    kv_slots: FloatArray
    decode_seqs: FloatArray
    step: StepTime                   # at the mean batch
    tpot_mean_s: FloatArray
    tpot_s: FloatArray               # at the TPOT percentile
    requests_per_s: FloatArray       # one replica at this mean batch
    slot_wait_s: FloatArray          # wait for a decode slot at the TTFT percentile
    fits: npt.NDArray[np.bool_]


def prefill_pool(m: ServedModel, dev: Device, lay: ServingLayout, eng: Engine, traffic: Traffic,
                 memory_fraction: float | None) -> PrefillPool:
    """Capacity, latency and queue service time of one prefill-only replica per layout."""
    plan = memory_plan(m, lay, dev.hw.hbm_bytes, eng, memory_fraction=memory_fraction)
    groups = lay.dp_attn.astype(np.float64)
    pp = lay.pp.astype(np.float64)
    isl, chunk = traffic.isl, float(eng.max_num_tokens)
    own = min(isl, chunk)
    full = step_time(m, dev, lay, decode_seqs=0.0, prefill_tokens=chunk * groups * pp,
                     decode_context=0.0, prefill_context=isl)
    alone = step_time(m, dev, lay, decode_seqs=0.0, prefill_tokens=own * groups * pp,
                      decode_context=0.0, prefill_context=isl)
    # The prompts of pp micro-batches in every group are in flight at once; each holds its KV.
    held = pp * groups * max(chunk, traffic.isl, traffic.isl_tail)
    fits = np.asarray((plan.kv_cache_bytes > 0) & (plan.kv_capacity_tokens >= held), dtype=np.bool_)
    return PrefillPool(layout=lay, plan=plan, fits=fits,
                       latency_s=np.asarray(np.ceil(isl / own) * alone.total_s),
                       requests_per_s=np.asarray(chunk * groups * pp / (isl * full.total_s)),
                       group_service_s=np.asarray(isl * full.total_s / (chunk * pp)), groups=groups)


def decode_pool(m: ServedModel, dev: Device, lay: ServingLayout, eng: Engine, traffic: Traffic,
                memory_fraction: float | None) -> DecodePool:
    """Decode-only replicas over a geometric grid of mean batches from 1 to the slots; the
    layout's last axis (length 1) becomes the batch axis."""
    plan, kv_slots, slots = replica_memory(m, dev, lay, eng, memory_fraction, traffic)
    frac = np.linspace(0.0, 1.0, DECODE_BATCH_POINTS)
    b = np.maximum(np.round(np.maximum(slots, 1.0) ** frac), 1.0)
    isl, osl = traffic.isl, traffic.osl
    ctx = isl + osl / 2.0
    mean = step_time(m, dev, lay, decode_seqs=b, prefill_tokens=0.0, decode_context=ctx, prefill_context=isl)
    t = mean.total_s
    b_tail = np.maximum(busy_quantile(b, np.maximum(slots, 1.0), traffic.tpot_quantile), b)
    tail = step_time(m, dev, lay, decode_seqs=b_tail, prefill_tokens=0.0, decode_context=ctx,
                     prefill_context=isl)
    mu = b / (osl * t)
    wait = mdc_wait_quantile(mu, osl * t, slots, traffic.ttft_quantile)
    fits = np.asarray((slots >= 1) & (b <= slots), dtype=np.bool_)
    return DecodePool(layout=lay, plan=plan, slots=slots, kv_slots=kv_slots, decode_seqs=np.asarray(b),
                      step=mean, tpot_mean_s=t, tpot_s=tail.total_s, requests_per_s=np.asarray(mu),
                      slot_wait_s=wait, fits=fits)


def kv_transfer_s(m: ServedModel, hw: Hardware, pre: ServingLayout, dec: ServingLayout,
                  isl: float) -> tuple[FloatArray, npt.NDArray[np.bool_], FloatArray]:
    """Seconds to move one prompt's KV cache from a prefill to a decode replica, whether it rides
    NVLink (both replicas inside one scale-up domain), and the per-GPU link bandwidth used.
    Shapes broadcast pre x dec."""
    per_gpu = np.maximum(link_bytes_per_gpu(m, pre, isl), link_bytes_per_gpu(m, dec, isl))
    nvlink = np.asarray(pre.gpus + dec.gpus <= hw.scale_up_domain_gpus, dtype=np.bool_)
    bw = np.where(nvlink, collectives.scale_up_bw(hw), collectives.scale_out_bw(hw))
    lat = np.where(nvlink, collectives.NVLINK_LATENCY_S, collectives.NIC_LATENCY_S)
    return np.asarray(per_gpu / bw + lat), nvlink, np.asarray(bw)


def link_bytes_per_gpu(m: ServedModel, lay: ServingLayout, isl: float) -> FloatArray:
    """KV bytes (and a hybrid's SSM state) one GPU of a replica sends or receives per request."""
    return np.asarray(float(m.kv_bytes_per_sequence(isl)) * kv_shard_fraction(m, lay) + ssm_state_bytes_per_gpu(m, lay))


def max_prefill_utilization(service_s: Any, budget_s: Any, q: float, ceiling: float) -> FloatArray:
    """Largest load rho <= ceiling of an M/D/1 prompt queue (service s) whose q-quantile wait stays
    within budget_s; by bisection (the wait grows with rho). NaN where the budget is negative."""
    s = np.asarray(service_s, dtype=np.float64)
    budget = np.asarray(budget_s, dtype=np.float64)
    s, budget = np.broadcast_arrays(s, budget)

    def wait(rho: FloatArray) -> FloatArray:
        return md1_wait_quantile(rho / s, s, q)
    top = np.full(s.shape, ceiling)
    ok_top = wait(top) <= budget
    lo, hi = np.zeros(s.shape), top.copy()
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        ok = wait(mid) <= budget
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    rho = np.where(ok_top, top, lo)
    return np.asarray(np.where(budget < 0, np.nan, rho))


@dataclass(frozen=True, kw_only=True)
class Pool:
    replicas: int            # active
    spares: int
    tp: int
    pp: int
    ep: int
    gpus_per_replica: int

    @property
    def gpus(self) -> int:
        return (self.replicas + self.spares) * self.gpus_per_replica

    def as_dict(self) -> dict[str, int]:
        return {"replicas": self.replicas + self.spares, "active_replicas": self.replicas,
                "spare_replicas": self.spares, "tp": self.tp, "pp": self.pp, "ep": self.ep,
                "gpus_per_replica": self.gpus_per_replica, "gpus": self.gpus}


@dataclass(frozen=True, kw_only=True)
class DisaggChoice:
    """One disaggregated configuration at its operating point (scalars only)."""

    accelerator: str
    prefill: Pool
    decode: Pool
    batch_size: float                   # decode sequences per decode replica at the served load
    batch_size_at_capacity: float
    max_batch_size: float               # decode slots
    ttft_s: float
    prefill_latency_s: float            # one prompt alone
    prefill_wait_s: float
    kv_transfer_s: float
    kv_link: str                        # nvlink | scale-out
    slot_wait_s: float
    tpot_s: float
    tpot_mean_s: float
    tokens_per_s_per_user: float
    prefill_requests_per_s: float       # active prefill pool, all its steps busy
    served_requests_per_s: float        # the load TTFT and the operating batch are evaluated at
    capacity_requests_per_s: float      # what both active pools carry within the targets
    decode_requests_per_s: float        # active decode pool at the capacity batch
    output_tokens_per_s_per_gpu: float  # capacity of the active pools / their GPUs
    binding: str
    decode_memory: dict[str, float]
    prefill_memory: dict[str, float]
    step_breakdown_s: dict[str, float]
    mode: str = "disaggregated"

    @property
    def gpus(self) -> int:
        return self.prefill.gpus + self.decode.gpus

    @property
    def active_gpus(self) -> int:
        return (self.prefill.replicas * self.prefill.gpus_per_replica
                + self.decode.replicas * self.decode.gpus_per_replica)

    @property
    def requests_per_s(self) -> float:
        return self.capacity_requests_per_s
