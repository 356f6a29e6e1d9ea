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
peaks at the largest c0(j), which lies on a breakpoint of the two counts within one period. Without
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


def _first_chunk_alive(f: FloatArray, j: FloatArray, n_group: FloatArray, vp: FloatArray,
                       micro: FloatArray) -> FloatArray:
    """c0 after steady forward j: chunk-0 forwards among the first f + j minus backwards among j."""
    period = n_group * vp

    def forwards(x: FloatArray) -> FloatArray:
        return np.asarray(np.floor(x / period) * n_group + np.minimum(np.mod(x, period), n_group))

    def backwards(x: FloatArray) -> FloatArray:
        return np.asarray(np.floor(x / period) * n_group
                          + np.maximum(np.mod(x, period) - (vp - 1.0) * n_group, 0.0))

    return np.asarray(np.clip(forwards(f + j) - backwards(j), 0.0, micro))


def stored_layer_microbatches(pp: FloatArray, vp: FloatArray, rank: FloatArray | float, micro: FloatArray,
                              layers: FloatArray, lead: FloatArray) -> FloatArray:
    """Layer-micro-batches of activations the rank stores at its peak (formula in the module doc)."""
    f8 = np.float64
    pp, vp, micro = (np.asarray(x, dtype=f8) for x in (pp, vp, micro))
    layers, lead = np.asarray(layers, dtype=f8), np.asarray(lead, dtype=f8)
    f = chunks_in_flight(pp, vp, rank, micro)
    inter = vp > 1.0
    lead = np.where(inter, np.clip(lead, 0.0, layers), layers)
    avg = np.where(inter, (layers - lead) / np.maximum(vp - 1.0, 1.0), 0.0)
    n_group = np.maximum(pp, 1.0)
    period = n_group * vp
    steady = np.maximum(micro * vp - f, 0.0)
    zero = np.zeros_like(f)
    c0_start = _first_chunk_alive(f, zero, n_group, vp, micro)
    c0_max = c0_start
    for j in (np.mod(-f, period), np.mod(n_group - f, period), (vp - 1.0) * n_group):
        jj = np.clip(j, 0.0, np.maximum(steady - 1.0, 0.0))
        c0_max = np.maximum(c0_max, _first_chunk_alive(f, jj, n_group, vp, micro))
    c0 = np.where(lead > avg, c0_max, c0_start)
    inter_total = f * avg + c0 * (lead - avg)
    return np.asarray(np.where(inter, inter_total, f * layers), dtype=f8)


__all__ = ["chunks_in_flight", "stored_layer_microbatches"]
