"""The six layers as panels, read from the result document: what the HTML report and the web page
show. Pure: a `SystemSpec` in, rows of formatted text with their provenance out; nothing computed.

A panel gathers the document sections of one layer of the spine (compute with the serving or
simulation section, storage with reliability) and the intake sections a person pins there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..spine.result import SystemSpec
from ..spine.verdict import verdict as spine_verdict
from .format import format_quantity, format_value
from .rows import label_words, sibling_labels
from .summary import assumption_text, band_span, unit_at


@dataclass(frozen=True)
class LayerDef:
    key: str
    number: int
    title: str
    subtitle: str
    sections: tuple[str, ...]          # result document sections shown in the panel
    pin_sections: tuple[str, ...]      # intake sections pinned from the panel
    headline: tuple[str, ...]          # result paths shown when the panel is closed


# The spine of seed 000 ("The 6-Layer Architecture Spine"), in order.
LAYERS: tuple[LayerDef, ...] = (
    LayerDef("objective", 1, "Workload objective", "Target completion time or throughput baseline",
             ("objective",), ("model", "training", "target", "serving", "application", "problem", "profile",
                              "steps", "simulated_time", "timestep", "precision", "cost", "name"),
             ("objective.model", "objective.params", "objective.tokens", "objective.total_flops",
              "objective.time_to_train_s", "objective.time_to_train_target_s", "objective.meets_target",
              "objective.request_rate_per_s", "objective.ttft_target_s", "objective.tpot_target_s",
              "objective.solver_class", "objective.problem_size", "objective.time_to_solution_target_s")),
    LayerDef("compute", 2, "Compute profile", "Accelerator class, count & host system resources",
             ("compute", "inference", "hpc", "bottleneck"), ("compute",),
             ("compute.accelerator_name", "compute.gpus", "compute.nodes", "compute.parallelism", "compute.mfu",
              "compute.step_time_s", "compute.memory_per_gpu_bytes", "compute.bottleneck", "inference.replicas",
              "inference.gpus_per_replica", "inference.ttft_s", "inference.tpot_s", "inference.output_tokens_per_s",
              "hpc.time_per_step_s", "hpc.time_to_solution_s", "hpc.bound")),
    LayerDef("fabric", 3, "Interconnect fabric", "Interconnect type, bandwidth & cluster topology",
             ("fabric",), ("fabric",),
             ("fabric.scale_out.technology", "fabric.scale_out.topology", "fabric.scale_out.tiers",
              "fabric.scale_out.switches", "fabric.per_gpu_scale_out_bytes_per_s", "fabric.placement.description")),
    LayerDef("storage", 4, "Storage I/O", "Usable capacity, sustained throughput & checkpoint I/O",
             ("storage", "reliability"), ("storage", "reliability", "io"),
             ("storage.tier", "storage.dataset_bytes", "storage.checkpoint_bytes", "storage.checkpoint_write_s",
              "storage.checkpoint_interval_s", "storage.capacity_bytes", "reliability.goodput",
              "storage.scratch_write_bandwidth_bytes_per_s", "storage.scratch_capacity_bytes")),
    LayerDef("software", 5, "Software & access", "Environment, container platform & workload scheduler",
             ("software",), ("software",),
             ("software.framework", "software.scheduler", "software.container_platform", "software.access_model")),
    LayerDef("facility", 6, "Facility interface", "Power, cooling, network and physical deployment",
             ("facility",), ("facility",),
             ("facility.it_power_w", "facility.facility_power_w", "facility.pue", "facility.racks",
              "facility.rack_power_w", "facility.cooling", "facility.coolant_flow_l_per_min",
              "facility.floor_area_m2")),
)
LAYER_KEYS = tuple(layer.key for layer in LAYERS)


def layer_of_section(section: str) -> str:
    """The panel an intake section is pinned from; a section no panel names belongs to the objective
    (a new archetype's sections appear there by themselves)."""
    for layer in LAYERS:
        if section in layer.pin_sections:
            return layer.key
    return "objective"


@dataclass(frozen=True)
class Row:
    path: str
    label: str
    text: str
    source: str = ""          # given | assumed | derived | measured | "" (not traced)
    note: str = ""            # the formula, or why it was assumed
    depth: int = 0
    heading: bool = False
    block: bool = False       # a multi-line value: shown below its label, not in a cell
    columns: tuple[str, ...] = ()                # a list of records: shown as a small table
    records: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Panel:
    layer: LayerDef
    headline: list[Row]
    details: list[Row] = field(default_factory=list)
    empty: bool = False


def _lookup(doc: dict[str, Any], path: str) -> tuple[bool, Any]:
    node: Any = doc
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _parallelism_text(value: dict[str, Any]) -> str:
    axes = [f"{k.upper()} {v}" for k in ("tp", "pp", "dp", "cp", "ep") if isinstance(v := value.get(k), int) and v > 1]
    extra = [f"{k.replace('_', ' ')} {v}" for k, v in value.items()
             if k in ("micro_batch_size", "recompute", "zero_stage") and v not in (None, 0, "none")]
    return " · ".join(axes or ["no model parallelism"]) + (f" ({', '.join(extra)})" if extra else "")


def value_text(key: str, value: Any) -> str:
    """How one value reads when only its key is known (a form's assumed value, a template filter):
    the legacy guess by key ending. The panels below format by the unit the result's types declare."""
    if key == "parallelism" and isinstance(value, dict):
        return _parallelism_text(value)
    return format_value(key, value)


def text_at(spec: SystemSpec, path: str, value: Any) -> str:
    """How the value at a document path reads: by the unit its field declares (report/format.py),
    the parallel layout written as people say it."""
    if path.rsplit(".", 1)[-1] == "parallelism" and isinstance(value, dict):
        return _parallelism_text(value)
    return format_quantity(value, unit_at(spec, path))


def _records(spec: SystemSpec, path: str, value: list[dict[str, Any]]
             ) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """A list of records as (columns, rows of text): the plain values of each, in first-seen order."""
    columns = list(dict.fromkeys(k for v in value for k, x in v.items() if not isinstance(x, dict | list)))
    return tuple(c.replace("_", " ") for c in columns), tuple(
        tuple(text_at(spec, f"{path}.{i}.{c}", v.get(c)) if c in v else "" for c in columns)
        for i, v in enumerate(value))


def _row(spec: SystemSpec, path: str, value: Any, depth: int = 0, label: str | None = None) -> Row:
    key = path.rsplit(".", 1)[-1]
    prov = spec.provenance.get(path)
    note = (prov.formula or prov.why or prov.machine or "") if prov else ""
    source = prov.source.value if prov else ""
    label = label or label_words(key, unit_at(spec, path))
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        columns, records = _records(spec, path, value)
        return Row(path=path, label=label, text=f"{len(value)} entries", source=source, note=note, depth=depth,
                   columns=columns, records=records)
    text = text_at(spec, path, value)
    return Row(path=path, label=label, text=text, source=source, note=note, depth=depth, block="\n" in text)


def detail_rows(spec: SystemSpec, prefix: str, data: dict[str, Any], depth: int = 0) -> list[Row]:
    """Every value of a section, nested dicts indented under a heading row (three levels deep)."""
    rows: list[Row] = []
    labels = sibling_labels({key: unit_at(spec, f"{prefix}.{key}") for key in data})
    for key, value in data.items():
        path = f"{prefix}.{key}"
        if isinstance(value, dict) and value and depth < 3 and key != "parallelism":
            rows.append(Row(path=path, label=labels[key], text="", depth=depth, heading=True))
            rows += detail_rows(spec, path, value, depth + 1)
        else:
            rows.append(_row(spec, path, value, depth, labels[key]))
    return rows


def panels(spec: SystemSpec) -> list[Panel]:
    """The six panels, each with its headline values and every value of its sections."""
    doc = spec.model_dump(mode="json")
    out = []
    for layer in LAYERS:
        headline = [_row(spec, p, v) for p in layer.headline for found, v in [_lookup(doc, p)]
                    if found and v is not None]
        details: list[Row] = []
        for section in layer.sections:
            data = doc.get(section)
            if isinstance(data, dict) and data:
                details.append(Row(path=section, label=section, text="", heading=True))
                details += detail_rows(spec, section, data, 1)
        if not headline and details:
            headline = [r for r in details if not r.heading and not r.block][:8]
        out.append(Panel(layer=layer, headline=headline, details=details, empty=not details))
    return out


def verdict(spec: SystemSpec) -> tuple[str, str]:
    """('ok' | 'warn' | 'fail', the sentence): feasible, feasible with collisions, or what binds."""
    if not spec.feasible:
        return "fail", f"Does not fit: {spec.binding_constraint or 'a constraint binds'}"
    if spec.collisions:
        names = ", ".join(c.constraint for c in spec.collisions)
        n = len(spec.collisions)
        return "warn", f"Compiles, with {n} collision{'s' if n > 1 else ''}: {names}"
    v = spine_verdict(spec)
    if v.code == "target open":
        return "warn", "Compiles; " + v.text.removeprefix("feasible; ")
    return "ok", "Compiles: every pinned constraint is met"


def money(usd: float) -> str:
    """'$1.23 M', '$45.6 k', '$980'."""
    for scale, suffix in ((1e9, " B"), (1e6, " M"), (1e3, " k")):
        if abs(usd) >= scale:
            return f"${usd / scale:,.3g}{suffix}"
    return f"${usd:,.0f}"


def alternative_rows(spec: SystemSpec) -> list[dict[str, str]]:
    """Each alternative as formatted text: name, change, GPUs, time, power, cost (if priced), verdict."""
    rows = []
    for a in spec.model_dump(mode="json").get("alternatives") or []:
        cost_key = next((k for k in ("cost_usd", *a) if k.endswith("_usd") and isinstance(a.get(k), int | float)),
                        None)
        targets = a.get("meets_targets", a.get("meets_target"))
        if not a.get("feasible", True):
            verdict_text = f"infeasible: {a.get('binding')}"
        elif a.get("meets_pins") is False:
            verdict_text = "breaks a pinned limit"
        else:
            verdict_text = {None: "—", True: "meets every target", False: "misses a target"}.get(targets, "—")
        if a.get("rank") == 1:
            verdict_text += " · cheapest"
        rows.append({"name": str(a.get("name", "")), "change": str(a.get("change", "")),
                     "gpus": format_quantity(a.get("gpus"), "count"),
                     "time": format_quantity(a.get("time_to_train_s") or a.get("time_s"), "s"),
                     "it_power": format_quantity(a.get("it_power_w"), "W"),
                     "facility_power": format_quantity(a.get("facility_power_w"), "W"),
                     "cost": money(a[cost_key]) if cost_key else "—",
                     "verdict": verdict_text, "ok": "yes" if a.get("feasible", True) and targets is not False
                     and a.get("meets_pins") is not False else "no"})
    return rows




_SHOWN_ELSEWHERE = frozenset({"schema_version", "kind", "name", "feasible", "binding_constraint", "collisions",
                              "alternatives", "pins", "assumptions", "provenance", "intake", "sensitivity"})


def extra_sections(spec: SystemSpec) -> list[tuple[str, list[Row]]]:
    """Every other section of the document (the search, the engagement sections, what a new archetype
    adds), each as rows, so nothing the compile returned is left off the page or the report."""
    doc = spec.model_dump(mode="json")
    in_panels = {s for layer in LAYERS for s in layer.sections}
    out = []
    for name, data in doc.items():
        if name in _SHOWN_ELSEWHERE or name in in_panels or data in (None, {}, []):
            continue
        rows = detail_rows(spec, name, data) if isinstance(data, dict) else [_row(spec, name, data)]
        out.append((name, rows))
    return out


# The figures a customer asks for first, in order; the first few present are shown as tiles.
_KPIS = (("compute.accelerator_name", "accelerator"), ("compute.gpus", "GPUs"),
         ("objective.goodput_adjusted_time_to_train_s", "time to train"),
         ("objective.time_to_train_s", "time to train"), ("inference.replicas", "replicas"),
         ("inference.ttft_s", "TTFT"), ("inference.tpot_s", "TPOT"),
         ("inference.output_tokens_per_s", "output tokens/s"), ("hpc.time_to_solution_s", "time to solution"),
         ("compute.mfu", "MFU"), ("facility.it_power_w", "IT power"), ("facility.facility_power_w", "facility power"),
         ("facility.racks", "racks"))


class Kpi(NamedTuple):
    """A headline tile: its label, its value, and the band of our held-out error ('' when none)."""

    label: str
    text: str
    band: str = ""


def kpis(spec: SystemSpec, limit: int = 7) -> list[Kpi]:
    """The headline tiles: the first `limit` of _KPIS the result has, each with its band."""
    doc = spec.model_dump(mode="json")
    out: list[Kpi] = []
    for path, label in _KPIS:
        found, value = _lookup(doc, path)
        if found and value is not None and label not in (k.label for k in out):
            out.append(Kpi(label, text_at(spec, path, value), band_span(spec, path, unit_at(spec, path))))
    return out[:limit]


def assumption_rows(spec: SystemSpec) -> list[Row]:
    """The assumptions requiring validation, each value formatted by the unit of the field it fills."""
    return [Row(path=a.field, label=a.field, text=assumption_text(spec, a.field, a.value, a.unit),
                source="assumed", note=a.why) for a in spec.assumptions]


__all__ = ["LAYERS", "LAYER_KEYS", "Kpi", "LayerDef", "Panel", "Row", "alternative_rows", "assumption_rows",
           "detail_rows", "extra_sections", "kpis", "layer_of_section", "money", "panels", "text_at", "value_text",
           "verdict"]
