"""What changed between two revisions: the inputs first (the intake with its pins applied, as the
person typed it), then every output that moved, old -> new. Pure: two documents in, rows out.

Not compared: `provenance` (shown through `assumptions`, compared by field), and the tool's own
wall time (`search.seconds`) and whether the search was read back from the on-disk cache
(`search.from_cache`): facts of the run, not outputs of the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..intake.pins import apply_pins

IGNORED_OUTPUTS = frozenset({"search.seconds", "search.from_cache"})
_SKIPPED_SECTIONS = frozenset({"provenance", "assumptions", "pins", "intake"})  # pins, intake: the inputs


@dataclass(frozen=True)
class Change:
    path: str
    old: Any
    new: Any

    @property
    def kind(self) -> str:
        return "added" if self.old is None else "removed" if self.new is None else "changed"


@dataclass(frozen=True)
class RevisionDiff:
    inputs: list[Change] = field(default_factory=list)
    outputs: list[Change] = field(default_factory=list)
    assumptions: list[Change] = field(default_factory=list)
    versions: list[Change] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.inputs or self.outputs or self.assumptions or self.versions)


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """{'a': {'b': 1, 'c': [{'d': 2}]}} -> {'a.b': 1, 'a.c[0].d': 2}; lists of plain values stay whole."""
    out: dict[str, Any] = {}
    if isinstance(data, dict):
        if not data and prefix:
            out[prefix] = {}
        for key, value in data.items():
            out.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(data, list) and any(isinstance(v, dict | list) for v in data):
        for i, value in enumerate(data):
            out.update(flatten(value, f"{prefix}[{i}]"))
    else:
        out[prefix] = data
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    return bool(a == b)


def compare(old: dict[str, Any], new: dict[str, Any], ignored: frozenset[str] = frozenset()) -> list[Change]:
    """Every dotted path whose value differs, in the order the paths first appear."""
    a, b = flatten(old), flatten(new)
    paths = list(dict.fromkeys([*a, *b]))
    return [Change(p, a.get(p), b.get(p)) for p in paths if p not in ignored and not _same(a.get(p), b.get(p))]


def effective_intake(intake: dict[str, Any], pins: dict[str, Any]) -> dict[str, Any]:
    return apply_pins(intake, pins) if pins else dict(intake)


def diff_documents(intake_a: dict[str, Any], pins_a: dict[str, Any], result_a: dict[str, Any],
                   intake_b: dict[str, Any], pins_b: dict[str, Any], result_b: dict[str, Any],
                   versions_a: dict[str, str] | None = None, versions_b: dict[str, str] | None = None) -> RevisionDiff:
    outputs_a = {k: v for k, v in result_a.items() if k not in _SKIPPED_SECTIONS}
    outputs_b = {k: v for k, v in result_b.items() if k not in _SKIPPED_SECTIONS}
    assumed_a = {a["field"]: a["value"] for a in result_a.get("assumptions", []) if isinstance(a, dict)}
    assumed_b = {a["field"]: a["value"] for a in result_b.get("assumptions", []) if isinstance(a, dict)}
    return RevisionDiff(
        inputs=compare(effective_intake(intake_a, pins_a), effective_intake(intake_b, pins_b)),
        outputs=compare(outputs_a, outputs_b, IGNORED_OUTPUTS),
        assumptions=[Change(k, assumed_a.get(k), assumed_b.get(k)) for k in dict.fromkeys([*assumed_a, *assumed_b])
                     if not _same(assumed_a.get(k), assumed_b.get(k))],
        versions=compare(versions_a or {}, versions_b or {}))


__all__ = ["IGNORED_OUTPUTS", "Change", "RevisionDiff", "compare", "diff_documents", "effective_intake", "flatten"]
