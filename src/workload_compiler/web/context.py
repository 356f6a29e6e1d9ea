"""What the workbench page shows for one state (an intake, its pins, maybe a compiled result):
the form with its values and the assumptions beside them, the six panels with the values that
moved since the previous compile, the pin fields of each layer with their current values."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

import yaml

from ..intake.pins import apply_pins
from ..report.summary import assumption_text, search_warnings
from ..report.view import (
    LAYER_KEYS,
    Panel,
    alternative_rows,
    assumption_rows,
    extra_sections,
    kpis,
    panels,
    verdict,
)
from ..spine.result import SystemSpec
from .engine import Compiled
from .forms import FormField, current_text, form_fields, kinds, pin_fields, sections
from .sources import example_names

KIND_LABELS = {"training": "Training", "inference": "Inference", "hpc": "HPC & simulation", "generic": "Generic"}


_PANELS: OrderedDict[str, list[Panel]] = OrderedDict()
_PANELS_LOCK = threading.Lock()


def panels_of(compiled: Compiled) -> list[Panel]:
    """The panels of a compiled state, built once per state (the page and the next page's "what
    moved" both read them)."""
    with _PANELS_LOCK:
        found = _PANELS.get(compiled.key)
    if found is None:
        found = panels(compiled.spec)
        with _PANELS_LOCK:
            _PANELS[compiled.key] = found
            while len(_PANELS) > 64:
                _PANELS.popitem(last=False)
    return found


def _text_map(ps: list[Panel]) -> dict[str, str]:
    return {r.path: r.text for p in ps for r in p.details if not r.heading}


def moved_values(old: list[Panel] | None, new: list[Panel]) -> tuple[dict[str, str], dict[str, int]]:
    """({path: old text} for every shown value that changed, {layer: how many}) since `old`."""
    if old is None:
        return {}, {}
    before, after = _text_map(old), _text_map(new)
    changes = {p: before.get(p, "—") for p, t in after.items() if before.get(p, "—") != t}
    per_layer: dict[str, int] = {}
    for panel in new:
        n = sum(1 for r in panel.details if r.path in changes)
        if n:
            per_layer[panel.layer.key] = n
    return changes, per_layer


def assumed_by_field(kind: str, spec: SystemSpec | None) -> dict[str, tuple[str, str]]:
    """{intake key: (assumed value, why)}: each assumption beside the form field it fills. An
    assumption names a result path; it belongs to the intake key of the same path, else to the one
    intake key with the same last part ('objective.seq_len' -> 'training.seq_len')."""
    if spec is None:
        return {}
    keys = [f.key for f in form_fields(kind)]
    by_leaf: dict[str, list[str]] = {}
    for key in keys:
        by_leaf.setdefault(key.rsplit(".", 1)[-1], []).append(key)
    out: dict[str, tuple[str, str]] = {}
    for a in spec.assumptions:
        leaf = a.field.rsplit(".", 1)[-1]
        target = a.field if a.field in keys else (by_leaf[leaf][0] if len(by_leaf.get(leaf, [])) == 1 else None)
        if target is not None and target not in out:
            out[target] = (assumption_text(spec, a.field, a.value, a.unit), a.why)
    return out


def _subgroups(section: str, fields: list[FormField]) -> list[tuple[str, list[FormField]]]:
    """The section's own fields first (''), then one group per nested object (moe, mla, parallelism)."""
    groups: dict[str, list[FormField]] = {}
    for f in fields:
        rest = f.key.split(".")[1:] if section != "workload" else [f.key]
        groups.setdefault(rest[0] if len(rest) > 1 else "", []).append(f)
    return sorted(groups.items(), key=lambda kv: kv[0] != "")


def _compile_note(compiled: Compiled, moved: int | None) -> str:
    note = "from the cache" if compiled.cached else f"compiled in {compiled.compile_s * 1e3:.0f} ms"
    return note + (f" · {moved} values moved" if moved is not None else "")


def workbench_context(kind: str, intake: dict[str, Any], pins: dict[str, Any], compiled: Compiled | None, *,
                      previous: Compiled | None = None, project: str | None = None, rev_label: str | None = None,
                      active_layer: str | None = None, example: str | None = None, **extra: Any) -> dict[str, Any]:
    spec = compiled.spec if compiled else None
    effective = apply_pins(intake, pins) if pins else intake
    values = {f.key: current_text(intake, f.key) for f in form_fields(kind)}
    assumed = assumed_by_field(kind, spec)
    form_sections = sections(kind)
    filled = {s: sum(1 for f in fs if values[f.key]) for s, fs in form_sections}
    workload_sections = {s for s, _ in form_sections[: next((i for i, (s, _) in enumerate(form_sections)
                                                              if s == "fabric"), len(form_sections))]}
    current = {f.key: current_text(effective, f.key) or (assumed[f.key][0] if f.key in assumed else "")
               for layer in LAYER_KEYS for f in pin_fields(kind, layer)}
    ctx: dict[str, Any] = {
        "kind": kind, "kinds": kinds(), "kind_labels": KIND_LABELS, "examples": example_names(), "example": example,
        "form_sections": form_sections, "values": values, "filled": filled, "assumed": assumed,
        "form_groups": [(s, _subgroups(s, fs)) for s, fs in form_sections],
        "filled_keys": {k for k, v in values.items() if v},
        "open_sections": {s for s, n in filled.items() if n} or workload_sections,
        "yaml_text": yaml.safe_dump(intake, sort_keys=False, allow_unicode=True) if intake.get("kind") else "",
        "state_intake": json.dumps(intake), "state_pins": json.dumps(pins), "project": project,
        "rev_label": rev_label, "active_layer": active_layer,
        "pin_fields": {layer: pin_fields(kind, layer) for layer in LAYER_KEYS}, "current": current,
        "spec": spec, "key": compiled.key if compiled else None,
        "title": (spec.name if spec and spec.name else None) or intake.get("name") or f"{KIND_LABELS.get(kind, kind)} "
                                                                                       "workload",
    }
    if spec is not None and compiled is not None:
        current_panels = panels_of(compiled)
        changes, moved = moved_values(panels_of(previous) if previous else None, current_panels)
        ctx.update(verdict=verdict(spec), kpis=kpis(spec), warnings=search_warnings(spec), panels=current_panels,
                   alternatives=alternative_rows(spec), assumptions=assumption_rows(spec), changes=changes, moved=moved,
                   extras=extra_sections(spec),
                   compile_note=_compile_note(compiled, len(changes) if previous else None))
    ctx.update(extra)
    return ctx


__all__ = ["KIND_LABELS", "assumed_by_field", "moved_values", "panels_of", "workbench_context"]
