"""Process settings for the `wkc` command, applied before anything heavy is imported.

Start-up is part of every command's wall time (issue 12's goal: `wkc --help` <= 0.3 s, a bundled
example <= 1 s). Two costs are not our code's:

- The cyclic garbage collector. Importing the package creates ~10^5 long-lived objects (pydantic
  models and their schemas, the catalog); at the default gen-0 threshold (700 allocations) the
  collector runs hundreds of times over them, and each full collection walks all of them, for
  nothing to free. The gen-0 threshold is raised to 20,000 (the older generations' thresholds
  unchanged). Collections still run; a long-lived `wkc serve` keeps collecting cycles.
- pydantic's plugin discovery: the first model it builds scans the entry points of every
  installed distribution for pydantic plugins (`pydantic/plugin/_loader.py`), whose cost grows
  with the environment. The command uses none, so it is off unless the user's environment
  sets `PYDANTIC_DISABLE_PLUGINS` (an empty value turns plugins back on).

Measured together (9 runs each, interleaved with the code before them, 2 cores): `wkc compile`
of examples/gpt3-175b-a100.yaml 1.14 -> 0.83 s median, examples/llama3-70b-plan.yaml 1.05 ->
0.86 s; `benchmarks/bench_compile.py` measures every example.
"""

from __future__ import annotations

import gc
import os

GEN0_THRESHOLD = 20_000


def tune_process() -> None:
    """Apply the settings above (idempotent)."""
    gen0, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(max(GEN0_THRESHOLD, gen0), gen1, gen2)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


__all__ = ["GEN0_THRESHOLD", "tune_process"]
