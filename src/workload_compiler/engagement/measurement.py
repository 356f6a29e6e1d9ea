"""Binding a measurement to a machine (starter article: "do not fill missing fields with a
benchmark from an unrelated machine"; issue 11's rule: the measurement's machine kind must match the
one being sized).

Which machine a key's measurement must come from: numbers about the data (sizes, counts, FLOPs
per sample) hold on any machine; a decode rate belongs to the host CPU of the node being sized; a
GPU rate to the accelerator; anything else to the node type (catalog system id).
"""

from __future__ import annotations

import contextlib
import re
from typing import Any, Literal

from ..catalog.loader import Catalog
from ..errors import InputError
from ..intake.sheet import Machine, SheetIntake

MeasuredOn = Literal["accelerator", "host", "system", "data"]
ARTICLE_RULE = "Do not fill missing fields with a benchmark from an unrelated machine (starter article)."

# The kind of machine a measurement of a key must come from. Numbers about the data are the same
# on every machine; a rate belongs to the hardware that produces it.
_MEASURED_ON: tuple[tuple[str, MeasuredOn], ...] = (
    ("pipeline.decode_rate_per_core", "host"), ("pipeline.cpu_cores_per_gpu", "host"),
    ("pipeline.gpu_samples_per_s", "accelerator"), ("pipeline.gpu_efficiency", "accelerator"),
    ("pipeline.device_bytes_per_sample", "data"), ("data.", "data"), ("model.", "data"), ("outputs.", "data"),
    ("training.", "data"), ("serving.", "data"), ("problem.", "data"), ("profile.", "accelerator"),
    ("storage.dataset", "data"), ("storage.sample_size", "data"), ("storage.token_bytes", "data"),
)


def measured_on(key: str) -> MeasuredOn:
    for prefix, domain in _MEASURED_ON:
        if key == prefix or (prefix.endswith(".") and key.startswith(prefix)) or key.startswith(prefix + "_"):
            return domain
    return "system"



def _tokens(text: str) -> set[str]:
    return {t for t in re.split(r"[^a-z0-9]+", text.lower()) if len(t) > 2 and t not in {"intel", "amd", "cores"}}


def _machine_ids(m: Machine, catalog: Catalog) -> tuple[str | None, str | None]:
    """(system id, accelerator id) the measurement names, resolved through the catalog."""
    system = accelerator = None
    for name in (m.system, m.kind):
        if name and system is None:
            with contextlib.suppress(InputError):
                system = catalog.system(name).id
    for name in (m.accelerator, m.kind):
        if name and accelerator is None:
            with contextlib.suppress(InputError):
                accelerator = catalog.accelerator(name).id
    if accelerator is None and system is not None:
        accelerator = catalog.system(system).accelerator
    return system, accelerator


def sized_machine(domain: MeasuredOn, spec_compute: dict[str, Any], catalog: Catalog) -> str:
    system = catalog.system(str(spec_compute["system"]))
    if domain == "accelerator":
        return f"accelerator {spec_compute['accelerator']}"
    if domain == "host":
        return f"host CPU of {system.id}: {system.cpu or 'not in the catalog'}"
    return f"node type {system.id}"


def machine_matches(domain: MeasuredOn, m: Machine, spec_compute: dict[str, Any], catalog: Catalog) -> bool:
    if domain == "data":
        return True
    system_id, accelerator_id = _machine_ids(m, catalog)
    if domain == "accelerator":
        return accelerator_id == spec_compute.get("accelerator")
    if system_id == spec_compute.get("system"):
        return True
    if domain == "host":
        cpu = catalog.system(str(spec_compute["system"])).cpu
        named = m.cpu or (m.kind if system_id is None and accelerator_id is None else None)
        return bool(cpu and named and _tokens(named) and _tokens(named) <= _tokens(cpu))
    return False


def check_measurements(sheet: SheetIntake, spec_compute: dict[str, Any] | None, catalog: Catalog) -> None:
    """Refuse a measurement from another kind of machine than the one sized (InputError)."""
    entries = [(f"sheet.fields.{k}", k, f.measured) for k, f in sheet.fields.items() if f.measured]
    entries += [(f"sheet.items[{i}]", it.item, it.measured) for i, it in enumerate(sheet.items) if it.measured]
    for where, key, entry in entries:
        assert entry is not None
        domain = measured_on(key) if where.startswith("sheet.fields") else "system"
        if domain == "data":
            continue
        if spec_compute is None or not spec_compute.get("system"):
            return   # nothing was sized (infeasible): the answer is the binding constraint, not this check
        if not machine_matches(domain, entry.machine, spec_compute, catalog):
            raise InputError(
                f"{where}.measured.machine", entry.machine.label(),
                f"a measurement from the kind of machine being sized ({sized_machine(domain, spec_compute, catalog)}); "
                f"a benchmark from another kind of machine is never used for it. Measure it there, or keep "
                f"the field to_measure. {ARTICLE_RULE}")


__all__ = ["ARTICLE_RULE", "MeasuredOn", "check_measurements", "machine_matches", "measured_on", "sized_machine"]
