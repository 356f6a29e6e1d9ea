"""Typed software & access defaults, read once from `catalog/data/software_stacks.yaml`
(through `catalog.loader.package_yaml`)."""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from ..catalog.loader import package_yaml
from ..errors import InputError


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class VendorStack(_Data):
    id: str
    match: tuple[str, ...]
    components: dict[str, str]
    source: str
    unverified: bool = False


class AccessModel(_Data):
    id: str
    name: str
    scheduler: str
    operator_scope: str
    suggested_operators: dict[str, str] = {}


class DefaultAccess(_Data):
    access: str
    why: str


class ContainerRule(_Data):
    scheduler: str
    vendor: str
    platform: str


class ReadinessItem(_Data):
    id: str
    check: str
    why: str
    tool: str
    when: str | None = None


class Transport(_Data):
    label: str
    tool: str


class RegisterItem(_Data):
    id: str
    title: str
    question: str
    decided_by: str


class BoundaryData(_Data):
    actors: tuple[str, ...]
    status_default: str
    system_layers: tuple[str, ...]
    software_layers: tuple[str, ...]
    operate_function: str
    operational_functions: tuple[str, ...]
    cell_statuses: tuple[str, ...]
    contractual_model: str
    note: str
    register_items: tuple[RegisterItem, ...]
    source: str


class SoftwareData(_Data):
    schema_version: int
    version_policy: str
    vendors: tuple[VendorStack, ...]
    frameworks: dict[str, str]
    access_models: tuple[AccessModel, ...]
    default_access_by_kind: dict[str, DefaultAccess]
    containers: tuple[ContainerRule, ...]
    containers_source: str
    readiness: tuple[ReadinessItem, ...]
    transports: dict[str, Transport]
    boundary: BoundaryData

    def vendor(self, vendor: str) -> VendorStack:
        """The stack for an accelerator vendor ('NVIDIA', 'AMD', 'Intel')."""
        key = vendor.strip().lower()
        for stack in self.vendors:
            if key == stack.id or any(m in key for m in stack.match):
                return stack
        known = ", ".join(s.id for s in self.vendors)
        raise InputError("compute.accelerator.vendor", vendor, f"a vendor with a known stack: {known}")

    def access(self, access_id: str) -> AccessModel:
        key = access_id.strip().lower().replace("-", "_").replace(" ", "_")
        for model in self.access_models:
            if key in (model.id, model.id.replace("_", ""), model.scheduler.lower()):
                return model
        known = ", ".join(m.id for m in self.access_models)
        raise InputError("software.access_model", access_id, f"one of {known}")


@lru_cache(maxsize=1)
def software_data() -> SoftwareData:
    return SoftwareData(**package_yaml("software_stacks.yaml"))
