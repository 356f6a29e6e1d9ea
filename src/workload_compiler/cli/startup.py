"""Process settings for the `wkc` command, applied before anything heavy is imported.

Start-up is part of every command's wall time (issue 12's goal: `wkc --help` <= 0.3 s, a bundled
example <= 1 s). Two costs are not our code's:

- The cyclic garbage collector. Importing the package creates ~10^5 long-lived objects (pydantic
  models and their schemas, the catalog); at the default gen-0 threshold (700 allocations) the
  collector runs hundreds of times over them, and each full collection walks all of them, for
  nothing to free. A gen-0 threshold of 20,000 (the older generations as in CPython) cut
  `wkc compile examples/llama3.3-70b-chat.yaml` from 0.88 to 0.79 s median, 0.76 to 0.69 s best
  (15 runs each, interleaved, 2 cores; `benchmarks/bench_compile.py` measures every example).
  Collections still run; a long-lived `wkc serve` keeps collecting cycles.
- pydantic's plugin discovery: the first model it builds scans the entry points of every
  installed distribution for pydantic plugins (`pydantic/plugin/_loader.py`), whose cost grows
  with the environment. The command uses none, so it is off unless the user's environment
  sets `PYDANTIC_DISABLE_PLUGINS` (an empty value turns plugins back on).
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
