"""Queueing formulas against their closed forms (Kleinrock, Queueing Systems Vol. 1, 1975)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_compiler.inference.queueing import (
    busy_quantile,
    erlang_c,
    md1_wait,
    md1_wait_quantile,
    mdc_wait_quantile,
    z_score,
)


@settings(max_examples=30, deadline=None)
@given(rho=st.floats(0.01, 0.99))
def test_erlang_c_with_one_server_is_the_utilization(rho: float) -> None:
    """M/M/1: P(wait) = rho."""
    assert float(erlang_c(1, rho)) == pytest.approx(rho, rel=1e-9)


def test_erlang_c_two_servers_closed_form() -> None:
    """M/M/2: C = 2 rho^2 / (1 + rho), a = 2 rho."""
    rho = 0.6
    assert float(erlang_c(2, 2 * rho)) == pytest.approx(2 * rho**2 / (1 + rho), rel=1e-9)


def test_erlang_c_textbook_value() -> None:
    """c = 10 servers, a = 8 erlangs: C = 0.4092 (standard Erlang-C table)."""
    assert float(erlang_c(10, 8.0)) == pytest.approx(0.4092, abs=5e-4)


def test_md1_mean_wait_is_pollaczek_khinchine() -> None:
    lam, s = 0.5, 1.0
    assert float(md1_wait(lam, s)) == pytest.approx(0.5 * 1.0 / (2 * 0.5))


def test_saturation_waits_forever_not_nan() -> None:
    assert math.isinf(float(md1_wait(1.2, 1.0)))
    assert math.isinf(float(md1_wait_quantile(1.0, 1.0, 0.99)))
    assert math.isinf(float(mdc_wait_quantile(10.0, 1.0, 8, 0.99)))


def test_waits_grow_with_load_and_vanish_with_many_slots() -> None:
    rates = np.array([1.0, 4.0, 7.0, 7.9])
    w = mdc_wait_quantile(rates, 1.0, 8, 0.99)
    assert np.all(np.diff(w) >= 0) and w[-1] > 0
    assert float(mdc_wait_quantile(50.0, 1.0, 256, 0.99)) == 0.0


def test_busy_slots_tail_is_capped_by_the_slots() -> None:
    z99 = NormalDist().inv_cdf(0.99)   # 2.3263..., independent of queueing.z_score's table
    assert float(busy_quantile(100.0, 1000.0, 0.99)) == pytest.approx(100 + z99 * 10, rel=1e-4)
    assert float(busy_quantile(100.0, 105.0, 0.99)) == 105.0


@pytest.mark.parametrize("q", [0.5, 0.9, 0.95, 0.99, 0.999])
def test_z_score_table_is_the_normal_quantile(q: float) -> None:
    """The tabulated upper quantiles agree with the standard normal's inverse CDF (4 decimals)."""
    assert z_score(q) == pytest.approx(NormalDist().inv_cdf(q), abs=1e-4)
