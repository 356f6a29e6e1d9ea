"""Which tool and which catalog made a result: stored with every saved revision and printed on
every report, so a number can be traced to the code and the data that produced it."""

from __future__ import annotations

import functools
import hashlib
from importlib import metadata

from .catalog.loader import DATA_DIR
from .spine.result import SCHEMA_VERSION


@functools.cache
def tool_version() -> str:
    """The installed package's version ('0.1.0'); 'unknown' when run from a bare source tree."""
    try:
        return metadata.version("workload-compiler")
    except metadata.PackageNotFoundError:
        return "unknown"


@functools.cache
def catalog_version() -> str:
    """'sha256:' + the first 16 hex digits of a hash over every catalog data file (its path
    relative to the data folder, then its bytes), in sorted order: any edit to any number or
    source in the package catalog gives a different version."""
    digest = hashlib.sha256()
    for path in sorted(p for p in DATA_DIR.rglob("*.yaml") if p.is_file()):
        digest.update(path.relative_to(DATA_DIR).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()[:16]


def versions() -> dict[str, str]:
    return {"tool_version": tool_version(), "catalog_version": catalog_version(), "schema_version": SCHEMA_VERSION}


__all__ = ["catalog_version", "tool_version", "versions"]
