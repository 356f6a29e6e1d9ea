"""Units at the boundary: the issue's examples parse, GB and GiB stay apart (seed 003)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workload_compiler.errors import InputError
from workload_compiler.units import (
    counted,
    format_bytes,
    parse_byte_rate,
    parse_bytes,
    parse_count,
    parse_duration,
    parse_power,
    parse_rate,
)


@pytest.mark.parametrize(("text", "value"), [
    ("7B", 7e9), ("405e9", 405e9), ("300B", 300e9), ("1.5M", 1.5e6), ("15T", 15e12), (1024, 1024.0),
    ("300B tokens", 300e9),
])
def test_counts(text: object, value: float) -> None:
    assert parse_count(text) == pytest.approx(value)


@pytest.mark.parametrize(("text", "value"), [
    ("80GiB", 80 * 2**30), ("141 GB", 141e9), ("4 TB", 4e12), ("512MiB", 512 * 2**20), (10, 10.0),
])
def test_bytes(text: object, value: float) -> None:
    assert parse_bytes(text) == pytest.approx(value)


def test_power_duration_rate() -> None:
    assert parse_power("2.5MW") == 2.5e6
    assert parse_power("40kW") == 40e3
    assert parse_duration("30d") == 30 * 86400
    assert parse_duration("24h") == 86400
    assert parse_duration("50ms") == pytest.approx(0.05)
    assert parse_rate("20/s") == 20
    assert parse_rate("1200/min") == 20
    assert parse_byte_rate("250GB/s") == 250e9
    assert parse_byte_rate("2 GiB/s") == 2 * 2**30
    assert parse_byte_rate("36TB/h") == pytest.approx(1e10)


def test_seed_003_weight_memory_units() -> None:
    # Seed 003: 7B parameters at 16 bits = 14 GB, "about 13.04 GiB".
    assert format_bytes(7e9 * 16 / 8) == "14.00 GB (13.04 GiB)"


@pytest.mark.parametrize("bad", ["-5B", "7X", "abc", "", "nan", "inf GB", True])
def test_bad_values_name_the_field(bad: object) -> None:
    with pytest.raises(InputError) as info:
        parse_count(bad, "model.params") if not str(bad).endswith("GB") else parse_bytes(bad, "model.params")
    assert "model.params" in str(info.value)


@given(st.floats(min_value=0, max_value=1e15, allow_nan=False))
def test_bare_numbers_round_trip(x: float) -> None:
    assert math.isclose(parse_count(x), x)
    assert math.isclose(parse_bytes(str(x)), x, rel_tol=1e-12)


def test_counted_is_singular_at_one_and_grouped_in_thousands() -> None:
    assert counted(1, "replica") == "1 replica"
    assert counted(2, "replica") == "2 replicas"
    assert counted(1024, "GPU") == "1,024 GPUs"
    assert counted(0, "node") == "0 nodes"
    assert counted(1.0, "node") == "1 node"
    assert counted(0.6, "node") == "1 node"     # it prints as one
