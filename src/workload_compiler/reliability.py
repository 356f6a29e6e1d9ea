"""Reliability of a training job at scale: job MTBF, checkpoint interval, goodput.

Formulas (reference/infrastructure.md §5):
- Job MTBF  M = 1 / (N_gpus x r_gpu) or 1 / (N_nodes x r_node), failures independent
  (Kokolis et al., arXiv 2410.21680: 2,048 nodes x 6.5e-3/day -> 1.8 h).
- Young (CACM 17(9), 1974): T_opt = sqrt(2 C M), C = checkpoint stall.
- Daly (FGCS 22(3), 2006, eq. 37): T_opt = sqrt(2CM) [1 + (1/3) sqrt(C/2M) + (1/9) (C/2M)] - C
  for C < 2M, else M.
- Goodput (effective training time ratio), first-order expected loss per checkpoint period
  P = T + C with failures at rate 1/M: each failure costs the restart R plus the work since the
  last durable checkpoint, P/2 + L on average (L = persist latency of an asynchronous
  checkpoint, 0 when synchronous). Wall time per period W = P + (P/M)(P/2 + L + R);
  goodput = T / W = useful / (useful + checkpoint + lost work + restart).
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from .catalog.loader import package_yaml
from .errors import InputError
from .fabric._base import Traced, assume, require_int, require_positive
from .quantity import info, quantity
from .spine.doc import DictView

DAY_S = 86400.0
INTERVAL_RULES = ("daly", "young")


class FailureRate(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    per_gpu_day: float | None = None
    per_node_day: float | None = None
    gpus_per_node: int
    hardware: str
    source: str


class Overheads(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    checkpoint: float = quantity("fraction", "share of wall-clock time spent writing checkpoints")
    lost_work: float = quantity("fraction", "share of wall-clock time redoing work lost to failures")
    restart: float = quantity("fraction", "share of wall-clock time restarting after failures")


class ReliabilityLayer(DictView, Traced):
    """Failures at this scale, the checkpoint interval they call for, and the goodput that is left."""

    job_mtbf_s: float = quantity("s", "mean time between failures of the whole job", headline=True)
    goodput: float = quantity("fraction", "share of wall-clock time that advances training", headline=True)
    failures_per_day: float = quantity("1/day", "expected failures per day of the job", headline=True)
    failure_rate: str = info("the failure rate used and its source")
    checkpoint_interval_s: float = quantity("s", "time between checkpoints")
    interval_rule: str = info("daly | young: the optimal-interval formula")
    checkpoint_stall_s: float = quantity("s", "training time lost per checkpoint")
    restart_s: float = quantity("s", "time to restart after a failure")
    overheads: Overheads
    expected_interruptions: float | None = quantity("count", "failures expected over the run", default=None)
    goodput_adjusted_time_to_train_s: float | None = quantity("s", "time to train with failures, restarts "
                                                              "and checkpoints", default=None)


def failure_rates() -> dict[str, FailureRate]:
    """Published failure rates (catalog/data/reliability.yaml)."""
    return {k: FailureRate(**v) for k, v in package_yaml("reliability.yaml")["failure_rates"].items()}


def job_mtbf_s(*, gpus: int, nodes: int, per_gpu_day: float | None = None,
               per_node_day: float | None = None) -> float:
    """M = 1 / (gpus x r_gpu) or 1 / (nodes x r_node), in seconds; exactly one rate is given."""
    gpus, nodes = require_int("compute.gpus", gpus), require_int("compute.nodes", nodes)
    if (per_gpu_day is None) == (per_node_day is None):
        raise InputError("reliability.failure_rate", (per_gpu_day, per_node_day),
                         "exactly one of per_gpu_day or per_node_day")
    if per_gpu_day is not None:
        rate_per_day = gpus * require_positive("reliability.failures_per_gpu_day", per_gpu_day)
    else:
        rate_per_day = nodes * require_positive("reliability.failures_per_node_day", per_node_day)
    return DAY_S / rate_per_day


def young_interval_s(checkpoint_s: float, mtbf_s: float) -> float:
    """Young (1974): T = sqrt(2 C M)."""
    return math.sqrt(2 * checkpoint_s * mtbf_s)


def daly_interval_s(checkpoint_s: float, mtbf_s: float) -> float:
    """Daly (2006) eq. 37, the higher-order optimum; T = M when C >= 2M."""
    if checkpoint_s >= 2 * mtbf_s:
        return mtbf_s
    x = checkpoint_s / (2 * mtbf_s)
    return math.sqrt(2 * checkpoint_s * mtbf_s) * (1 + math.sqrt(x) / 3 + x / 9) - checkpoint_s


def goodput(*, interval_s: float, stall_s: float, restart_s: float, mtbf_s: float,
            persist_s: float = 0.0) -> tuple[float, Overheads]:
    """Goodput = T / W with W = P + (P/M)(P/2 + L + R), P = T + C (first-order expected loss)."""
    t = require_positive("reliability.checkpoint_interval_s", interval_s)
    c = require_positive("storage.checkpoint_stall_s", stall_s, allow_zero=True)
    r = require_positive("reliability.restart_s", restart_s, allow_zero=True)
    m = require_positive("reliability.job_mtbf_s", mtbf_s)
    lag = require_positive("storage.checkpoint_persist_s", persist_s, allow_zero=True)
    period = t + c
    failures = period / m
    lost, restart = failures * (period / 2 + lag), failures * r
    wall = period + lost + restart
    return t / wall, Overheads(checkpoint=c / wall, lost_work=lost / wall, restart=restart / wall)


def plan_reliability(
    *,
    gpus: int,
    nodes: int,
    checkpoint_stall_s: float,
    checkpoint_persist_s: float = 0.0,
    restart_s: float | None = None,
    failure_rate: str | None = None,
    per_gpu_day: float | None = None,
    per_node_day: float | None = None,
    checkpoint_interval_s: float | None = None,
    interval_rule: str = "daly",
    time_to_train_s: float | None = None,
) -> ReliabilityLayer:
    """The reliability layer. The failure rate is given (per GPU-day or per node-day), or a named
    published rate (`failure_rate`, a key of reliability.yaml), or the default published rate.

    `checkpoint_stall_s` is the time training stops per checkpoint (the write for synchronous
    checkpoints, the device->host copy for asynchronous ones); `checkpoint_persist_s` the
    background write of an asynchronous checkpoint (the interval is never shorter than it).
    """
    data = package_yaml("reliability.yaml")
    assumptions = []
    formulas = {"reliability.job_mtbf_s": "1 / (gpus x r_gpu) | 1 / (nodes x r_node)",
                "reliability.goodput": "T / (T + C + (P/M)(P/2 + L) + (P/M) R), P = T + C "
                                       "(first-order expected loss, Young 1974 / Daly 2006)"}
    if per_gpu_day is None and per_node_day is None:
        rates = failure_rates()
        name = failure_rate or str(data["default_failure_rate"])
        if name not in rates:
            raise InputError("reliability.failure_rate", name, "one of " + ", ".join(sorted(rates)))
        rate = rates[name]
        per_gpu_day, per_node_day = rate.per_gpu_day, None if rate.per_gpu_day else rate.per_node_day
        if failure_rate is None:
            assumptions.append(assume("reliability.failure_rate", name,
                                      f"{data['default_failure_rate_why']} ({rate.source})"))
        label = f"{name}: {rate.hardware}"
    else:
        label = "given"
    mtbf = job_mtbf_s(gpus=gpus, nodes=nodes, per_gpu_day=per_gpu_day, per_node_day=per_node_day)
    if restart_s is None:
        restart_s = float(data["restart"]["restart_s"])
        assumptions.append(assume("reliability.restart_s", restart_s, str(data["restart"]["why"])))
    stall = require_positive("storage.checkpoint_stall_s", checkpoint_stall_s, allow_zero=True)
    persist = require_positive("storage.checkpoint_persist_s", checkpoint_persist_s, allow_zero=True)
    if checkpoint_interval_s is not None:
        interval, rule = require_positive("storage.checkpoint_interval_s", checkpoint_interval_s), "given"
    else:
        if interval_rule not in INTERVAL_RULES:
            raise InputError("reliability.interval_rule", interval_rule,
                             "one of " + ", ".join(INTERVAL_RULES))
        # A zero stall would make the optimum zero; one second stands for "negligible".
        c = max(stall, 1.0)
        interval = daly_interval_s(c, mtbf) if interval_rule == "daly" else young_interval_s(c, mtbf)
        rule = interval_rule
        formulas["storage.checkpoint_interval_s"] = (
            "Daly 2006 eq. 37: sqrt(2CM)[1 + sqrt(C/2M)/3 + (C/2M)/9] - C" if rule == "daly"
            else "Young 1974: sqrt(2CM)")
        if interval < persist:
            interval, rule = persist, rule + " (raised to the asynchronous persist time)"
    ratio, overheads = goodput(interval_s=interval, stall_s=stall, restart_s=restart_s, mtbf_s=mtbf,
                               persist_s=persist)
    adjusted = interruptions = None
    if time_to_train_s is not None:
        ttt = require_positive("objective.time_to_train_s", time_to_train_s)
        adjusted = ttt / ratio
        interruptions = adjusted / mtbf
        formulas["objective.goodput_adjusted_time_to_train_s"] = "time_to_train_s / goodput"
    return ReliabilityLayer(
        job_mtbf_s=mtbf, goodput=ratio, failures_per_day=DAY_S / mtbf, failure_rate=label,
        checkpoint_interval_s=interval, interval_rule=rule, checkpoint_stall_s=stall, restart_s=restart_s,
        overheads=overheads, expected_interruptions=interruptions,
        goodput_adjusted_time_to_train_s=adjusted, assumptions=assumptions, formulas=formulas)
