"""Activations a pipeline rank holds at its peak: model chunks in flight, weighted by their layers.

Megatron-Core's interleaved 1F1B (schedules.py `forward_backward_pipelining_with_interleaving`)
runs forwards in groups of N micro-batches per model chunk (N = `microbatch_group_size_per_vp_stage`,
default pp): forward k is chunk (k // N) mod vp, backward k is chunk vp - 1 - (k // N) mod vp. Rank r
warms up with W = (pp - r - 1) * 2 + (vp - 1) * N forwards, then alternates one forward and one
backward, so F = min(W + 1, m vp) chunk micro-batches are alive after each steady forward.

Which chunks they are matters when a rank's chunks differ: Megatron-Core's
`--account-for-embedding-in-pipeline-split` and Llama 3's schedule (arXiv:2407.21783 §3.3.2: "the
first model chunk on the first stage has only the embedding") make chunk 0 light, and chunk 0 is
the one with the most micro-batches in flight. We describe a rank by its decoder layers n and the
layers of its chunk 0 (`lead`); the other vp - 1 chunks share n - lead evenly. Stored layer-
micro-batches are then

    F * avg + c0 * (lead - avg),   avg = (n - lead) / (vp - 1)

with c0 the chunk-0 micro-batches alive. After forward j of the steady phase
c0(j) = fwd0(F + j) - bwd0(j), where among the first x forwards (backwards)
fwd0(x) = (x // Nvp) N + min(x mod Nvp, N) and bwd0(x) = (x // Nvp) N + max(x mod Nvp - (vp - 1) N, 0).
A light chunk 0 (lead <= avg) peaks at j = 0: the backwards free the heavy chunks first. A heavy one
peaks where the chunk-0 forwards stop or its backwards start (`_chunk0_alive`, closed form). Without
interleaving 1F1B keeps min(pp - r, m) micro-batches of all n layers (Narayanan et al. 2021).
tests/unit/test_schedule_peak.py checks both against a step-by-step replay of the schedule.
"""

from __future__ import annotations

import numpy as np

from .layout import FloatArray


def chunks_in_flight(pp: FloatArray, vp: FloatArray, rank: FloatArray | float, micro: FloatArray) -> FloatArray:
    """F: micro-batches (vp = 1) or chunk micro-batches (vp > 1) alive on the rank at its peak."""
    plain = np.minimum(pp - rank, micro)
    inter = np.minimum((pp - rank - 1.0) * 2.0 + (vp - 1.0) * pp + 1.0, micro * vp)
    return np.asarray(np.where(vp > 1.0, inter, plain), dtype=np.float64)


def _chunk0_alive(f: FloatArray, n_group: FloatArray, vp: FloatArray, micro: FloatArray,
                  heavy: np.ndarray) -> FloatArray:
    """c0 at the peak: at the end of the warm-up for a light chunk 0, else its largest value in
    the steady phase. With P = N vp, F = q P + a and S = m vp - F steady forwards, c0(0) is
    q N + min(a, N); after that c0 rises with the chunk-0 forwards and falls from j_b = (vp - 1) N
    with the chunk-0 backwards: by min(N - a, S - 1) when a < N (the burst already running), else
    by min(j1 + N, j_b, S - 1) - j1 from j1 = P - a (the next burst, which starts before j_b)."""
    period = n_group * vp
    q = np.floor(f / period)
    a = f - q * period
    c0 = q * n_group + np.minimum(a, n_group)
    if np.any(heavy):
        last = micro * vp - f - 1.0
        j1 = period - a
        rise = np.where(a < n_group, np.minimum(n_group - a, last),
                        np.minimum(np.minimum(j1 + n_group, (vp - 1.0) * n_group), last) - j1)
        c0 = c0 + heavy * np.maximum(rise, 0.0)
    return np.asarray(np.minimum(c0, micro))


def stored_layer_microbatches(pp: FloatArray, vp: FloatArray, flight: FloatArray, micro: FloatArray,
                              layers: FloatArray, lead: FloatArray) -> FloatArray:
    """Layer-micro-batches of activations a rank with `flight` = F (`chunks_in_flight`) stores at its
    peak (formula in the module doc); `lead` is clipped to [0, layers]. Arithmetic only, no
    branches per element: the planner calls this on 1e6 layouts at a time."""
    lead = np.clip(lead, 0.0, layers)
    inter = vp > 1.0
    avg = (layers - lead) / np.maximum(vp - 1.0, 1.0)
    diff = lead - avg
    if not np.any(inter & (diff != 0.0)):      # equal chunks (or none): F n / vp
        return np.asarray(flight * layers / vp, dtype=np.float64)
    c0 = _chunk0_alive(flight, np.maximum(pp, 1.0), vp, micro, diff > 0.0)
    return np.asarray(np.where(inter, flight * avg + c0 * diff, flight * layers), dtype=np.float64)


__all__ = ["chunks_in_flight", "stored_layer_microbatches"]
