"""The peak of stored activations on a pipeline rank against a step-by-step replay of Megatron-Core's
interleaved 1F1B (schedules.py: warm-up (pp - r - 1) * 2 + (vp - 1) * pp forwards, then one forward
and one backward, forwards in groups of pp micro-batches per chunk, backwards from the last chunk)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from workload_compiler.perf.schedule_peak import chunks_in_flight, stored_layer_microbatches


def replay_peak(pp: int, vp: int, rank: int, micro: int, chunk_layers: list[int]) -> int:
    """Largest sum of layers over alive chunk micro-batches, replaying the schedule op by op."""
    total = micro * vp
    if vp == 1:
        return min(pp - rank, micro) * chunk_layers[0]
    warmup = min((pp - rank - 1) * 2 + (vp - 1) * pp, total)

    def fwd_chunk(k: int) -> int:
        return (k // pp) % vp

    def bwd_chunk(k: int) -> int:
        return vp - 1 - (k // pp) % vp

    alive = peak = 0
    for k in range(warmup):
        alive += chunk_layers[fwd_chunk(k)]
        peak = max(peak, alive)
    for j in range(total - warmup):
        alive += chunk_layers[fwd_chunk(warmup + j)]
        peak = max(peak, alive)
        alive -= chunk_layers[bwd_chunk(j)]
    return peak


CASES = [(pp, vp, m_per, rank, lead, rest)
         for pp, vp, m_per in itertools.product((2, 4, 8, 16), (2, 3, 4, 8), (1, 2, 3))
         for rank in {0, 1, pp - 1}
         for lead, rest in ((0, 1), (1, 1), (2, 1), (3, 2), (1, 3), (4, 4))]


@pytest.mark.parametrize(("pp", "vp", "m_per", "rank", "lead", "rest"), CASES)
def test_peak_matches_the_replayed_schedule(pp: int, vp: int, m_per: int, rank: int, lead: int, rest: int) -> None:
    micro = m_per * pp          # Megatron-Core's interleaving needs m to be a multiple of pp (N = pp)
    chunks = [lead] + [rest] * (vp - 1)
    pp_a, vp_a, m_a = np.asarray(float(pp)), np.asarray(float(vp)), np.asarray(float(micro))
    got = stored_layer_microbatches(pp_a, vp_a, chunks_in_flight(pp_a, vp_a, float(rank), m_a), m_a,
                                    np.asarray(float(sum(chunks))), np.asarray(float(lead)))
    assert float(got) == replay_peak(pp, vp, rank, micro, chunks)


def test_llama3_405b_schedule_keeps_16_microbatches_of_each_layer() -> None:
    """Llama 3 405B (arXiv:2407.21783 §3.3.2, Table 4): pp 16, one layer per chunk, chunk 0 of rank 0
    the embedding alone (vp 8: 126 layers + embedding + loss = 128 chunks); 32 micro-batches at 8,192
    GPUs. 143 chunk micro-batches are alive on rank 0 at its peak, 31 of them the empty chunk 0."""
    f = chunks_in_flight(np.asarray(16.0), np.asarray(8.0), 0.0, np.asarray(32.0))
    assert float(f) == 143
    got = stored_layer_microbatches(np.asarray(16.0), np.asarray(8.0), f, np.asarray(32.0),
                                    np.asarray(7.0), np.asarray(0.0))
    assert float(got) == 112 == replay_peak(16, 8, 0, 32, [0] + [1] * 7)


def test_uniform_chunks_reduce_to_chunks_in_flight_times_chunk_layers() -> None:
    """Equal chunks: F x n / vp (Korthikanti et al. 2022 §4.2.3), whatever the schedule's order."""
    pp, vp, micro = np.asarray([4.0, 8.0]), np.asarray([2.0, 4.0]), np.asarray([8.0, 16.0])
    n = vp * 3.0
    f = chunks_in_flight(pp, vp, 0.0, micro)
    assert np.allclose(stored_layer_microbatches(pp, vp, f, micro, n, n / vp), f * 3.0)
