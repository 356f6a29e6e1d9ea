"""Which accelerator and which node a workload runs on: the user's pins, else the catalog's
defaults, each choice traced. One rule for the training, HPC and generic archetypes (serving
searches its candidate accelerators instead, inference/compile.py)."""

from __future__ import annotations

from typing import Protocol

from ..catalog.loader import Catalog
from ..catalog.schema import Accelerator, System
from ..errors import InputError
from ..provenance import Trace


class NodePins(Protocol):
    """What an intake's compute section pins of the node (ComputeIntake, ClusterCompute)."""

    @property
    def accelerator(self) -> str | None: ...

    @property
    def system(self) -> str | None: ...


def choose_accelerator(compute: NodePins, catalog: Catalog, trace: Trace, default: str,
                       default_why: str) -> Accelerator:
    """compute.accelerator if given, else the accelerator of compute.system, else `default`."""
    if compute.accelerator is not None:
        acc = catalog.accelerator(compute.accelerator)
        trace.given("compute.accelerator", acc.id)
    elif compute.system is not None:
        acc = catalog.accelerator(catalog.system(compute.system).accelerator)
        trace.derived("compute.accelerator", acc.id, "the accelerator of the given system")
    else:
        acc = catalog.accelerator(default)
        trace.assumed("compute.accelerator", acc.id, default_why)
    return acc


def choose_system(compute: NodePins, acc: Accelerator, catalog: Catalog, trace: Trace) -> System:
    """compute.system if given (it must hold `acc`), else the catalog's reference system for it."""
    if compute.system is None:
        system = catalog.default_system(acc.id)
        trace.assumed("compute.system", system.id, f"the catalog's reference system for {acc.id}")
        return system
    system = catalog.system(compute.system)
    if system.accelerator != acc.id:
        raise InputError("compute.system", compute.system,
                         f"a system holding {acc.id}, one of: " + ", ".join(catalog.systems_for(acc.id)))
    trace.given("compute.system", system.id)
    return system
