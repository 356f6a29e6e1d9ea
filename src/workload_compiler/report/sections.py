"""Which sections of the document a report lays out, beyond the six layers, and how the lists the
summary does not cover (alternatives) read. A section another package adds to `SystemSpec` (cost,
sensitivity, measured values ...) is found here by itself and rendered from its field metadata.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..spine.result import SystemSpec
from .format import LAYER_TITLES, format_quantity
from .rows import inline

# Document fields that are not sections: the summary, the collisions and the appendix show them.
META = {"schema_version", "kind", "name", "feasible", "binding_constraint", "verdict", "collisions",
        "alternatives", "pins", "unreachable", "assumptions", "provenance", "uncertainty", "intake", "not_sized",
        # rendered by views of their own (report/sizing_view.py; the measured block in terminal and Markdown)
        "cost", "sensitivity", "measured"}
# Sections with a renderer of their own (report/engagement_render.py, report/engagement_tables.py).
ENGAGEMENT = ("pipeline", "sheet", "next_questions", "operating_boundary", "boundary_register", "operations",
              "acceptance", "mig")


def extra_sections(spec: SystemSpec) -> list[str]:
    """Sections beyond the six layers, in the document's declared order."""
    return [name for name in type(spec).model_fields if name not in META and name not in LAYER_TITLES
            and name not in ENGAGEMENT and isinstance(getattr(spec, name, None), BaseModel | dict)
            and getattr(spec, name)]


def engagement_sections(spec: SystemSpec) -> list[str]:
    """The engagement sections the document holds (rendered by report/engagement_render.py)."""
    return [name for name in ENGAGEMENT if getattr(spec, name, None)]


def section_title(name: str) -> str:
    """A section's heading: its field description's first clause, else its name in words."""
    info = SystemSpec.model_fields.get(name)
    text = name.replace("_", " ")
    if info is not None and info.description:
        return f"{text.capitalize()}: {info.description.split(';')[0].split(' (')[0]}"
    return text.capitalize()


def alternative_text(a: Any) -> str:
    """One alternative on a line: what changes, then its GPUs, time, power and verdict."""
    get = a.get if isinstance(a, dict) else (lambda k, d=None: getattr(a, k, d))
    parts = [f"{get('name')}: {get('change')}"]
    for key, unit, word in (("gpus", "count", "GPUs"), ("time_to_train_s", "s", "time to train"),
                            ("it_power_w", "W", "IT power")):
        if get(key) is not None:
            parts.append(f"{word} {format_quantity(get(key), unit)}")
    if get("feasible") is False:
        parts.append(f"infeasible: {get('binding')}")
    elif get("meets_target") is not None:
        parts.append("meets target" if get("meets_target") else "misses target")
    if isinstance(a, BaseModel) and not parts[1:]:
        parts.append(inline(a))
    return "; ".join(parts)


__all__ = ["ENGAGEMENT", "META", "alternative_text", "engagement_sections", "extra_sections", "section_title"]
