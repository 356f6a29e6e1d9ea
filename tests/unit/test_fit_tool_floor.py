"""tools/fit_training.py --floor: the error left when every cell (GPU x kind, or source family x GPU x kind)
gets its own free scale, the bound on what moving whole cells can achieve (the evidence for issue 7's
closing note)."""

from __future__ import annotations

import pytest

from shared_data import tool_module
from workload_compiler.validation.report import Row, mape


def _row(rid: str, ratio: float) -> Row:
    return Row(id=rid, group="g", model="m", gpus=8, layout="", quantity="step_time_s", unit="s",
               published=10.0, predicted=10.0 * ratio)


def test_a_cell_off_by_one_factor_is_removed_whole() -> None:
    rows = [_row("a", 1.2), _row("b", 1.2), _row("c", 0.9)]
    floor = tool_module("fit_training").scale_floor(rows, ["x", "x", "y"])
    assert mape(floor) == pytest.approx(0.0, abs=1e-9)


def test_scatter_inside_a_cell_stays_at_its_least_mape() -> None:
    """x = 0.8 and 1.25: |0.8 s - 1| + |1.25 s - 1| is piecewise linear, least at a kink s = 1 / x: 0.36 at s = 0.8,
    0.5625 at s = 1.25. So the floor is 18% (0.36 / 2), not the 0% a scale per record would give."""
    rows = [_row("a", 0.8), _row("b", 1.25)]
    floor = tool_module("fit_training").scale_floor(rows, ["x", "x"])
    assert mape(floor) == pytest.approx(18.0)
    assert mape(floor) < mape(rows)


def test_scales_carry_to_other_rows_only_where_their_cell_has_one() -> None:
    """The held-out check: a row of a GPU the calibration never ran keeps its prediction."""
    tool = tool_module("fit_training")
    scales = tool.cell_scales([_row("a", 1.25)], ["b200 / Blackwell moe fp8"])
    moved = tool.scaled([_row("h1", 1.0), _row("h2", 1.0)], ["b200 / Blackwell moe fp8", "b300 / Blackwell moe fp8"],
                        scales)
    assert moved[0].predicted == pytest.approx(8.0)      # 10 s x 0.8
    assert moved[1].predicted == pytest.approx(10.0)
