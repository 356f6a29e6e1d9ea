"""The one rule that binds a measured value to a machine, used by the `measured` block, the
calibration library and the workload sheet alike: the same kind, and the same id once made
canonical. An accelerator or node id goes through the catalog (case-folded, with its aliases:
`H100-SXM` and `h100` are `h100-sxm`); a CPU model is compared as case-folded text with its
whitespace collapsed. Nothing looser: no patterns, no shared words ("do not fill missing fields
with a benchmark from an unrelated machine", seed 003).
"""

from __future__ import annotations

from ..catalog.loader import Catalog
from ..errors import InputError
from ..intake.measured import MachineKind, MachineRef, cpu_key


def canonical_id(kind: MachineKind, machine_id: str, catalog: Catalog, where: str) -> str:
    """The id a machine of `kind` compares on; an InputError at `where`.machine.id for an id the
    catalog does not hold."""
    try:
        if kind == "accelerator":
            return catalog.accelerator(machine_id).id
        if kind == "node":
            return catalog.system(machine_id).id
    except InputError as exc:
        raise InputError(f"{where}.machine.id", machine_id, exc.allowed) from None
    return cpu_key(machine_id)


def ref_id(ref: MachineRef, catalog: Catalog, where: str) -> str:
    return canonical_id(ref.kind, ref.id, catalog, where)


def refusal(where: str, ref: MachineRef, machine_id: str, sized: str, why: str) -> InputError:
    """The one refusal: both machines named, and what to do instead."""
    return InputError(
        where, f"measured on {ref.kind} {machine_id}",
        f"a measurement of the {ref.kind} this intake sizes: {sized} ({why}). A value measured on one "
        "machine is never applied to another (seed 003: do not fill missing fields with a benchmark from "
        f"an unrelated machine); remove it, measure it there, or size " +
        (f"nodes with {machine_id}" if ref.kind == "cpu" else machine_id))


__all__ = ["canonical_id", "ref_id", "refusal"]
