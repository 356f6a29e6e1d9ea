"""A user's path checked as a directory: every way the file system can refuse a name is an answer.

`Path.is_dir()` returns False for a missing path but raises for a name the file system cannot
hold (ENAMETOOLONG, a loop of links): a fuzzed 5,000-character `--fleet` or `catalog_dir` must be
an InputError naming the field, never an OSError.
"""

from __future__ import annotations

from pathlib import Path

from .errors import InputError


def is_directory(path: str | Path, field: str) -> bool:
    """Whether `path` is an existing directory; a name the file system refuses raises InputError."""
    try:
        return Path(path).is_dir()
    except OSError as exc:
        raise InputError(field, str(path), f"a path the file system can read ({exc.strerror or exc})") from None


def existing_directory(path: str | Path, field: str, wanted: str) -> Path:
    """`path` as a Path when it is an existing directory, else InputError(field, path, wanted)."""
    if not is_directory(path, field):
        raise InputError(field, str(path), wanted)
    return Path(path)


__all__ = ["existing_directory", "is_directory"]
