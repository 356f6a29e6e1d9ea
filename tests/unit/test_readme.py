"""The README's Python API snippet runs as written (a doctest, from the repository root)."""

from __future__ import annotations

import doctest
import os

from shared_data import REPO_ROOT


def test_readme_python_snippet_runs() -> None:
    cwd = os.getcwd()
    os.chdir(REPO_ROOT)   # the snippet's paths are relative to the repository, as a user runs it
    try:
        result = doctest.testfile(str(REPO_ROOT / "README.md"), module_relative=False,
                                  optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    finally:
        os.chdir(cwd)
    assert result.attempted >= 6 and result.failed == 0
