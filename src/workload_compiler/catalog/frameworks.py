"""Training framework profiles: catalog/data/frameworks.yaml -> perf.framework.FrameworkProfile.

Every field of a profile is `{value, source}` in the YAML (the framework's code or docs); `extends`
takes another profile's fields first. Names are matched exactly after `normalize` (lower case,
'_' and spaces to '-'), against ids and aliases; an unknown name is an `InputError` listing them.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from ..errors import InputError
from ..perf.framework import FrameworkProfile
from .loader import normalize, package_yaml

FILE = "frameworks.yaml"
_META = {"id", "name", "source", "aliases", "extends"}
_FIELDS = {f.name for f in dataclasses.fields(FrameworkProfile)}
_SOURCED = sorted(set(_FIELDS) - _META)


@dataclasses.dataclass(frozen=True)
class SourcedProfile:
    """A profile and the source of each of its values (field -> citation)."""

    profile: FrameworkProfile
    sources: dict[str, str]


def _value(name: str, raw: Any, where: str) -> Any:
    if not isinstance(raw, dict) or set(raw) != {"value", "source"} or not str(raw["source"]).strip():
        raise ValueError(f"{FILE} {where}.{name}: expected {{value, source}} with a non-empty source")
    v = raw["value"]
    return tuple(int(x) for x in v) if isinstance(v, list) else v


def _parse(entries: list[dict[str, Any]]) -> dict[str, SourcedProfile]:
    by_id = {str(e["id"]): e for e in entries}
    out: dict[str, SourcedProfile] = {}

    def build(pid: str, seen: tuple[str, ...] = ()) -> SourcedProfile:
        if pid in out:
            return out[pid]
        if pid in seen or pid not in by_id:
            raise ValueError(f"{FILE}: profile {pid!r} is unknown or extends itself ({' -> '.join(seen)})")
        e = by_id[pid]
        unknown = set(e) - _META - set(_SOURCED)
        if unknown:
            raise ValueError(f"{FILE} {pid}: unknown fields {sorted(unknown)}; allowed {_SOURCED}")
        base = build(str(e["extends"]), (*seen, pid)) if e.get("extends") else None
        values = {k: getattr(base.profile, k) for k in _SOURCED} if base else {}
        sources = dict(base.sources) if base else {}
        for k in _SOURCED:
            if k in e:
                values[k], sources[k] = _value(k, e[k], pid), str(e[k]["source"])
        missing = [k for k in _SOURCED if k not in values]
        if missing:
            raise ValueError(f"{FILE} {pid}: missing fields {missing} (each needs a value and a source)")
        profile = FrameworkProfile(id=pid, name=str(e["name"]), source=str(e["source"]),
                                   aliases=tuple(str(a) for a in e.get("aliases") or ()), **values)
        out[pid] = SourcedProfile(profile=profile, sources=sources)
        return out[pid]

    for pid in by_id:
        build(pid)
    return out


@functools.cache
def sourced_profiles() -> dict[str, SourcedProfile]:
    """Every profile of the package catalog, by id, with the source of each value."""
    return _parse(list(package_yaml(FILE)["frameworks"]))


@functools.cache
def _names() -> dict[str, str]:
    names: dict[str, str] = {}
    for pid, sp in sourced_profiles().items():
        for name in (pid, *sp.profile.aliases):
            key = normalize(name)
            if names.get(key, pid) != pid:
                raise ValueError(f"{FILE}: name {name!r} is used by {names[key]} and {pid}")
            names[key] = pid
    return names


def framework_names() -> list[str]:
    """Profile ids, sorted."""
    return sorted(sourced_profiles())


def framework_profile(name: str, field: str = "training.framework") -> FrameworkProfile:
    """The profile for an id or alias; an unknown name is an InputError naming the allowed ones."""
    pid = _names().get(normalize(name))
    if pid is None:
        allowed = ", ".join(f"{p} ({', '.join(sourced_profiles()[p].profile.aliases)})" for p in framework_names())
        raise InputError(field, name, f"one of: {allowed}")
    return sourced_profiles()[pid].profile


__all__ = ["SourcedProfile", "framework_names", "framework_profile", "sourced_profiles"]
