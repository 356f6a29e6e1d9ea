"""Layer 5, software & access: stack, scheduler, containers, node readiness, operating boundary."""

from __future__ import annotations

from .boundary import BoundaryRegister, BoundaryRow, RegisterEntry, boundary_register
from .data import SoftwareData, software_data
from .readiness import ReadinessCheck, readiness_checklist
from .stack import SoftwareLayer, StackComponent, container_platform, plan_software

__all__ = [
    "BoundaryRegister",
    "BoundaryRow",
    "ReadinessCheck",
    "RegisterEntry",
    "SoftwareData",
    "SoftwareLayer",
    "StackComponent",
    "boundary_register",
    "container_platform",
    "plan_software",
    "readiness_checklist",
    "software_data",
]
