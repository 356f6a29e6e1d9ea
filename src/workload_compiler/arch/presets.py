"""Model presets: published architectures by id, read from `catalog/data/models/<id>.yaml`.

Each YAML file holds `id`, `source` (the config.json or paper the numbers come from) and `arch`
(the `ModelArch` fields). This is a loader module: it reads package data (through
`catalog.loader.package_yaml`, the package's one YAML reader), and computes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from ..catalog.loader import DATA_DIR, package_yaml
from ..errors import InputError, canonical_id, one_of
from .model import ModelArch

_FOLDER = "models"


@dataclass(frozen=True)
class Preset:
    id: str
    source: str
    arch: ModelArch


def _parse(raw: Any, filename: str) -> Preset:
    if not isinstance(raw, dict) or not {"id", "source", "arch"} <= raw.keys():
        raise ValueError(f"model preset {filename}: needs the keys id, source and arch")
    arch_fields = dict(raw["arch"])
    arch_fields.setdefault("source", raw["source"])
    return Preset(id=str(raw["id"]), source=str(raw["source"]), arch=ModelArch(**arch_fields))


@cache
def _presets() -> dict[str, Preset]:
    found: dict[str, Preset] = {}
    for entry in sorted((DATA_DIR / _FOLDER).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yaml"):
            continue
        preset = _parse(package_yaml(f"{_FOLDER}/{entry.name}"), entry.name)
        if preset.id in found or entry.name != f"{preset.id}.yaml":
            # One file per id, named after it: a duplicate or a misnamed file is our bug.
            raise ValueError(f"model preset {entry.name}: id {preset.id!r} is duplicated or misnamed")
        found[preset.id] = preset
    return found


def list_presets() -> list[str]:
    """The preset ids, sorted."""
    return sorted(_presets())


def _get(preset_id: str, field: str) -> Preset:
    presets = _presets()
    key = canonical_id(preset_id) if isinstance(preset_id, str) else preset_id
    if key not in presets:
        raise InputError(field, preset_id, one_of(preset_id, presets))
    return presets[key]


def preset_arch(preset_id: str, field: str = "model.preset") -> ModelArch:
    """The architecture of a preset; an unknown id is an `InputError` listing the known ones."""
    return _get(preset_id, field).arch


def preset_source(preset_id: str, field: str = "model.preset") -> str:
    """Where the preset's numbers come from (a config.json, a paper's table)."""
    return _get(preset_id, field).source
