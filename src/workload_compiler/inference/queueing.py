"""Waiting times under Poisson arrivals: why TTFT under load sits far above the prefill time.

A replica is c "slots" (sequences the KV cache and the batch limit hold at once); a request holds
one for its whole life S = TTFT + OSL * TPOT. Waiting for a slot is an M/D/c queue; the prompt
then waits for the prefill budget of the steps (an M/D/1 queue of prompts). Approximations:

  Erlang C      P(wait) of M/M/c by the Erlang-B recursion B_k = a B_{k-1} / (k + a B_{k-1}),
                C = B_c / (1 - rho (1 - B_c)),  a = lambda S, rho = a / c  (Kleinrock 1975, Vol. 1)
  M/D/c         waits of M/M/c times (1 + c_s^2)/2 = 1/2 for deterministic service
                (Allen-Cunneen; Cosmetatos 1976), exponential tail:
                P(W > t) = C exp(-2 (c/S - lambda) t)
  M/D/1         mean wait rho s / (2 (1 - rho)) (Pollaczek-Khinchine); tail
                P(W > t) = rho exp(-rho t / E[W])  (exponential waiting-time approximation)

All functions are vectorized over NumPy arrays; a saturated queue (rho >= 1) waits forever (inf),
which the search reads as "infeasible at this load", never as a NaN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..perf.layout import FloatArray

_MAX_EXACT_SERVERS = 4096


def erlang_c(servers: Any, offered_load: Any) -> FloatArray:
    """Probability that an arrival waits in M/M/c (c = servers, a = lambda * S erlangs)."""
    c = np.maximum(np.floor(np.asarray(servers, dtype=np.float64)), 1.0)
    a = np.asarray(offered_load, dtype=np.float64)
    c, a = np.broadcast_arrays(c, a)
    top = int(min(np.max(c), _MAX_EXACT_SERVERS))
    b = np.ones_like(a)
    for k in range(1, top + 1):
        nxt = a * b / (k + a * b)
        b = np.where(k <= c, nxt, b)
    rho = a / c
    with np.errstate(divide="ignore", invalid="ignore"):
        pc = b / (1.0 - rho * (1.0 - b))
    return np.asarray(np.where(rho >= 1.0, 1.0, np.clip(pc, 0.0, 1.0)))


def mdc_wait_quantile(rate: Any, service_s: Any, servers: Any, q: float) -> FloatArray:
    """q-quantile of the wait for a slot in M/D/c (0 when the chance of waiting is below 1-q)."""
    lam = np.asarray(rate, dtype=np.float64)
    s = np.asarray(service_s, dtype=np.float64)
    c = np.maximum(np.floor(np.asarray(servers, dtype=np.float64)), 1.0)
    pw = erlang_c(c, lam * s)
    drain = 2.0 * (c / s - lam)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log(pw / (1.0 - q)) / drain
    t = np.where(pw > 1.0 - q, t, 0.0)
    return np.asarray(np.where(lam * s >= c, np.inf, np.maximum(t, 0.0)))


def md1_wait(rate: Any, service_s: Any) -> FloatArray:
    """Mean wait in M/D/1: rho s / (2 (1 - rho)); inf when rho >= 1."""
    lam, s = np.asarray(rate, dtype=np.float64), np.asarray(service_s, dtype=np.float64)
    rho = lam * s
    with np.errstate(divide="ignore", invalid="ignore"):
        w = rho * s / (2.0 * (1.0 - rho))
    return np.asarray(np.where(rho >= 1.0, np.inf, w))


def md1_wait_quantile(rate: Any, service_s: Any, q: float) -> FloatArray:
    """q-quantile of the M/D/1 wait: (E[W] / rho) ln(rho / (1 - q)) when rho > 1 - q, else 0."""
    lam, s = np.asarray(rate, dtype=np.float64), np.asarray(service_s, dtype=np.float64)
    rho = lam * s
    mean = md1_wait(lam, s)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / rho * np.log(rho / (1.0 - q))
    t = np.where(rho > 1.0 - q, t, 0.0)
    return np.asarray(np.where(rho >= 1.0, np.inf, np.maximum(t, 0.0)))


def z_score(q: float) -> float:
    """Upper standard-normal quantile for the percentiles the intake accepts."""
    table = {0.5: 0.0, 0.9: 1.2816, 0.95: 1.6449, 0.99: 2.3263, 0.999: 3.0902}
    return table.get(round(q, 3), 2.3263)


def busy_quantile(mean_busy: Any, servers: Any, q: float) -> FloatArray:
    """q-quantile of the number of busy slots: Poisson (M/G/inf) by its normal approximation
    mean + z sqrt(mean), capped at the slots."""
    m = np.asarray(mean_busy, dtype=np.float64)
    return np.asarray(np.minimum(m + z_score(q) * np.sqrt(m), np.asarray(servers, dtype=np.float64)))
