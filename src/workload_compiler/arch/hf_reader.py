"""Typed access to one parsed config.json: errors that name the key (arch/hf_config.py, hf_hybrid.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError

FIELD = "model.hf_config"


class ConfigReader:
    """Typed access to one config dict, with errors that name the key."""

    def __init__(self, cfg: Mapping[str, Any], keys: Mapping[str, str], origin: str, arch: str) -> None:
        self.cfg, self.keys, self.origin, self.arch = cfg, keys, origin, arch

    def lacks(self, key: str) -> InputError:
        return InputError(FIELD, self.origin, f"config.json lacks {key!r} (required for {self.arch})")

    def raw(self, key: str) -> Any:
        return self.cfg.get(key)

    def int_(self, ours: str, default: int | None = None) -> int:
        key = self.keys.get(ours)
        value = self.cfg.get(key) if key else None
        if value is None:
            if default is None:
                raise self.lacks(key or ours)
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise InputError(FIELD, self.origin, f"config.json key {key!r} must be an integer, got {value!r}")
        return int(value)
