"""Operations load (seed 000 spares/RMA/incidents; seed 001 'what healthy looks like'): failures
per week by part with the source of each rate, a Poisson spares pool, RMA and incident volume,
per layer and actor from the operating boundary."""

from __future__ import annotations

import math

import pytest
from engagement_builders import CHAT, H100_4096, compiled
from hypothesis import given
from hypothesis import strategies as st

from workload_compiler.engagement.operations import poisson_spares

LLAMA3_PER_GPU_DAY = 419 / (16384 * 54)


def test_poisson_quantile_matches_the_cdf() -> None:
    # P(X <= 3) = 0.981, P(X <= 4) = 0.996 for a mean of 1
    assert poisson_spares(1.0, 0.99) == 4
    assert poisson_spares(1.0, 0.98) == 3
    assert poisson_spares(0.0, 0.99) == 0
    # large means do not underflow: the quantile sits near mean + 2.33 sigma
    assert abs(poisson_spares(5000.0, 0.99) - (5000 + 2.326 * math.sqrt(5000))) < 5


@given(st.floats(0.01, 200.0), st.floats(0.5, 0.999))
def test_more_failures_or_a_higher_service_level_never_need_fewer_spares(mean: float, level: float) -> None:
    assert poisson_spares(mean * 1.5, level) >= poisson_spares(mean, level)
    assert poisson_spares(mean, min(level + 0.0005, 0.9999)) >= poisson_spares(mean, level)


def test_the_4096_gpu_fleet_load_with_sources() -> None:
    ops = compiled(H100_4096).operations
    assert ops is not None and ops.fleet_gpus == 4096
    assert ops.failure_rate_per_gpu_day == pytest.approx(4.736e-4, rel=1e-3)   # Llama 3, via the reliability layer
    assert ops.failures_per_week == pytest.approx(4096 * 7 * 4.736e-4, rel=1e-3)
    parts = {p.part: p for p in ops.parts}
    assert {"GPU", "HBM", "NIC", "PSU", "switch / cable / optic"} <= set(parts)
    assert sum(p.failures_per_week for p in ops.parts) == pytest.approx(ops.failures_per_week)
    assert parts["GPU"].failures_per_week == pytest.approx(196 / 419 * ops.failures_per_week)
    assert all("arXiv 2407.21783" in p.source for p in ops.parts)
    restore_days = 5.0
    assert ops.restore_time_s == restore_days * 86400
    lam = parts["GPU"].rate_per_gpu_day * 4096 * restore_days
    assert parts["GPU"].spares == poisson_spares(lam, 0.99)
    assert ops.rma_per_year == pytest.approx(sum(p.rma_per_year or 0 for p in ops.parts))
    assert parts["software"].rma_per_year is None and parts["software"].spares is None
    # per actor from the boundary: Compute RMA proposed to the OEM, NIC spares still TO DEFINE
    assert parts["GPU"].rma_actor == "OEM" and parts["GPU"].spares_actor == "Proposed operator"
    assert parts["NIC"].spares_actor == "TO DEFINE"
    by_actor = {(a.layer, a.function, a.actor): a.per_week for a in ops.by_actor}
    assert by_actor[("Fabric", "Incidents", "Proposed operator")] == pytest.approx(
        parts["NIC"].failures_per_week + parts["switch / cable / optic"].failures_per_week)
    assert ops.manual_interventions_per_week == pytest.approx(ops.incidents_per_week * 3 / 419)
    assert ops.on_call_time_per_week_s is None and any("triage_time" in n for n in ops.notes)


def test_a_service_without_a_reliability_layer_uses_the_default_published_rate() -> None:
    ops = compiled(CHAT).operations
    assert ops is not None
    assert ops.failure_rate_per_gpu_day == pytest.approx(LLAMA3_PER_GPU_DAY, rel=1e-3)
    assert "llama3_h100" in ops.failure_rate_source
    assert ops.failures_per_week == pytest.approx(ops.fleet_gpus * 7 * LLAMA3_PER_GPU_DAY, rel=1e-3)
