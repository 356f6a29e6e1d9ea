"""Node readiness: the Linux-systems checklist a cluster passes before it takes a training job.

Each item says what to check, why (with its source) and the tool for this vendor and transport;
items that do not apply (GPUDirect Storage when the storage layer does not use it, collective tests
on one node) are left out. Every item starts as status 'to run': the tool checks nothing by itself.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from .data import SoftwareData, VendorStack

Transport = Literal["infiniband", "roce", "ethernet"]


class ReadinessCheck(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    check: str
    why: str
    tool: str
    status: str = "to run"
    acceptance: list[dict[str, Any]] | None = Field(
        default=None, description="the acceptance targets this check is run against (engagement/acceptance.py)")


def readiness_checklist(
    *,
    stack: VendorStack,
    transport: str,
    multi_node: bool,
    gpudirect_storage: bool,
    data: SoftwareData,
    expected_busbw_bytes_per_s: float | None = None,
) -> list[ReadinessCheck]:
    """The checklist for one cluster, with vendor tools and the transport filled in."""
    if transport not in data.transports:
        raise InputError("fabric.technology", transport, f"one of {', '.join(sorted(data.transports))}")
    t = data.transports[transport]
    target = (
        f" ({expected_busbw_bytes_per_s / 1e9:.0f} GB/s bus bandwidth)" if expected_busbw_bytes_per_s else ""
    )
    fill = {**stack.components, "transport": t.label, "transport_tool": t.tool, "target": target}
    conditions = {"multi_node": multi_node, "gpudirect_storage": gpudirect_storage}
    checks = []
    for item in data.readiness:
        if item.when is not None and not conditions.get(item.when, True):
            continue
        checks.append(
            ReadinessCheck(
                id=item.id, check=item.check.format(**fill), why=item.why, tool=item.tool.format(**fill)
            )
        )
    return checks
