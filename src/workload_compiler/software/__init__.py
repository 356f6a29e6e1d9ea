"""Layer 5, software & access: stack, scheduler, containers, node readiness (the operating boundary
and its register: engagement/)."""

from __future__ import annotations

from .data import SoftwareData, software_data
from .readiness import ReadinessCheck, readiness_checklist
from .stack import SoftwareLayer, StackComponent, container_platform, plan_software

__all__ = [
    "ReadinessCheck",
    "SoftwareData",
    "SoftwareLayer",
    "StackComponent",
    "container_platform",
    "plan_software",
    "readiness_checklist",
    "software_data",
]
