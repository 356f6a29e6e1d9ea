"""Vectorized parallelism search: every valid layout of a GPU count, ranked by step time.

`search` ranks the layouts of one count; `plan_for_deadline` finds the fewest GPUs that meet a
deadline; `fewest_gpus_to_hold` is the count below which no layout can hold the model.
"""

from .capacity import HoldBound, fewest_gpus_to_hold
from .deadline import DeadlinePlan, plan_for_deadline
from .grid import Space, build_space
from .published import best_published_mfu
from .result import PlanResult, PublishedMfu, RankedLayout
from .search import search

__all__ = [
    "DeadlinePlan",
    "HoldBound",
    "PlanResult",
    "PublishedMfu",
    "RankedLayout",
    "Space",
    "best_published_mfu",
    "build_space",
    "fewest_gpus_to_hold",
    "plan_for_deadline",
    "search",
]
