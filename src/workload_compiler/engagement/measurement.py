"""Measured values on the workload sheet, bound to a machine (starter article: "do not fill missing
fields with a benchmark from an unrelated machine"; issue 11's rule: the measurement's machine must
be the one being sized).

A sheet field's `measured` is a `MeasuredValue` (intake/measured.py), given inline or as the key of
an entry of the intake's `measured.values` (what `wkc profile --into` writes). The kind of machine a
key's measurement must come from: numbers about the data (sizes, counts, FLOPs per sample) hold on
any machine; a decode rate belongs to the host CPU; a GPU rate to the accelerator; anything else to
the node type (catalog system id). Before the compile the kind and the unit are checked; after it,
the machine against the one sized, by the one rule of measure/machine_match.py.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..catalog.loader import Catalog
from ..errors import InputError
from ..intake.measured import MachineKind, MachineRef, MeasuredIntake, MeasuredValue, cpu_key, same_dimension
from ..intake.sheet import SheetIntake
from ..measure.machine_match import canonical_id, ref_id, refusal
from ..provenance import Provenance, Source, Trace

ARTICLE_RULE = "Do not fill missing fields with a benchmark from an unrelated machine (starter article)."

# The kind of machine a measurement of a key must come from (None: a property of the data, the same
# on every machine). First match wins; a key matching nothing belongs to the node type.
_MEASURED_ON: tuple[tuple[str, MachineKind | None], ...] = (
    ("pipeline.decode_rate_per_core", "cpu"), ("pipeline.cpu_cores_per_gpu", "node"),
    ("pipeline.gpu_samples_per_s", "accelerator"), ("pipeline.gpu_efficiency", "accelerator"),
    ("pipeline.device_bytes_per_sample", None), ("data.", None), ("model.", None), ("outputs.", None),
    ("training.", None), ("serving.", None), ("problem.", None), ("profile.", "accelerator"),
    ("storage.dataset", None), ("storage.sample_size", None), ("storage.token_bytes", None),
)
_WHAT = {"cpu": "the host CPU model (as the OS reports it)", "accelerator": "the accelerator (catalog id)",
         "node": "the node type (catalog system id)"}
# Result values computed from a measured key (besides the key's own row): marked measured, with their
# formula kept, where the passes derived them.
_DEPENDENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pipeline.", ("pipeline.pipeline_samples_per_s", "pipeline.effective_samples_per_s", "pipeline.time_to_result_s",
                   "compute.gpus", "compute.gpu_samples_per_s_per_gpu")),
    ("reliability.", ("reliability.goodput", "reliability.job_mtbf_s", "storage.checkpoint_interval_s",
                      "objective.goodput_adjusted_time_to_train_s", "pipeline.effective_samples_per_s",
                      "pipeline.time_to_result_s")),
)


def measured_on(key: str) -> MachineKind | None:
    for prefix, kind in _MEASURED_ON:
        if key == prefix or (prefix.endswith(".") and key.startswith(prefix)) or key.startswith(prefix + "_"):
            return kind
    return "node"


@dataclass(frozen=True, kw_only=True)
class SheetMeasurement:
    where: str                   # sheet.fields.<key>.measured or sheet.items[i].measured
    key: str | None              # the intake key it sets (None for an item)
    value: MeasuredValue
    reference: str | None        # the `measured.values` key it was read from


def sheet_measurements(sheet: SheetIntake, block: MeasuredIntake | None) -> list[SheetMeasurement]:
    """Every measured value of the sheet, references resolved against the `measured` block."""
    values = block.values if block is not None else {}
    out: list[SheetMeasurement] = []
    for key, f in sheet.fields.items():
        where = f"sheet.fields.{key}.measured"
        if f.measured_key is not None:
            if f.measured_key not in values:
                known = ", ".join(sorted(values)) or "none: run `wkc profile --into` on this file, or give the value"
                raise InputError(where, f.measured_key, f"the key of an entry of measured.values ({known})")
            out.append(SheetMeasurement(where=where, key=key, value=values[f.measured_key], reference=f.measured_key))
        elif f.measured is not None:
            out.append(SheetMeasurement(where=where, key=key, value=f.measured, reference=None))
    out += [SheetMeasurement(where=f"sheet.items[{i}].measured", key=None, value=it.measured, reference=None)
            for i, it in enumerate(sheet.items) if it.measured is not None]
    return out


def check_kinds(found: list[SheetMeasurement], units: Mapping[str, str]) -> None:
    """Before the compile: each value is of the kind of machine its key belongs to, in the key's unit."""
    for m in found:
        kind = measured_on(m.key) if m.key else None
        if kind is not None and m.value.machine.kind != kind:
            raise InputError(f"{m.where}.machine.kind", m.value.machine.kind,
                             f"{kind}: {m.key} is a property of {_WHAT[kind]}, so only a value measured on "
                             f"that kind of machine is used for it ({m.value.machine.describe()} is a "
                             f"{m.value.machine.kind}). {ARTICLE_RULE}")
        unit = units.get(m.key or "")
        if unit is not None and not same_dimension(m.value.unit, unit):
            raise InputError(f"{m.where}.unit", m.value.unit, f"{unit} (the unit of {m.key})")


def sized_ids(spec_compute: Mapping[str, Any], workload: BaseModel, catalog: Catalog) -> dict[str, tuple[str, str]]:
    """kind -> (the id a measurement must name, how to say it) for the machine this compile sized."""
    system = catalog.system(str(spec_compute["system"]))
    compute = getattr(workload, "compute", None)
    host = getattr(compute, "host_cpu", None)
    if host:
        cpu, cpu_why = host, "compute.host_cpu"
    else:
        cpu = system.cpu
        cpu_why = f"the host CPU of {system.id} as the catalog names it" + (
            "; name the CPU model as the OS reports it in compute.host_cpu" if compute is not None
            and "host_cpu" in type(compute).model_fields else "")
    return {"accelerator": (str(spec_compute["accelerator"]), "the sized accelerator"),
            "node": (system.id, "the sized node type"),
            "cpu": (cpu or "(not in the catalog)", cpu_why)}


def sized_machine(kind: MachineKind | None, spec_compute: Mapping[str, Any] | None, workload: BaseModel,
                  catalog: Catalog) -> str:
    """'cpu <model>' / 'accelerator h100-sxm' / 'node dgx-h100': what a to-measure field must be measured on."""
    if kind is None or spec_compute is None or not spec_compute.get("system"):
        return "any machine (a property of the data)"
    machine_id, why = sized_ids(spec_compute, workload, catalog)[kind]
    return f"{kind} {machine_id} ({why})" if kind == "cpu" else f"{kind} {machine_id}"


def check_machines(found: list[SheetMeasurement], spec_compute: Mapping[str, Any] | None, workload: BaseModel,
                   catalog: Catalog) -> None:
    """After the compile: refuse a measurement from another machine than the one sized (InputError)."""
    if spec_compute is None or not spec_compute.get("system"):
        return   # nothing was sized (infeasible): the answer is the binding constraint, not this check
    sized = sized_ids(spec_compute, workload, catalog)
    for m in found:
        if m.key is not None and measured_on(m.key) is None:
            continue
        ref = m.value.machine
        mine = ref_id(ref, catalog, m.where)
        target, why = sized[ref.kind]
        if mine != (cpu_key(target) if ref.kind == "cpu" else target):
            raise refusal(f"{m.where}.machine", ref, ref.id if ref.kind == "cpu" else mine, target, why)


def measurement_pins(found: list[SheetMeasurement]) -> list[tuple[str, Any]]:
    """(intake key, measured value) for every measured field: they enter the intake like pins."""
    return [(m.key, m.value.value) for m in found if m.key is not None]


def mark_measured(found: list[SheetMeasurement], trace: Trace, own_paths: Mapping[str, str]) -> None:
    """Provenance `measured` (naming the machine) for each measured key, the result value it sets
    (`own_paths`: intake key -> result path) and the values the passes derived from it."""
    for m in found:
        if m.key is None:
            continue
        machine = m.value.describe()
        trace.measured(f"sheet.{m.key}", m.value.value, machine)
        own = own_paths.get(m.key)
        if own is not None:
            trace.measured(own, m.value.value, machine, why=f"measured value of {m.key}")
        for prefix, paths in _DEPENDENTS:
            if not m.key.startswith(prefix):
                continue
            for path in paths:
                prov: Provenance | None = trace.provenance.get(path)
                if prov is None or prov.source not in (Source.DERIVED, Source.MEASURED) or not prov.formula:
                    continue
                earlier = prov.source == Source.MEASURED
                machines = (prov.machine or "").split("; ") if earlier and prov.machine else []
                keys = (prov.why or "").removeprefix("computed from measured ").split(", ") if earlier else []
                trace.measured(path, None, "; ".join(dict.fromkeys([*machines, machine])), formula=prov.formula,
                               why="computed from measured " + ", ".join(dict.fromkeys([*keys, m.key])))


def _same(kind: MachineKind, machine_id: str, target: str, catalog: Catalog) -> bool:
    """The one rule on raw intake data (an id the catalog does not hold is another machine)."""
    try:
        return canonical_id(kind, machine_id, catalog, "") == canonical_id(kind, target, catalog, "")
    except InputError:
        return False


def _remove(data: dict[str, Any], dotted: str) -> None:
    *parents, last = dotted.split(".")
    node: Any = data
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(last, None)


def leave_other_machines(data: dict[str, Any], pins: Mapping[str, Any], accelerator: str | None,
                         system: str | None, catalog: Catalog | None = None) -> tuple[dict[str, Any], list[str]]:
    """A variant of the intake `data` (`pins` applied) on another accelerator or node type than the
    baseline's (`accelerator`, `system`) keeps only the measured values of its own machine, in the
    `measured` block and on the sheet: a measurement is never applied to a machine it was not taken
    on. A sheet field whose value is left behind goes back to `to_measure` (on the new machine).
    Returns the data and what was left behind ("<key> (<kind> <id>)")."""
    from ..catalog.loader import load_catalog
    cat = catalog or load_catalog()
    acc = pins.get("compute.accelerator")
    new_acc = acc is not None and not (accelerator is not None and _same("accelerator", str(acc), accelerator, cat))
    sys_pin = pins.get("compute.system")
    new_node = new_acc or (sys_pin is not None and not (system is not None and _same("node", str(sys_pin), system,
                                                                                      cat)))
    if not (new_acc or new_node):
        return data, []

    def other(machine: Any) -> bool:
        ref = machine if isinstance(machine, dict) else {}
        try:
            m = MachineRef.model_validate(ref)
        except ValueError:
            return True
        if m.kind == "accelerator":
            return new_acc and not _same("accelerator", m.id, str(acc), cat)
        if m.kind == "node":
            return new_node and not (sys_pin is not None and _same("node", m.id, str(sys_pin), cat))
        return new_node                    # another node type: another host CPU
    out = copy.deepcopy(data)
    dropped: list[str] = []
    values = (out.get("measured") or {}).get("values") or {}
    for key in [k for k, v in values.items() if other((v or {}).get("machine"))]:
        m = values.pop(key).get("machine") or {}
        dropped.append(f"{key} ({m.get('kind')} {m.get('id')})")
    gone = {d.split(" (")[0] for d in dropped}
    fields = (out.get("sheet") or {}).get("fields") or {}
    for key, f in fields.items():
        if not isinstance(f, dict):
            continue
        ref = f.get("measured_key") or (f["measured"] if isinstance(f.get("measured"), str) else None)
        inline = f.get("measured") if isinstance(f.get("measured"), dict) else None
        if (ref is not None and ref in gone) or (inline is not None and other(inline.get("machine"))):
            m = inline.get("machine") if inline else {}
            dropped.append(f"sheet.fields.{key}" + (f" ({m.get('kind')} {m.get('id')})" if m else f" ({ref})"))
            fields[key] = {"status": "to_measure", "why": "measured on the baseline's machine, not on this one"}
            _remove(out, key)      # the value the measurement set (entered like a pin) goes with it
    items = (out.get("sheet") or {}).get("items") or []
    for i, it in enumerate(items):
        if isinstance(it, dict) and isinstance(it.get("measured"), dict) and other(it["measured"].get("machine")):
            dropped.append(f"sheet.items[{i}] ({it.get('item')})")
            it.pop("measured")
            it.update(status="to_measure", value=None, why="measured on the baseline's machine, not on this one")
    return out, dropped


__all__ = [
    "ARTICLE_RULE",
    "SheetMeasurement",
    "check_kinds",
    "check_machines",
    "leave_other_machines",
    "mark_measured",
    "measured_on",
    "measurement_pins",
    "sheet_measurements",
    "sized_ids",
    "sized_machine",
]
