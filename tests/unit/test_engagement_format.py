"""The engagement tables (workload sheet, acceptance tests, operations) format through the one
formatter, report/format.py, by the unit each value declares: a parameter count reads in words,
not as bytes ("174.57 B"), and a byte count below a kilobyte is not printed twice ("4.00 B (4.00 B)")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from workload_compiler import compile_workload
from workload_compiler.report.engagement_tables import fmt
from workload_compiler.report.markdown import render_markdown

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _row(markdown: str, item: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith(f"| {item} |"))


def test_sheet_rows_read_in_their_units() -> None:
    md = render_markdown(compile_workload(EXAMPLES / "gpt3-175b-a100.yaml"), detail=True)
    assert "billion" in _row(md, "parameters")              # GPT-3: 174.6 billion parameters
    assert _row(md, "bytes per token").split("|")[2].strip() == "2 B"   # uint16 tokens (vocabulary 50,257)
    assert "trillion" not in _row(md, "training tokens") and "billion tokens" in _row(md, "training tokens")


# every bundled workload (the offers file is a supplier list, not a workload)
@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml") if not p.name.startswith("offers-")))
def test_no_byte_count_is_printed_twice(example: str) -> None:
    md = render_markdown(compile_workload(EXAMPLES / example), detail=True)
    assert not re.search(r"(\d[\d.,]*) B \(\1 B\)", md), example


def test_byte_rates_keep_four_digits_for_acceptance_thresholds() -> None:
    assert fmt(338.2e9, "B/s") == "338.2 GB/s"
    assert fmt(16.95e6, "B/s") == "16.95 MB/s"
    assert fmt(0.99, "fraction") == "99.0%"
    assert fmt(None, "B/s") == "—"
