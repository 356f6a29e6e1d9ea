"""The intake form, built from the intake models' JSON Schema: one field per leaf of each kind's
schema, grouped by section, so a new kind (or a new field) appears on the page by itself.

Every field is optional, as in YAML; a value is typed as text ("7B", "2.5MW", "30d") and read
like a YAML scalar, so it goes through exactly the validation a YAML file does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import yaml

from ..intake.load import known_kinds, workload_model
from ..intake.pins import apply_pins
from ..report.view import layer_of_section

SKIPPED = frozenset({"kind", "model.hf_config"})  # kind is the tab; a config.json is uploaded instead


@dataclass(frozen=True)
class FormField:
    key: str                    # dotted intake key, also the form control's name after "f:"
    label: str
    section: str                # top-level intake section ('' for top-level values)
    control: str                # text | select
    options: tuple[str, ...] = ()
    description: str = ""
    placeholder: str = ""
    required: bool = False
    text_only: bool = False     # a string field: the text is kept as typed, not read as YAML
    quantity: str = ""          # count | bytes | power | duration | rate | byte_rate ('' if none)


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].split("/")[-1]]
    return node


def _branches(schema: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    """The non-null alternatives of a property (anyOf flattened, refs resolved)."""
    node = _resolve(schema, node)
    if "anyOf" in node:
        out: list[dict[str, Any]] = []
        for branch in node["anyOf"]:
            out += _branches(schema, branch)
        return [b | {k: v for k, v in node.items() if k not in ("anyOf",)} for b in out if b.get("type") != "null"]
    return [node]


def _leaf(schema: dict[str, Any], key: str, section: str, node: dict[str, Any], required: bool) -> FormField:
    branches = _branches(schema, node)
    enum = [str(v) for b in branches for v in (b.get("enum") or ([b["const"]] if "const" in b else []))]
    types = {b.get("type") for b in branches}
    quantity = next((str(b["x-quantity"]) for b in branches if "x-quantity" in b), "")
    examples = next((b.get("examples") for b in branches if b.get("examples")), None)
    description = next((str(b["description"]) for b in branches if b.get("description")),
                       str(node.get("description", "")))
    label = key.rsplit(".", 1)[-1].replace("_", " ")
    if types == {"boolean"}:
        return FormField(key, label, section, "select", ("true", "false"), description, required=required)
    if enum and types <= {"string", "integer", None}:
        return FormField(key, label, section, "select", tuple(dict.fromkeys(enum)), description, required=required)
    placeholder = ", ".join(examples[:2]) if isinstance(examples, list) else ""
    if not placeholder and "object" in types:
        placeholder = "YAML, e.g. {mean: 2048, p90: 4096}"
    return FormField(key, label, section, "text", (), description, placeholder, required,
                     text_only=types == {"string"}, quantity=quantity)


def _walk(schema: dict[str, Any], node: dict[str, Any], prefix: str, section: str) -> list[FormField]:
    node = _resolve(schema, node)
    required = set(node.get("required", []))
    fields: list[FormField] = []
    for name, prop in node.get("properties", {}).items():
        key = f"{prefix}{name}"
        if key in SKIPPED:
            continue
        branches = _branches(schema, prop)
        objects = [b for b in branches if b.get("type") == "object" and b.get("properties")]
        if objects and len(branches) == 1:
            fields += _walk(schema, objects[0], key + ".", section or name)
        else:
            fields.append(_leaf(schema, key, section, prop, name in required))
    return fields


@functools.cache
def form_fields(kind: str) -> tuple[FormField, ...]:
    """Every field of `kind`'s intake, in the schema's order."""
    schema = workload_model(kind).model_json_schema()
    return tuple(_walk(schema, schema, "", ""))


def sections(kind: str) -> list[tuple[str, list[FormField]]]:
    """(section, fields) in the order a person fills them: the workload first, infrastructure after."""
    groups: dict[str, list[FormField]] = {}
    for f in form_fields(kind):
        groups.setdefault(f.section or "workload", []).append(f)
    order = {name: i for i, name in enumerate(("workload", "model", "training", "serving", "application",
                                                "problem", "target", "compute", "communication", "profile",
                                                "io", "cost", "fabric", "storage", "reliability", "software",
                                                "facility"))}
    return sorted(groups.items(), key=lambda kv: order.get(kv[0], 8.5))


def pin_fields(kind: str, layer: str) -> list[FormField]:
    """The fields a person pins from one layer's panel."""
    return [f for f in form_fields(kind) if layer_of_section(f.section or f.key) == layer]


def kinds() -> list[str]:
    return known_kinds()


def read_value(field: FormField | None, text: str) -> Any:
    """A form value as the YAML reader would see it; None for an empty box (= not given)."""
    text = text.strip()
    if not text:
        return None
    if field is not None and field.text_only:
        return text
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def intake_from_form(kind: str, values: dict[str, str]) -> dict[str, Any]:
    """The intake mapping from form values named 'f:<dotted key>' (unknown names are ignored)."""
    by_key = {f.key: f for f in form_fields(kind)}
    items = [(k[2:], read_value(by_key[k[2:]], v)) for k, v in values.items()
             if k.startswith("f:") and k[2:] in by_key]
    return apply_pins({"kind": kind}, [(k, v) for k, v in items if v is not None])


def current_text(intake: dict[str, Any], key: str) -> str:
    """The value an intake holds at a dotted key, as the person would type it ('' if absent)."""
    node: Any = intake
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return ""
        node = node[part]
    if node is None:
        return ""
    if isinstance(node, bool):
        return "true" if node else "false"
    if isinstance(node, dict | list):
        return yaml.safe_dump(node, default_flow_style=True, sort_keys=False).strip()
    return str(node)


__all__ = ["FormField", "current_text", "form_fields", "intake_from_form", "kinds", "pin_fields", "read_value",
           "sections"]
