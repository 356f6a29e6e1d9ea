"""The cheapest serving configuration that meets the SLOs: layouts x batches, evaluated at once.

For each accelerator, every layout (tp in 1..scale-up domain, pp, ep for MoE) is evaluated over a
geometric grid of decode batches from 1 to the KV-limited slots (online) or at the KV-limited
batch (offline) in one NumPy call (inference/online.py). A point is kept when the model fits, TTFT
and TPOT at their percentiles meet the targets. Per layout the kept point with the most output
tokens/s per GPU serves the most requests per replica; replicas = ceil(rate / (per-replica rate x
utilization ceiling)) (+ spares for N+k), or ceil(concurrency / per-replica concurrency). The
answer is the fewest GPUs, then the most tokens/s per GPU. The Pareto front is tokens/s per GPU
vs tokens/s per user over the points that fit and meet TTFT.

Online, the disaggregated configurations (a prefill pool and a decode pool, disagg_search.py) are
candidates too (`mode` auto), or the only ones (disaggregated), or none (aggregated; offline is
always aggregated). Aggregated and disaggregated candidates are ranked by the same key: the fewest
GPUs, then the most output tokens/s per GPU at capacity, then the lower TTFT; with the GPU count
pinned, the most output tokens/s of the fleet.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..errors import Infeasible, InputError
from .disagg import DisaggChoice
from .disagg_search import disaggregated, non_dominated
from .engines import Engine
from .fitted import SLOT_CEILING
from .layout import ServingLayout
from .model import ServedModel
from .online import Evaluation, Traffic, evaluate, replica_memory
from .performance import Device
from .serving import offline_decode_seqs

BATCH_POINTS = 40
TP_CHOICES = (1, 2, 4, 8, 16, 32, 64, 72)
PP_CHOICES = (1, 2, 4, 8)
REJECTIONS = ("memory", "ttft", "tpot", "gpus")   # why a grid point was dropped (result "rejected" keys)


@dataclass(frozen=True, kw_only=True)
class Requirement:
    traffic: Traffic
    scenario: str                       # online | offline
    ttft_target_s: float | None
    tpot_target_s: float | None
    request_rate: float | None
    concurrency: float | None
    utilization_ceiling: float          # 1.0 = none
    spare_replicas: int                 # N+k
    max_gpus: int | None
    gpus: int | None                    # pinned total
    tp: int | None = None
    pp: int | None = None
    ep: int | None = None
    memory_fraction: float | None = None
    mode: str = "auto"                  # auto | aggregated | disaggregated

    @property
    def gpu_cap(self) -> int:
        """The most GPUs any configuration may use: the smaller of the pinned count and max_gpus
        (10^9, no cap, when neither is given)."""
        return min(x for x in (self.max_gpus, self.gpus, 10**9) if x is not None)


@dataclass(frozen=True, kw_only=True)
class Choice:
    accelerator: str
    evaluation: Evaluation
    index: tuple[int, int]              # the operating point at the served load
    capacity_index: tuple[int, int]     # the largest batch meeting the targets
    replicas: int                       # active, serving the load
    spares: int
    binding: str                        # what stopped the batch from growing
    mode: ClassVar[str] = "aggregated"  # as DisaggChoice.mode

    def value(self, arr: Any, capacity: bool = False) -> float:
        """A scalar of an array of the evaluation's grid (layouts x batches, or one that broadcasts
        to it: plan, step, layout) at the operating point, or at capacity."""
        i = self.capacity_index if capacity else self.index
        return float(np.broadcast_to(np.asarray(arr), self.evaluation.ttft_s.shape)[i])

    def at(self, name: str, capacity: bool = False) -> float:
        """A scalar of the evaluation (field `name`) at the operating point, or at capacity."""
        return self.value(getattr(self.evaluation, name), capacity)

    @property
    def gpus_per_replica(self) -> int:
        return int(self.value(self.evaluation.layout.gpus))

    @property
    def gpus(self) -> int:
        return (self.replicas + self.spares) * self.gpus_per_replica

    def layout_value(self, name: str) -> int:
        return int(self.value(getattr(self.evaluation.layout, name)))


Candidate = Choice | DisaggChoice


@dataclass(kw_only=True)
class SearchResult:
    best: Candidate | None
    alternatives: list[Candidate]
    pareto: list[dict[str, Any]]
    evaluated: int
    rejected: dict[str, int]
    seconds: float
    floors: dict[str, float] = field(default_factory=dict)
    best_by_mode: dict[str, Candidate] = field(default_factory=dict)
    rejected_by_mode: dict[str, dict[str, int]] = field(default_factory=dict)


def capacity_tokens_per_s_per_gpu(c: Candidate) -> float:
    """Output tokens/s per active GPU when the active replicas run at their capacity batch."""
    if isinstance(c, DisaggChoice):
        return c.output_tokens_per_s_per_gpu
    return c.at("tokens_per_s_per_gpu", capacity=True)


def active_gpus(c: Candidate) -> int:
    return c.active_gpus if isinstance(c, DisaggChoice) else c.replicas * c.gpus_per_replica


def _rank(c: Candidate, pinned: bool) -> tuple[float, float, float]:
    tps = capacity_tokens_per_s_per_gpu(c)
    ttft = c.ttft_s if isinstance(c, DisaggChoice) else c.at("ttft_s")
    if pinned:
        return 0.0, -tps * active_gpus(c), ttft
    return float(c.gpus), -tps, ttft


def layouts(m: ServedModel, dev: Device, req: Requirement) -> ServingLayout:
    """Candidate (tp, pp, ep): pins respected, TP inside the scale-up domain, replica <= GPU cap; a
    hybrid's TP divides its Mamba heads (vLLM's mamba_mixer2 shards them with divide()), or a Gated
    DeltaNet's key and value heads."""
    domain = max(dev.hw.scale_up_domain_gpus, 1)
    cap = req.gpu_cap
    tps = [req.tp] if req.tp else [t for t in TP_CHOICES if t <= domain]
    if m.arch.mamba_layers:
        # Gated DeltaNet shards its key heads too; Mamba-2 replicates the groups TP does not divide
        heads = math.gcd(m.arch.mamba_heads, m.arch.mamba_groups) if m.arch.gated_delta else m.arch.mamba_heads
        if req.tp and heads % req.tp:
            raise InputError("compute.parallelism.tp", req.tp,
                             f"a divisor of {heads}, the model's linear-mixer heads (vLLM shards them by TP)")
        tps = [t for t in tps if heads % t == 0]
    pps = [req.pp] if req.pp else list(PP_CHOICES)
    rows = []
    for tp in tps:
        for pp in pps:
            eps = [req.ep] if req.ep else ([1, tp] if m.arch.is_moe and tp > 1 else [1])
            rows += [(tp, pp, ep) for ep in eps if tp * max(1, ep // tp) * pp <= cap]
    if dev.hw.scale_out_bandwidth_bytes_per_s <= 0:   # a node without NICs: a replica stays in its domain
        rows = [(tp, pp, ep) for tp, pp, ep in rows if tp * max(1, ep // tp) * pp <= domain]
    if not rows:
        raise Infeasible("gpus", f"no layout fits in {cap} GPUs with the pinned parallelism")
    arr = np.array(rows, dtype=np.int64)
    return ServingLayout.of(tp=arr[:, 0:1], pp=arr[:, 1:2], ep=arr[:, 2:3])


def _grid(m: ServedModel, dev: Device, lay: ServingLayout, eng: Engine, req: Requirement) -> Evaluation:
    memory = replica_memory(m, dev, lay, eng, req.memory_fraction, req.traffic)
    plan, _, slots = memory
    top = np.maximum(slots, 1.0)
    if req.scenario == "offline":
        b = offline_decode_seqs(m, plan, lay, req.traffic.isl, req.traffic.osl, max_batch=slots,
                                max_num_tokens=eng.max_num_tokens * lay.dp_attn,
                                block_tokens=eng.block_size_tokens)
        b = np.maximum(b, 1.0)
    else:
        frac = np.linspace(0.0, 1.0, BATCH_POINTS)[None, :]
        b = np.maximum(np.round(top**frac), 1.0)
    return evaluate(m, dev, lay, eng, req.traffic, b, memory=memory)


def _replicas(ev: Evaluation, i: tuple[int, int], req: Requirement) -> int:
    """Active replicas the load needs (1 when no rate or concurrency is given)."""
    shape = ev.ttft_s.shape
    lam = float(np.broadcast_to(ev.requests_per_s, shape)[i]) * req.utilization_ceiling
    if req.request_rate is not None:
        return max(1, math.ceil(req.request_rate / lam - 1e-9))
    if req.concurrency is not None:
        # Little's law: requests in the replica = rate x (prefill time + OSL x TPOT).
        t = float(np.broadcast_to(ev.tpot_mean_s, shape)[i])
        per = lam / req.utilization_ceiling * (float(np.broadcast_to(ev.ttft_prefill_s, shape)[i])
                                               + req.traffic.osl * t)
        return max(1, math.ceil(req.concurrency / (per * req.utilization_ceiling) - 1e-9))
    return 1


def search(m: ServedModel, devices: dict[str, Device], eng: Engine, req: Requirement) -> SearchResult:
    start = time.perf_counter()
    by_mode: dict[str, dict[str, int]] = {}
    choices: list[Candidate] = []
    front: list[dict[str, Any]] = []
    floors: dict[str, float] = {}
    evaluated = 0
    disagg = req.mode != "aggregated" and req.scenario == "online"
    for acc_id, dev in devices.items():
        rows = layouts(m, dev, req)
        if req.mode != "disaggregated":
            n, agg, counts = _aggregated(m, acc_id, dev, rows, eng, req, floors, front)
            evaluated += n
            choices += agg
            _add(by_mode, "aggregated", counts)
        if disagg:
            res = disaggregated(m, dev, acc_id, eng, req, rows)
            evaluated += res.evaluated
            choices += res.choices
            front += res.pareto
            _add(by_mode, "disaggregated", res.rejected)
            for k, v in res.floors.items():
                floors[k] = min(floors.get(k, np.inf), v)
    pinned = req.gpus is not None
    choices.sort(key=lambda c: _rank(c, pinned))
    best_by_mode: dict[str, Candidate] = {}
    for c in choices:
        best_by_mode.setdefault(c.mode, c)
    rejected = {k: sum(r.get(k, 0) for r in by_mode.values()) for k in REJECTIONS}
    return SearchResult(best=choices[0] if choices else None, alternatives=choices[1:6],
                        pareto=_front(front), evaluated=evaluated, rejected=rejected,
                        seconds=time.perf_counter() - start, floors=floors, best_by_mode=best_by_mode,
                        rejected_by_mode=by_mode)


def _add(by_mode: dict[str, dict[str, int]], mode: str, counts: dict[str, int]) -> None:
    acc = by_mode.setdefault(mode, dict.fromkeys(REJECTIONS, 0))
    for k, v in counts.items():
        acc[k] += v


def _aggregated(m: ServedModel, acc_id: str, dev: Device, rows: ServingLayout, eng: Engine, req: Requirement,
                floors: dict[str, float], front: list[dict[str, Any]]) -> tuple[int, list[Candidate], dict[str, int]]:
    """The aggregated candidates of one accelerator: (points evaluated, choices, rejected counts)."""
    rejected = dict.fromkeys(REJECTIONS, 0)
    choices: list[Candidate] = []
    ev = _grid(m, dev, rows, eng, req)
    shape = ev.ttft_s.shape
    fits = np.broadcast_to(ev.fits, shape)
    if req.scenario == "online":
        # A queue served at 100% of its slots never drains: without a TTFT target, keep the
        # slots at most SLOT_CEILING busy (the caller records it as an assumption).
        busy = np.broadcast_to(ev.decode_seqs <= SLOT_CEILING * ev.slots, shape)
        ok_ttft = np.isfinite(ev.ttft_s) & (ev.ttft_s <= (req.ttft_target_s or np.inf))
        ok_ttft = ok_ttft & (busy if req.ttft_target_s is None else True)
    else:
        ok_ttft = np.ones(shape, dtype=np.bool_)
    ok_tpot = ev.tpot_s <= (req.tpot_target_s or np.inf)
    rejected["memory"] += int(np.sum(~fits))
    rejected["ttft"] += int(np.sum(fits & ~ok_ttft))
    rejected["tpot"] += int(np.sum(fits & ok_ttft & ~ok_tpot))
    _floors(ev, fits, floors)
    good = fits & ok_ttft & ok_tpot
    front += _pareto_points(acc_id, ev, fits & ok_ttft, offline=req.scenario == "offline")
    for row in range(shape[0]):
        if not good[row].any():
            continue
        col = int(np.argmax(np.where(good[row], ev.tokens_per_s_per_gpu[row], -1.0)))
        i = (row, col)
        gpr = int(np.broadcast_to(ev.layout.gpus, shape)[i])
        n = _replicas(ev, i, req)
        if req.gpus is not None:   # pinned: every replica that fits serves, if enough of them
            have = req.gpus // gpr - req.spare_replicas
            n = have if have >= n else 0
        op = _operating(ev, good, i, req, n)
        ch = Choice(accelerator=acc_id, evaluation=ev, index=op, capacity_index=i, replicas=n,
                    spares=req.spare_replicas, binding=_binding(ev, good, fits, ok_ttft, i))
        if n < 1 or (req.max_gpus is not None and ch.gpus > req.max_gpus):
            rejected["gpus"] += 1
            continue
        choices.append(ch)
    return int(np.prod(shape)), choices, rejected


def _operating(ev: Evaluation, good: Any, i: tuple[int, int], req: Requirement, n: int) -> tuple[int, int]:
    """The smallest kept batch whose rate covers the load one of n replicas carries (the
    per-replica rate grows with the batch); the capacity point when no rate is given."""
    if req.request_rate is None or n < 1:
        return i
    row = i[0]
    lam = np.broadcast_to(ev.requests_per_s, ev.ttft_s.shape)[row]
    enough = good[row] & (lam * req.utilization_ceiling >= req.request_rate / n)
    return (row, int(np.argmax(enough))) if enough.any() else i


def _binding(ev: Evaluation, good: Any, fits: Any, ok_ttft: Any, i: tuple[int, int]) -> str:
    """Why the batch stops at this point: the next larger batch fails memory, TTFT or TPOT."""
    row, col = i
    shape = ev.ttft_s.shape
    capped = bool(np.broadcast_to(ev.kv_slots > ev.slots, shape)[i])
    full = "batch_limit" if capped else "memory"
    if col + 1 >= good.shape[1] or float(ev.decode_seqs[row, col + 1]) <= float(ev.decode_seqs[i]):
        return full
    if not fits[row, col + 1]:
        return full
    return "ttft" if not ok_ttft[row, col + 1] else "tpot"


def _floors(ev: Evaluation, fits: Any, floors: dict[str, float]) -> None:
    """The best TTFT and TPOT any fitting layout reaches at batch 1: the hardware floor."""
    if not fits.any():
        return
    tpot = float(np.min(np.where(fits, ev.tpot_mean_s, np.inf)))
    ttft = float(np.min(np.where(fits, ev.ttft_prefill_s + ev.tpot_mean_s, np.inf)))
    floors["tpot_s"] = min(floors.get("tpot_s", np.inf), tpot)
    floors["ttft_s"] = min(floors.get("ttft_s", np.inf), ttft)


def offline_ttft_s(ev: Evaluation) -> Any:
    """Offline every request is queued at once, so the queue is the whole run: TTFT is reported
    without it (the request's own prefill + one mean decode step), as in the compute section."""
    return ev.ttft_prefill_s + ev.tpot_mean_s


def _pareto_points(acc_id: str, ev: Evaluation, ok: Any, *, offline: bool = False) -> list[dict[str, Any]]:
    shape = ev.ttft_s.shape
    ttft = np.broadcast_to(offline_ttft_s(ev) if offline else ev.ttft_s, shape)
    out = []
    for row, col in zip(*np.nonzero(ok), strict=True):
        i = (int(row), int(col))
        out.append({"mode": "aggregated", "accelerator": acc_id,
                    "tp": int(np.broadcast_to(ev.layout.tp, shape)[i]),
                    "pp": int(np.broadcast_to(ev.layout.pp, shape)[i]),
                    "ep": int(np.broadcast_to(ev.layout.ep, shape)[i]),
                    "batch_size": float(ev.decode_seqs[i]),
                    "tokens_per_s_per_gpu": float(ev.tokens_per_s_per_gpu[i]),
                    "tokens_per_s_per_user": float(ev.tokens_per_s_per_user[i]),
                    "ttft_s": float(ttft[i]), "tpot_s": float(ev.tpot_s[i])})
    return out


def _front(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Non-dominated points (higher tokens/s per GPU and per user), sorted by tokens/s per user."""
    pts = sorted(points, key=lambda p: (-p["tokens_per_s_per_user"], -p["tokens_per_s_per_gpu"]))
    keep = non_dominated(np.array([p["tokens_per_s_per_gpu"] for p in pts], dtype=np.float64),
                         np.array([p["tokens_per_s_per_user"] for p in pts], dtype=np.float64))
    return [p for p, k in zip(pts, keep, strict=True) if k]
