"""Sizing disaggregated fleets: prefill layouts x decode layouts x decode batches, in one NumPy grid.

For every (prefill layout, decode layout, decode batch B) of one accelerator (inference/disagg.py):
  decode pool    x_d = ceil(lambda / (mu_d(B) u))          u = utilization ceiling (availability)
                 (concurrency N: x_d = ceil(N / (B u)), lambda = N / (OSL t(B)); no load given:
                 one decode replica at its capacity, lambda = mu_d u)
  TTFT           W_prefill + prefill latency + KV transfer + W_decode slot   (quantiles summed)
  prefill pool   x_p = ceil(lambda / (mu_p min(rho*, u))), rho* the largest prompt-queue load
                 whose wait fits the TTFT budget left by the rest (bisection; SLOT_CEILING without a target)
  capacity       min(x_p mu_p rho*, x_d mu_d): what both pools carry within the targets
  GPUs           (x_p + k) g_p + (x_d + k) g_d             N+k spares in each pool
A point is kept when both replicas fit in memory, TPOT (decode only) and TTFT meet the targets,
the KV traffic stays under the link's bandwidth and the GPUs under the cap. Per layout pair the
kept point with the fewest GPUs (then the most output tokens/s per GPU, all GPUs of both pools)
is a candidate; search.py ranks these together with the aggregated ones. The Pareto points use
the fluid pool ratio g_p / (mu_p rho*) + g_d / mu_d GPU-seconds per request (no rounding).
Both pools draw from the same candidate layouts (search.layouts: a pinned tp/pp/ep pins both).
With the GPU count pinned, both pools grow to use it, split where their capacities balance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .disagg import (
    DecodePool,
    DisaggChoice,
    Pool,
    PrefillPool,
    decode_pool,
    kv_transfer_s,
    link_bytes_per_gpu,
    max_prefill_utilization,
    prefill_pool,
)
from .engines import Engine
from .fitted import SLOT_CEILING
from .layout import ServingLayout
from .model import ServedModel
from .performance import STEP_PARTS, Device
from .queueing import md1_wait_quantile

if TYPE_CHECKING:
    from .search import Requirement

KEEP_PER_ACCELERATOR = 8


@dataclass(kw_only=True)
class DisaggResult:
    choices: list[DisaggChoice]
    pareto: list[dict[str, Any]]
    evaluated: int
    rejected: dict[str, int]
    floors: dict[str, float] = field(default_factory=dict)


def _axis(rows: ServingLayout, at: int) -> ServingLayout:
    """The candidate layouts (shape (R, 1)) along axis `at` of a 3-D grid."""
    shape = [1, 1, 1]
    shape[at] = -1
    return ServingLayout.of(tp=rows.tp.reshape(shape), pp=rows.pp.reshape(shape), ep=rows.ep.reshape(shape))


def _load(req: Requirement, dec: DecodePool) -> tuple[Any, Any]:
    """(request rate lambda, active decode replicas x_d) per decode point."""
    u, b, mu = req.utilization_ceiling, dec.decode_seqs, dec.requests_per_s
    if req.request_rate is not None:
        return req.request_rate, np.maximum(1.0, np.ceil(req.request_rate / (mu * u) - 1e-9))
    if req.concurrency is not None:   # the decode pool holds them all (Little: lambda = N / OSL t)
        return (req.concurrency / (req.traffic.osl * dec.tpot_mean_s),
                np.maximum(1.0, np.ceil(req.concurrency / (b * u) - 1e-9)))
    return mu * u, np.ones_like(b)


def disaggregated(m: ServedModel, dev: Device, acc_id: str, eng: Engine, req: Requirement,
                  rows: ServingLayout) -> DisaggResult:
    t = req.traffic
    pre = prefill_pool(m, dev, _axis(rows, 0), eng, t, req.memory_fraction)
    dec = decode_pool(m, dev, _axis(rows, 1), eng, t, req.memory_fraction)
    tx, nvlink, bw = kv_transfer_s(m, dev.hw, pre.layout, dec.layout, t.isl)
    shape = np.broadcast_shapes(tx.shape, dec.decode_seqs.shape)
    k = req.spare_replicas
    g_p, g_d = pre.layout.gpus.astype(np.float64), dec.layout.gpus.astype(np.float64)
    lam, x_p, x_d, rho_t = _sizes(req, pre, dec, tx)
    gpus = (x_p + k) * g_p + (x_d + k) * g_d
    with np.errstate(divide="ignore", invalid="ignore"):
        wait_p = md1_wait_quantile(lam / x_p / pre.groups, pre.group_service_s, t.ttft_quantile)
    ttft = np.broadcast_to(wait_p + pre.latency_s + tx + dec.slot_wait_s, shape)
    fits = np.broadcast_to(pre.fits & dec.fits, shape)
    link = np.maximum(lam / x_p * link_bytes_per_gpu(m, pre.layout, t.isl),
                      lam / x_d * link_bytes_per_gpu(m, dec.layout, t.isl)) / bw
    ok_ttft = np.isfinite(ttft) & np.isfinite(x_p) & (ttft <= (req.ttft_target_s or np.inf)) & (link < 1.0)
    if req.ttft_target_s is None:
        ok_ttft = ok_ttft & (dec.decode_seqs <= SLOT_CEILING * dec.slots)
    ok_tpot = np.broadcast_to(dec.tpot_s <= (req.tpot_target_s or np.inf), shape)
    latency_ok = fits & ok_ttft & ok_tpot
    good = latency_ok & (gpus <= req.gpu_cap)
    with np.errstate(invalid="ignore"):
        capacity = np.minimum(x_p * pre.requests_per_s * rho_t, x_d * dec.requests_per_s)
        tps_gpu = np.broadcast_to(capacity * t.osl / (x_p * g_p + x_d * g_d), shape)
    rejected = {"memory": int(np.sum(~fits)), "ttft": int(np.sum(fits & ~ok_ttft)),
                "tpot": int(np.sum(fits & ok_ttft & ~ok_tpot)),
                "gpus": int(np.sum(latency_ok.any(axis=2) & ~good.any(axis=2)))}
    key = _key(req, good, gpus, tps_gpu, capacity * t.osl)
    col = np.argmin(key, axis=2)
    pairs = sorted(zip(*np.nonzero(good.any(axis=2)), strict=True),
                   key=lambda ij: float(key[ij[0], ij[1], col[ij]]))[:KEEP_PER_ACCELERATOR]
    grid = _Grid(pre=pre, dec=dec, tx=tx, nvlink=nvlink, lam=np.broadcast_to(lam, shape),
                 x_p=np.broadcast_to(x_p, shape), x_d=np.broadcast_to(x_d, shape),
                 wait_p=np.broadcast_to(wait_p, shape), ok_tpot=ok_tpot, fits=fits, ok_ttft=ok_ttft, tps_gpu=tps_gpu,
                 capacity=np.broadcast_to(capacity, shape))
    choices = [_choice(acc_id, grid, req, (int(i), int(j), int(col[i, j]))) for i, j in pairs]
    return DisaggResult(choices=choices, pareto=_pareto(acc_id, grid, rho_t, req, fits & ok_ttft),
                        evaluated=int(np.prod(shape)), rejected=rejected, floors=_floors(pre, dec, tx, fits))


def _sizes(req: Requirement, pre: PrefillPool, dec: DecodePool, tx: Any) -> tuple[Any, Any, Any, Any]:
    """(load lambda, prefill replicas x_p, decode replicas x_d, prompt-queue load TTFT allows rho*)
    per grid point; x_p is inf where TTFT cannot be met."""
    t, u = req.traffic, req.utilization_ceiling
    lam, x_d = _load(req, dec)
    rest = pre.latency_s + tx + dec.slot_wait_s
    budget = np.full(np.shape(rest), np.inf) if req.ttft_target_s is None else req.ttft_target_s - rest
    rho_t = max_prefill_utilization(pre.group_service_s, budget, t.ttft_quantile,
                                    1.0 if req.ttft_target_s is not None else SLOT_CEILING)
    rho = np.minimum(rho_t, u)     # sized for the availability ceiling too
    with np.errstate(divide="ignore", invalid="ignore"):
        x_p = np.ceil(lam / (pre.requests_per_s * rho) - 1e-9)
    x_p = np.where(np.isfinite(x_p), np.maximum(x_p, 1.0), np.inf)
    if req.gpus is not None:
        g_p, g_d = pre.layout.gpus.astype(np.float64), dec.layout.gpus.astype(np.float64)
        with np.errstate(invalid="ignore"):
            x_p, x_d = _fill(req.gpus, req.spare_replicas, x_p, x_d, g_p, g_d, pre.requests_per_s * rho,
                             dec.requests_per_s * u)
            if req.request_rate is None and req.concurrency is None:   # the most the pinned pools carry
                most = np.minimum(x_p * pre.requests_per_s * rho, x_d * dec.requests_per_s * u)
                lam = np.where(np.isfinite(most), most, 0.0)
    return lam, x_p, x_d, rho_t


def _fill(gpus: int, k: int, x_p: Any, x_d: Any, g_p: Any, g_d: Any, mu_p: Any, mu_d: Any) -> tuple[Any, Any]:
    """Pinned GPU count: grow both pools to use it, split where their capacities balance
    (x_p mu_p = x_d mu_d), never below what the load and TTFT need."""
    free = gpus - k * (g_p + g_d)
    balance = free * mu_d / (g_d * mu_p + g_p * mu_d)
    best_p, best_d, best_cap = x_p, x_d, np.full(np.broadcast_shapes(np.shape(x_p), np.shape(x_d)), -1.0)
    for cand in (x_p, np.floor(balance), np.ceil(balance)):
        cp = np.maximum(cand, x_p)
        cd = np.floor((free - cp * g_p) / g_d)
        ok = np.isfinite(cp) & (cd >= x_d)
        cap = np.where(ok, np.minimum(cp * mu_p, cd * mu_d), -1.0)
        better = cap > best_cap
        best_p, best_d = np.where(better, cp, best_p), np.where(better, cd, best_d)
        best_cap = np.maximum(cap, best_cap)
    return best_p, best_d


def _key(req: Requirement, good: Any, gpus: Any, tps_gpu: Any, fleet_tps: Any) -> Any:
    """Fewest GPUs, then the most tokens/s per GPU, then the larger batch; pinned GPUs: the most
    tokens/s of the fleet."""
    cols = np.arange(good.shape[2]) / good.shape[2]
    with np.errstate(invalid="ignore"):
        if req.gpus is not None:
            score = -np.broadcast_to(fleet_tps, good.shape) - 1e-6 * cols
        else:
            top = max(float(np.max(np.where(good, tps_gpu, 0.0))), 1e-12)
            score = gpus - 0.5 * tps_gpu / top - 1e-6 * cols
    return np.where(good, score, np.inf)


@dataclass(frozen=True, kw_only=True)
class _Grid:
    pre: PrefillPool
    dec: DecodePool
    tx: Any
    nvlink: Any
    lam: Any
    x_p: Any
    x_d: Any
    wait_p: Any
    ok_tpot: Any
    fits: Any
    ok_ttft: Any
    tps_gpu: Any
    capacity: Any


def _at(arr: Any, shape: tuple[int, ...], i: tuple[int, int, int]) -> float:
    return float(np.broadcast_to(np.asarray(arr), shape)[i])


def _choice(acc_id: str, g: _Grid, req: Requirement, i: tuple[int, int, int]) -> DisaggChoice:
    shape = g.fits.shape
    p, j, c = i
    dec, pre = g.dec, g.pre
    x_p, x_d = int(g.x_p[i]), int(g.x_d[i])
    mu = np.broadcast_to(dec.requests_per_s, shape)[p, j]
    served = float(g.lam[i]) / x_d
    covers = g.fits[p, j] & g.ok_tpot[p, j] & (mu * req.utilization_ceiling >= served * (1 - 1e-9))
    op = (p, j, int(np.argmax(covers[: c + 1])) if covers[: c + 1].any() else c)

    def lay(layout: Any, at: tuple[int, int, int], n: int) -> Pool:
        return Pool(replicas=n, spares=req.spare_replicas, tp=int(_at(layout.tp, shape, at)),
                    pp=int(_at(layout.pp, shape, at)), ep=int(_at(layout.ep, shape, at)),
                    gpus_per_replica=int(_at(layout.gpus, shape, at)))
    slot_wait = _at(dec.slot_wait_s, shape, op)
    st = dec.step
    return DisaggChoice(
        accelerator=acc_id, prefill=lay(pre.layout, i, x_p), decode=lay(dec.layout, i, x_d),
        batch_size=_at(dec.decode_seqs, shape, op), batch_size_at_capacity=_at(dec.decode_seqs, shape, i),
        max_batch_size=_at(dec.slots, shape, i),
        ttft_s=float(g.wait_p[i]) + _at(pre.latency_s, shape, i) + _at(g.tx, shape, i) + slot_wait,
        prefill_latency_s=_at(pre.latency_s, shape, i), prefill_wait_s=float(g.wait_p[i]),
        kv_transfer_s=_at(g.tx, shape, i), kv_link="nvlink" if _at(g.nvlink, shape, i) else "scale-out",
        slot_wait_s=slot_wait, tpot_s=_at(dec.tpot_s, shape, op), tpot_mean_s=_at(dec.tpot_mean_s, shape, op),
        tokens_per_s_per_user=1.0 / _at(dec.tpot_mean_s, shape, op),
        prefill_requests_per_s=x_p * _at(pre.requests_per_s, shape, i), served_requests_per_s=float(g.lam[i]),
        capacity_requests_per_s=float(g.capacity[i]),
        decode_requests_per_s=x_d * _at(dec.requests_per_s, shape, i),
        output_tokens_per_s_per_gpu=float(g.tps_gpu[i]), binding=_binding(g, i),
        decode_memory=_memory(dec.plan, shape, i), prefill_memory=_memory(pre.plan, shape, i),
        step_breakdown_s={k: _at(getattr(st, f"{k}_s"), shape, op)
                          for k in STEP_PARTS})


def _memory(plan: Any, shape: tuple[int, ...], i: tuple[int, int, int]) -> dict[str, float]:
    return {"weights": _at(plan.weights_bytes, shape, i), "kv_cache": max(_at(plan.kv_cache_bytes, shape, i), 0.0),
            "activations": _at(plan.activation_bytes, shape, i), "runtime_reserve": float(plan.reserve_bytes),
            "kv_bytes_per_token_gpu": _at(plan.kv_bytes_per_token_gpu, shape, i),
            "kv_capacity_tokens": _at(plan.kv_capacity_tokens, shape, i), "device_bytes": float(plan.device_bytes),
            "ssm_state_bytes_gpu": _at(plan.ssm_state_bytes_gpu, shape, i)}


def _binding(g: _Grid, i: tuple[int, int, int]) -> str:
    """Why the decode batch stops here: the next larger batch fails memory, TPOT or TTFT, or the
    fleet needs no larger one."""
    p, j, c = i
    shape = g.fits.shape
    full = "batch_limit" if _at(g.dec.kv_slots, shape, i) > _at(g.dec.slots, shape, i) else "memory"
    b = np.broadcast_to(g.dec.decode_seqs, shape)[p, j]
    if c + 1 >= shape[2] or b[c + 1] <= b[c] or not g.fits[p, j, c + 1]:
        return full
    if not g.ok_tpot[p, j, c + 1]:
        return "tpot"
    return "ttft" if not g.ok_ttft[p, j, c + 1] else "load"


def _pareto(acc_id: str, g: _Grid, rho: Any, req: Requirement, ok: Any) -> list[dict[str, Any]]:
    """Per decode (layout, batch): the prefill layout with the most output tokens/s per GPU at the
    fluid pool ratio, among the points that fit and meet TTFT."""
    shape = ok.shape
    pre, dec = g.pre, g.dec
    with np.errstate(divide="ignore", invalid="ignore"):
        gpu_s = (pre.layout.gpus / (pre.requests_per_s * rho) + dec.layout.gpus / dec.requests_per_s)
        tps = np.where(ok & np.isfinite(gpu_s), req.traffic.osl / gpu_s, -1.0)
    best = np.argmax(tps, axis=0)
    top = np.take_along_axis(tps, best[None], axis=0)[0]
    user = 1.0 / np.broadcast_to(dec.tpot_mean_s, shape)[0]
    keep = non_dominated(top, user)
    out = []
    for j, c in zip(*np.nonzero(keep), strict=True):
        i = (int(best[j, c]), int(j), int(c))
        wait = float(md1_wait_quantile(_at(rho, shape, i) / _at(pre.group_service_s, shape, i),
                                       _at(pre.group_service_s, shape, i), req.traffic.ttft_quantile))
        out.append({"mode": "disaggregated", "accelerator": acc_id,
                    "tp": int(_at(dec.layout.tp, shape, i)), "pp": int(_at(dec.layout.pp, shape, i)),
                    "ep": int(_at(dec.layout.ep, shape, i)),
                    "prefill_tp": int(_at(pre.layout.tp, shape, i)), "prefill_pp": int(_at(pre.layout.pp, shape, i)),
                    "prefill_ep": int(_at(pre.layout.ep, shape, i)),
                    "batch_size": _at(dec.decode_seqs, shape, i), "tokens_per_s_per_gpu": float(top[j, c]),
                    "tokens_per_s_per_user": 1.0 / _at(dec.tpot_mean_s, shape, i),
                    "ttft_s": wait + _at(pre.latency_s, shape, i) + _at(g.tx, shape, i)
                    + _at(dec.slot_wait_s, shape, i),
                    "tpot_s": _at(dec.tpot_s, shape, i)})
    return out


def non_dominated(tps: Any, user: Any) -> Any:
    """Mask of the points no other beats on both tokens/s per GPU and per user (tps > 0 only):
    sorted by (-user, -tps), a point is kept when its tps exceeds every point before it. The
    Pareto front of both modes (search._front) uses it too."""
    flat_t, flat_u = tps.ravel(), user.ravel()
    order = np.lexsort((-flat_t, -flat_u))
    running = np.maximum.accumulate(np.concatenate([[-1.0], flat_t[order]]))[:-1]
    keep = np.zeros(flat_t.shape, dtype=np.bool_)
    keep[order] = (flat_t[order] > running) & (flat_t[order] > 0)
    return keep.reshape(tps.shape)


def _floors(pre: PrefillPool, dec: DecodePool, tx: Any, fits: Any) -> dict[str, float]:
    """Batch-1 decode step and a lone prompt's prefill + transfer, over the layouts that fit."""
    if not fits.any():
        return {}
    shape = fits.shape
    tpot = np.broadcast_to(dec.tpot_mean_s, shape)[..., 0]
    ttft = np.broadcast_to(pre.latency_s + tx, shape)[..., 0]
    ok = fits[..., 0]
    if not ok.any():
        return {}
    return {"tpot_s": float(np.min(np.where(ok, tpot, np.inf))), "ttft_s": float(np.min(np.where(ok, ttft, np.inf)))}
