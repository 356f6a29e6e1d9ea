"""Map a parallel layout onto the fabric tiers and name what breaks the layout rules.

Rank order (innermost first), the chattiest split nested deepest, on the fastest link (seed 001
"Mapping parallelism to the fabric"): dense models TP, CP, PP, DP (Llama 3, arXiv 2407.21783
§3.3.2: "[TP, CP, PP, DP]", DP outermost because it tolerates latency); MoE models TP, CP, DP, PP
(Megatron-Core's default "tp-cp-ep-dp-pp", which keeps an expert group on consecutive ranks).
Expert parallelism re-partitions the non-PP ranks of each stage innermost-first as ETP, EP
(Megatron-Core MoE parallel folding).

Rules (seed 001): TP degree <= scale-up (NVLink) domain; TP never crosses the RDMA boundary;
EP (ep x etp) that spills past the scale-up domain puts its all-to-all on RDMA (flagged with its
cost); CP inside the domain when it fits, else across RDMA (ring attention overlaps it);
PP crosses nodes; DP is the most fabric-tolerant split and should be the widest.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from ..quantity import info, quantity
from ._base import Traced, assume, require_int, require_layout, require_positive

Severity = Literal["error", "warning", "info"]
Tier = Literal["none", "scale-up", "scale-out"]
IntArray = npt.NDArray[np.int64]


class Violation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: str = info("the placement rule broken")
    detail: str = info("what breaks it")
    severity: Severity = info("error | warning | info")
    bytes_per_step: float | None = quantity("B", "traffic the violation puts on the slower tier, per step",
                                            default=None)
    seconds_per_step: float | None = quantity("s", "that traffic at the per-GPU scale-out bandwidth",
                                              default=None)


class Placement(Traced):
    order: list[str] = info("parallel dimensions, innermost first")
    tiers: dict[str, Tier] = info("where each split's groups communicate")
    description: str = info("the placement in words", headline=True)
    violations: list[Violation]


ORDERS = ("tp-cp-pp-dp", "tp-cp-dp-pp")


def _global_rank(coords: dict[str, IntArray], sizes: dict[str, int], order: list[str]) -> IntArray:
    rank = np.zeros_like(next(iter(coords.values())))
    stride = 1
    for name in order:
        rank = rank + coords[name] * stride
        stride *= sizes[name]
    return rank


def _dense_tier(name: str, sizes: dict[str, int], order: list[str], domain: int) -> Tier:
    """Scale-out when any group of split `name` spans two scale-up domains (ranks are monotonic
    in each coordinate, so a group crosses iff its first and last member do)."""
    if sizes[name] == 1:
        return "none"
    stride = int(np.prod([sizes[n] for n in order[:order.index(name)]]))
    ranks = int(np.prod(list(sizes.values())))
    base = np.arange(ranks, dtype=np.int64)
    base = base[(base // stride) % sizes[name] == 0]
    last = base + (sizes[name] - 1) * stride
    return "scale-out" if bool(np.any(base // domain != last // domain)) else "scale-up"


def _expert_tier(name: str, sizes: dict[str, int], order: list[str], etp: int, ep: int,
                 domain: int) -> Tier:
    """Expert splits fold ETP (inner) x EP over the non-PP ranks of each PP stage, in rank order."""
    size = etp if name == "etp" else ep
    if size == 1:
        return "none"
    data = [n for n in order if n != "pp"]
    span = int(np.prod([sizes[n] for n in data]))
    step = 1 if name == "etp" else etp
    j = np.arange(span, dtype=np.int64)
    j = j[(j // step) % size == 0]
    ends = []
    for jj in (j, j + (size - 1) * step):
        coords: dict[str, IntArray] = {}
        stride = 1
        for n in data:
            coords[n] = (jj // stride) % sizes[n]
            stride *= sizes[n]
        for stage in range(sizes["pp"]):
            coords["pp"] = np.full_like(jj, stage)
            ends.append(_global_rank(coords, sizes, order) // domain)
    first, last = np.stack(ends[:sizes["pp"]]), np.stack(ends[sizes["pp"]:])
    return "scale-out" if bool(np.any(first != last)) else "scale-up"


def map_parallelism(
    *,
    tp: int,
    pp: int,
    dp: int,
    cp: int = 1,
    ep: int = 1,
    etp: int = 1,
    gpus_per_node: int,
    scale_up_domain_gpus: int,
    ep_rdma_bytes_per_step: float | None = None,
    per_gpu_scale_out_bytes_per_s: float | None = None,
    order: str | None = None,
) -> Placement:
    """Place tp x cp x pp x dp ranks (TP innermost) and check the layout rules.

    `ep_rdma_bytes_per_step`: the step-time model's estimate of the MoE all-to-all bytes per GPU
    per step that cross the scale-up boundary when EP spills; it is reported with the violation
    (and as seconds at `per_gpu_scale_out_bytes_per_s` when that is given).
    """
    tp, pp, dp, cp, ep, etp = require_layout(tp, pp, dp, cp, ep, etp)
    gpn = require_int("compute.gpus_per_node", gpus_per_node)
    domain = require_int("fabric.scale_up_domain.gpus", scale_up_domain_gpus)
    if domain % gpn and gpn % domain:
        raise InputError("fabric.scale_up_domain.gpus", domain,
                         f"a multiple or a divisor of gpus_per_node ({gpn})")
    if ep_rdma_bytes_per_step is not None:
        require_positive("fabric.ep_rdma_bytes_per_step", ep_rdma_bytes_per_step, allow_zero=True)

    assumptions = []
    if order is None:
        order = ORDERS[1] if ep * etp > 1 else ORDERS[0]
        assumptions.append(assume("fabric.rank_order", order, "innermost first; dense: Llama 3 §3.3.2 "
                                  "[TP, CP, PP, DP]; MoE: Megatron-Core default tp-cp-ep-dp-pp"))
    if order not in ORDERS:
        raise InputError("compute.parallelism.order", order, "one of " + ", ".join(ORDERS))
    dims = order.split("-")
    sizes = {"tp": tp, "cp": cp, "pp": pp, "dp": dp}
    tiers: dict[str, Tier] = {n: _dense_tier(n, sizes, dims, domain) for n in dims}
    for name in ("etp", "ep"):
        tiers[name] = _expert_tier(name, sizes, dims, etp, ep, domain)

    out: list[Violation] = []
    if tp > domain:
        out.append(Violation(rule="tp_exceeds_scale_up_domain", severity="error",
                             detail=f"TP={tp} > scale-up domain of {domain} GPUs; TP all-reduces every "
                                    "layer and must stay on NVLink"))
    elif tiers["tp"] == "scale-out":
        out.append(Violation(rule="tp_crosses_rdma_boundary", severity="error",
                             detail=f"TP={tp} groups straddle scale-up domains of {domain} GPUs "
                                    f"({domain} is not a multiple of {tp}); pick a TP that divides "
                                    f"{domain} or leave {domain % tp} GPUs per domain idle"))
    expert_group = ep * etp
    if expert_group > 1 and (tiers["ep"] == "scale-out" or tiers["etp"] == "scale-out"):
        cost = ""
        seconds = None
        if ep_rdma_bytes_per_step is not None:
            cost = f"; ~{ep_rdma_bytes_per_step / 1e9:.3g} GB per GPU per step over RDMA"
            if per_gpu_scale_out_bytes_per_s:
                seconds = ep_rdma_bytes_per_step / per_gpu_scale_out_bytes_per_s
                cost += f" (~{seconds:.3g} s at line rate)"
        out.append(Violation(rule="ep_spills_to_scale_out", severity="warning",
                             bytes_per_step=ep_rdma_bytes_per_step, seconds_per_step=seconds,
                             detail=f"expert group EP x ETP = {expert_group} exceeds or straddles the "
                                    f"{domain}-GPU scale-up domain: the MoE all-to-all runs on RDMA{cost}"))
    if tiers["cp"] == "scale-out":
        out.append(Violation(rule="cp_crosses_scale_up", severity="info",
                             detail=f"TP x CP = {tp * cp} > {domain}: context-parallel ring exchange runs "
                                    "on RDMA (overlappable with attention compute)"))
    if dp > 1 and dp < max(pp, cp):
        out.append(Violation(rule="dp_not_widest", severity="info",
                             detail=f"DP={dp} is narrower than PP={pp}/CP={cp}; DP is the most "
                                    "fabric-tolerant split and is usually scaled widest"))
    description = ", ".join(f"{n.upper()}={sizes[n]} on {tiers[n]}" for n in dims if sizes[n] > 1)
    if expert_group > 1:
        description += f"; experts ETP={etp} x EP={ep} on {tiers['ep'] if ep > 1 else tiers['etp']}"
    return Placement(order=dims, tiers=tiers, description=description or "single GPU",
                     violations=out, assumptions=assumptions,
                     formulas={"fabric.violations": f"rank order {order} (innermost first); a "
                               "split is on scale-out when any of its groups spans two scale-up domains"})
