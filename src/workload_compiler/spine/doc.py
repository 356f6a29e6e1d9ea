"""The base of every typed result section: a pydantic model that forbids unknown keys.

It lives apart from spine/result.py so that the section models of other packages (fabric/,
facility/, cost/, sizing/, engagement/, generic/ ...) can subclass it while `SystemSpec` imports them.

`DictView` lets code written when the layers were plain dicts keep reading them
(`spec.facility["it_power_w"]`, `spec.compute.get("gpus")`); new code reads attributes.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


def _plain(value: Any) -> Any:
    """A value as the dict-shaped document held it: models as mappings, lists of models as lists
    of mappings (so `spec.software["readiness"][0]["id"]` still reads)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def plain(section: Any) -> dict[str, Any]:
    """A section as a mapping, whatever it is: a typed section's dump, a mapping as is, {} for
    None (for code that reads sections by key)."""
    if isinstance(section, BaseModel):
        return section.model_dump()
    return dict(section) if isinstance(section, dict) else {}


class DictView:
    """Read access by key, as when the layers were plain dicts: `section["key"]`,
    `section.get("key", default)`, `"key" in section`. A nested section comes back as a mapping
    (a copy: write through the attributes)."""

    def __getitem__(self, key: str) -> Any:
        if key in type(self).model_fields or key in (self.model_extra or {}):  # type: ignore[attr-defined]
            return _plain(getattr(self, key))
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key, _ABSENT) is not _ABSENT


_ABSENT = object()


class Doc(DictView, BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


__all__ = ["DictView", "Doc", "plain"]
