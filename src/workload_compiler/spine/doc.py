"""The base of every typed result section: a pydantic model that forbids unknown keys.

It lives apart from spine/result.py so that the section models of other packages (fabric/,
facility/, cost/ ...) can subclass it while `SystemSpec` imports them.

`DictView` lets code written when the layers were plain dicts keep reading them
(`spec.facility["it_power_w"]`, `spec.compute.get("gpus")`); new code reads attributes.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class DictView:
    """Read access by key: `section["key"]`, `section.get("key", default)`, `"key" in section`."""

    def __getitem__(self, key: str) -> Any:
        if key in type(self).model_fields or key in (self.model_extra or {}):  # type: ignore[attr-defined]
            return getattr(self, key)
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
    model_config = ConfigDict(extra="forbid")


__all__ = ["DictView", "Doc"]
