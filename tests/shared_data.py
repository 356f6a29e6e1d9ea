"""Where the tests find `../shared` (calibration records, reference data), and what happens when
it is missing.

The data lives beside the repository (`<repo>/../shared`), or where `$WKC_SHARED_DIR` (the whole
folder) or `$WKC_CALIBRATION_DIR` (the calibration folder alone) point. A test that needs it and
does not find it is skipped on a developer's machine, but fails when `CI` is set: a fresh machine
that silently skips the calibration tests hides a broken install.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def tool_module(name: str) -> ModuleType:
    """A script of tools/ loaded as a module (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shared_dir() -> Path:
    """`$WKC_SHARED_DIR`, else `<repo>/../shared`."""
    env = os.environ.get("WKC_SHARED_DIR")
    return Path(env) if env else REPO_ROOT.parent / "shared"


def calibration_dir() -> Path:
    """`$WKC_CALIBRATION_DIR`, else `shared_dir()/calibration`."""
    env = os.environ.get("WKC_CALIBRATION_DIR")
    return Path(env) if env else shared_dir() / "calibration"


def reference_dir() -> Path:
    return shared_dir() / "reference"


def require(path: Path) -> Path:
    """`path` if it exists; otherwise skip the test, or fail it under CI."""
    if path.exists():
        return path
    message = f"shared data not found: {path} (set WKC_SHARED_DIR or WKC_CALIBRATION_DIR)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
    raise AssertionError("unreachable")  # pytest.skip raises


def calibration_file(name: str) -> Path:
    """A file of the calibration folder, required (see `require`)."""
    return require(calibration_dir() / name)
