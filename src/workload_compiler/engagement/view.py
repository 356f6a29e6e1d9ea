"""Reading the compiled document: every engagement section reads the same JSON-mode dump of the
`SystemSpec`, so typed layers and dict layers look alike to it."""

from __future__ import annotations

from typing import Any


def get_path(doc: Any, path: str | None) -> Any:
    """doc['a']['b']['c'] for 'a.b.c'; None where any step is missing."""
    if not path:
        return None
    node = doc
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def section_dict(doc: dict[str, Any], name: str) -> dict[str, Any] | None:
    value = doc.get(name)
    return value if isinstance(value, dict) and value else None


def number(doc: Any, path: str) -> float | None:
    value = get_path(doc, path)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def time_to_result_s(doc: dict[str, Any]) -> float | None:
    """The time the workload takes to its result, per archetype (None for a service)."""
    for path in ("objective.goodput_adjusted_time_to_train_s", "objective.time_to_train_s",
                 "hpc.time_to_solution_s", "pipeline.time_to_result_s"):
        value = number(doc, path)
        if value is not None:
            return value
    return None


__all__ = ["get_path", "number", "section_dict", "time_to_result_s"]
