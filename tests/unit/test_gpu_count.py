"""The spine's choice of a GPU count under a cap (spine/gpu_count.py)."""

from __future__ import annotations

from typing import Any

from workload_compiler.catalog.loader import load_catalog
from workload_compiler.spine.gpu_count import _largest_plannable


class _Found:
    def __init__(self, best: Any) -> None:
        self.best = best


def test_the_walk_down_under_a_cap_searches_no_count_below_the_fewest_that_hold_the_state() -> None:
    """Below the fewest GPUs that hold the model state no layout fits (planner/capacity.py), so the
    walk from the cap down stops there: the 1T example's cap of 256 H100 searched every ladder rung
    down to 8 GPUs before; with 200 GPUs needed to hold the state only 256 is searched."""
    hw = load_catalog().hardware("h100-sxm")
    searched: list[int] = []

    def nothing_fits(n: int) -> Any:
        searched.append(n)
        return _Found(None)

    assert _largest_plannable(256, hw, nothing_fits, 200) is None
    assert searched == [256]
    searched.clear()
    assert _largest_plannable(256, hw, nothing_fits, None) is None and searched == []

    def fits_from_64(n: int) -> Any:
        searched.append(n)
        return _Found(object() if n >= 64 else None)

    searched.clear()
    assert _largest_plannable(256, hw, fits_from_64, 60) == 256 and searched == [256]


def test_under_a_cap_the_finer_rung_above_the_ladder_is_taken_when_it_trains_faster() -> None:
    """A 20 MW hall holds 7,920 GB200 (4 to a tray): the ladder's largest count under it is 6,144
    (3 x 512 trays); 7,168 (7 x 256 trays) also fits under the hall and is taken when its best layout
    is faster (56.5 d against 63.9 d for Llama 3.1 405B on 15T tokens), not when it is slower."""
    from types import SimpleNamespace
    hw = load_catalog().hardware("gb200")
    assert hw.gpus_per_node == 4

    def linear(n: int) -> Any:
        return _Found(SimpleNamespace(tokens_per_s=float(n)))

    assert _largest_plannable(7920, hw, linear, 100) == 7168

    def seven_factors_badly(n: int) -> Any:
        return _Found(SimpleNamespace(tokens_per_s=float(n) * (0.8 if (n // 4) % 7 == 0 else 1.0)))

    assert _largest_plannable(7920, hw, seven_factors_badly, 100) == 6144
    assert _largest_plannable(7000, hw, linear, 100) == 6144     # 7,168 is above the cap
