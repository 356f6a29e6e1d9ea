"""Layer 5, software & access: the stack by accelerator vendor, the access model and scheduler,
the container platform and node readiness (the operating boundary: engagement/boundary.py).

Rules (each default is an Assumption with its reason):
  vendor            NVIDIA -> CUDA / NCCL; AMD -> ROCm / RCCL; Intel Gaudi -> SynapseAI / HCCL
  access model      given, else by workload kind: training, hpc -> scheduler; inference -> kubernetes
  scheduler         bare metal -> none; scheduler -> Slurm; kubernetes -> Kubernetes; managed API -> provider
  containers        (scheduler, vendor) -> Enroot + Pyxis | Apptainer | containerd | Docker
Versions are never invented: each component carries "pin at deployment".
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..provenance import Assumption, Provenance, Trace
from .data import SoftwareData, software_data
from .readiness import ReadinessCheck, readiness_checklist

WorkloadKind = Literal["training", "inference", "hpc"]
_TOOL_ROLES = frozenset({"topology_tool", "version_query"})  # used by the readiness checks, not stack parts


class StackComponent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str
    name: str
    version: str = Field(description="a sourced version, or 'pin at deployment'")


class SoftwareLayer(BaseModel):
    """The software & access layer of the compiled document."""

    model_config = ConfigDict(extra="forbid")

    vendor: str
    stack: list[StackComponent]
    framework: str
    access_model: str
    scheduler: str
    container_platform: str
    readiness: list[ReadinessCheck]
    notes: list[str] = Field(default_factory=list)
    assumptions: list[Assumption] = Field(default_factory=list)
    provenance: dict[str, Provenance] = Field(default_factory=dict)


def container_platform(scheduler: str, vendor_id: str, data: SoftwareData) -> str:
    """First rule matching (scheduler, vendor); 'any' matches every vendor."""
    for rule in data.containers:
        if rule.scheduler.lower() == scheduler.split(" ")[0].lower() and rule.vendor in (vendor_id, "any"):
            return rule.platform
    raise InputError("software.scheduler", scheduler, "Slurm, Kubernetes, none or provider-managed")


def plan_software(
    *,
    accelerator_vendor: str,
    workload_kind: str,
    access_model: str | None = None,
    transport: str = "infiniband",
    multi_node: bool = True,
    gpudirect_storage: bool = False,
    expected_busbw_bytes_per_s: float | None = None,
    data: SoftwareData | None = None,
) -> SoftwareLayer:
    """The software & access layer for one accelerator vendor and workload kind."""
    data = data or software_data()
    t = Trace()
    stack = data.vendor(accelerator_vendor)
    t.derived("software.vendor", stack.id, f"accelerator vendor {accelerator_vendor!r} -> {stack.id} stack")
    if stack.unverified:
        t.assumed("software.stack", stack.id, stack.source)
    if workload_kind not in data.default_access_by_kind:
        raise InputError(
            "workload.kind", workload_kind, f"one of {', '.join(sorted(data.default_access_by_kind))}"
        )
    if access_model is None:
        default = data.default_access_by_kind[workload_kind]
        access = data.access(default.access)
        t.assumed("software.access_model", access.id, default.why)
    else:
        access = data.access(access_model)
        t.given("software.access_model", access.id)
    scheduler = t.derived("software.scheduler", access.scheduler, f"access model {access.id} -> scheduler")
    platform = container_platform(scheduler, stack.id, data)
    t.assumed("software.container_platform", platform, data.containers_source)
    framework = data.frameworks.get(workload_kind, "")
    components = [
        StackComponent(role=role, name=name, version=data.version_policy)
        for role, name in stack.components.items()
        if role not in _TOOL_ROLES
    ]
    checks = readiness_checklist(
        stack=stack,
        transport=transport,
        multi_node=multi_node,
        gpudirect_storage=gpudirect_storage,
        data=data,
        expected_busbw_bytes_per_s=expected_busbw_bytes_per_s,
    )
    notes = [f"Versions: {data.version_policy} (no sourced version in the references)."]
    if transport == "ethernet" and multi_node:
        notes.append("Scale-out without RDMA: collectives run over TCP sockets; expect far lower bandwidth.")
    return SoftwareLayer(
        vendor=stack.id,
        stack=components,
        framework=framework,
        access_model=access.id,
        scheduler=scheduler,
        container_platform=platform,
        readiness=checks,
        notes=notes,
        assumptions=t.assumptions,
        provenance=t.provenance,
    )
