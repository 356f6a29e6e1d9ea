"""Test-wide settings: hypothesis runs derandomized without an example database under CI, so a
saved failing example never makes one run differ from the next (the CI profile); the planner's
on-disk search cache off."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))   # `import shared_data` from any test folder

# The planner's on-disk search cache is off: a test sees the search it runs, never one an earlier
# test (or an earlier run, with other code in memory) left behind. tests/unit/test_search_cache.py
# turns it on in a temporary directory.
os.environ.setdefault("WKC_CACHE", "off")

settings.register_profile("ci", derandomize=True, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))
