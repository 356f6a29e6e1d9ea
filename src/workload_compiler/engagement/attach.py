"""Run the engagement passes: before the compile, the intake's sheet and boundary checks and the
measured values (entered like pins); after it, the sections that read the compiled document.

One place for both, called by `compile_workload` (so `recompile` and every command share it).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..arch.model import ModelArch
from ..arch.resolve import resolve_model
from ..catalog.loader import Catalog
from ..errors import InputError
from ..intake.common import ModelIntake
from ..intake.infrastructure import InfrastructureIntake
from ..intake.load import parse_workload
from ..intake.pins import apply_pins
from ..provenance import Source, Trace
from ..software.data import software_data
from ..spine.result import MeasuredEntry, MeasuredSection
from .acceptance import AcceptanceTargets, acceptance_targets
from .boundary import operating_boundary
from .measurement import (
    SheetMeasurement,
    check_kinds,
    check_machines,
    mark_measured,
    measurement_pins,
    sheet_measurements,
)
from .mig import mig_section
from .operations import operations_load
from .questions import next_questions
from .register import boundary_register
from .sheet import KEY_PATHS, KEY_UNITS, build_sheet, check_field_keys, check_statuses, given_keys
from .software_boundary import software_boundary
from .view import get_path, section_dict


def prepare(w: BaseModel) -> BaseModel:
    """Check the sheet and boundary sections against the intake; enter measured values as pins;
    carry `boundary.access_model` into `software.access_model` (one access model per workload)."""
    if not isinstance(w, InfrastructureIntake):
        return w
    raw = w.model_dump(mode="json", exclude_unset=True, by_alias=True)
    given = given_keys(w)
    check_field_keys(w.sheet, type(w))
    check_statuses(w.sheet, given, raw)
    found = sheet_measurements(w.sheet, w.measured)
    check_kinds(found, KEY_UNITS)
    pins: list[tuple[str, Any]] = measurement_pins(found)
    access = w.boundary.access_model
    if access is not None:
        data = software_data()
        chosen = data.access(access).id
        if w.software.access_model is not None and data.access(w.software.access_model).id != chosen:
            raise InputError("boundary.access_model", access,
                             f"the same access model as software.access_model ({w.software.access_model})")
        pins.append(("software.access_model", chosen))
    if not pins:
        return w
    return parse_workload(apply_pins(raw, pins, type(w)))


def _arch(w: BaseModel) -> ModelArch | None:
    model = getattr(w, "model", None)
    if not isinstance(model, ModelIntake):
        return None
    try:
        return resolve_model(model, Trace(), "model")
    except InputError:
        return None


def _readiness_targets(spec: Any, acceptance: AcceptanceTargets) -> None:
    """Give the node-readiness checks their numbers: each acceptance target names its check."""
    software = spec.software if isinstance(spec.software, dict) else None
    for item in (software or {}).get("readiness", []):
        item["acceptance"] = [{"test": t.test, "tier": t.tier, "expected": t.expected, "unit": t.unit,
                               "precision": t.precision, "message_bytes": t.message_bytes}
                              for t in acceptance.targets if t.readiness_check == item.get("id")]


def attach(spec: Any, w: BaseModel, catalog: Catalog) -> None:
    """Fill the engagement sections of `spec` (a SystemSpec) in place."""
    if not isinstance(w, InfrastructureIntake):
        return
    doc = spec.model_dump(mode="json")
    found = sheet_measurements(w.sheet, w.measured)
    check_machines(found, section_dict(doc, "compute"), w, catalog)
    trace = Trace()
    trace.provenance, trace.assumptions = spec.provenance, spec.assumptions
    given = given_keys(w)
    raw = w.model_dump(mode="json", by_alias=True)
    kind = str(doc.get("kind"))
    access = (section_dict(doc, "software") or {}).get("access_model") or w.software.access_model or \
        software_data().default_access_by_kind[kind].access
    boundary = operating_boundary(str(access), w.boundary)
    ops = operations_load(doc, boundary, w.operations, w.reliability, trace)
    register = boundary_register(doc, w.boundary, ops)
    try:
        acceptance = acceptance_targets(doc, catalog, _arch(w))
    except InputError as exc:   # an accelerator without the figures a target needs: say so, do not guess
        acceptance = None
        trace.assumed("acceptance", None, f"acceptance targets not sized: {exc}")
    if acceptance is not None:
        _readiness_targets(spec, acceptance)
    sheet = build_sheet(kind, doc, w, w.sheet, given, trace.provenance, catalog,
                        {m.key: (m.value, m.reference) for m in found if m.key is not None})
    for key, field in w.sheet.fields.items():
        if field.measured is None and field.status == "assumed" and field.why:
            trace.assumed(key, get_path(raw, key), f"user: {field.why}")
    mark_measured(found, trace, KEY_PATHS)
    if found:
        spec.measured = measured_section(spec.measured, found, doc, catalog)
    assumed = {p for p, prov in trace.provenance.items() if prov.source == Source.ASSUMED}
    spec.sheet = sheet
    spec.operating_boundary = boundary
    spec.boundary_register = register
    if isinstance(spec.software, dict):   # the first result's key, kept (compact view of the two sections)
        spec.software = {**spec.software, "boundary": software_boundary(boundary, register).model_dump(mode="json")}
    spec.operations = ops
    spec.acceptance = acceptance
    spec.mig = mig_section(doc, catalog)
    spec.next_questions = next_questions(doc, sheet, register, ops, given, assumed)
    spec.provenance, spec.assumptions = trace.provenance, trace.assumptions


def measured_section(section: MeasuredSection | None, found: list[SheetMeasurement], doc: dict[str, Any],
                     catalog: Catalog) -> MeasuredSection:
    """The `measured` section with the sheet's values: a value read from `measured.values` is marked
    applied there (through its sheet field); one given on the sheet gets its own entry."""
    from ..measure.machine_match import ref_id
    out = section or MeasuredSection(sized_accelerators=[str(get_path(doc, "compute.accelerator"))],
                                     sized_systems=[str(get_path(doc, "compute.system"))],
                                     sized_why="the machines this compile sized")
    entries = list(out.entries)
    for m in found:
        replaces = (f"the intake's {m.key} (entered like a pin)" if m.key else
                    "nothing: a sheet row the model does not compute")
        status = "applied" if m.key else "recorded"
        if m.reference is not None:
            entries = [e.model_copy(update={"status": "applied", "replaces": replaces,
                                            "note": f"applied through {m.where}"})
                       if e.field == m.reference and e.origin == "intake" else e for e in entries]
            continue
        v = m.value
        entries.append(MeasuredEntry(field=m.key or m.where.removesuffix(".measured"), value=v.value, unit=v.unit,
                                     spread=v.spread, repeats=v.repeats, machine_kind=v.machine.kind,
                                     machine_id=ref_id(v.machine, catalog, m.where), machine=v.machine.describe(),
                                     date=v.date.isoformat(), tool=v.tool, origin=m.where, status=status,
                                     replaces=replaces, note=v.note))
    return out.model_copy(update={"entries": entries})


__all__ = ["attach", "measured_section", "prepare"]
