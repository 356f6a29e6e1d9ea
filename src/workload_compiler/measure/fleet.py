"""`wkc node-check --fleet DIR`: many nodes' reports side by side, and the differences that break a
job at scale. Pure over the reports.

A synchronous job runs at the pace of its slowest rank and fails with its first failing one, so
every property below must be identical on every node of a job (seed 001: "driver versions that
have to match across the cluster"); one odd node is the finding.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from pydantic import Field

from ..spine.doc import Doc
from .node_read import NodeReport
from .node_readiness import NodeCheck

Getter = Callable[[NodeReport], str | None]


def _gpu_models(r: NodeReport) -> str | None:
    return ", ".join(sorted({g.model or g.device_id for g in r.gpus})) or None


def _ports(r: NodeReport) -> str | None:
    active = [p for n in r.nics for p in n.ports if "ACTIVE" in p.state.upper()]
    rates = Counter(f"{(p.rate_bits_per_s or 0) / 1e9:.0f} Gb/s {p.link_layer or ''}".strip() for p in active)
    return ", ".join(f"{n} x {rate}" for rate, n in sorted(rates.items())) or "none active"


def _hugepages(r: NodeReport) -> str | None:
    pools = [f"{v.get('total', 0)} x {size}" for size, v in sorted(r.hugepages.items()) if v.get("total", 0)]
    return (", ".join(pools) or "no pool") + f"; THP {r.transparent_hugepages}"


KEYS: tuple[tuple[str, Getter, str], ...] = (
    ("gpu driver", lambda r: r.versions.get("nvidia_driver") or r.versions.get("amdgpu"),
     "ranks on different GPU drivers: CUDA/ROCm runtime compatibility and NCCL behaviour differ; a job fails at "
     "init or runs at the slowest node's pace"),
    ("cuda", lambda r: r.versions.get("cuda"), "a different CUDA toolkit changes the kernels each rank runs"),
    ("nccl", lambda r: r.versions.get("nccl") or r.versions.get("rccl"),
     "NCCL versions must match across ranks: protocol and algorithm choices differ; mixed ranks hang or fail"),
    ("nic firmware", lambda r: r.versions.get("nic_firmware"),
     "different HCA firmware changes link training and adaptive routing: slow or flapping ranks"),
    ("nic driver", lambda r: r.versions.get("mlx5_core"), "a different RDMA driver stack (mlx5_core / OFED)"),
    ("gpu vbios", lambda r: ", ".join(sorted({g.vbios for g in r.gpus if g.vbios})) or None,
     "GPU firmware differs: clocks, power limits and fixes differ per node"),
    ("gpu model", _gpu_models, "different GPUs in one job: the slowest sets the pace, memory sizing breaks"),
    ("gpus", lambda r: str(len(r.gpus)), "a node with a missing GPU cannot host its ranks"),
    ("rdma ports", _ports, "a down or slower port makes that node's collectives the slowest in the job"),
    ("hugepages", _hugepages, "a stack that maps hugepages fails or falls back on the nodes without them"),
    ("memlock", lambda r: "/".join(r.memlock) if r.memlock else None,
     "RDMA memory registration fails on nodes with a locked-memory limit"),
    ("iommu", lambda r: ",".join(f"{k}={v}" for k, v in sorted(r.cmdline.items()) if "iommu" in k) or "default",
     "IOMMU mode differs: GPUDirect RDMA works on some nodes and not on others"),
    ("gpudirect modules", lambda r: ",".join(m for m in r.modules if m in ("nvidia_peermem", "nvidia_fs"))
     or "none", "GPUDirect RDMA / Storage loaded on some nodes only"),
    ("kernel", lambda r: r.versions.get("kernel"), "different kernels: driver modules and RDMA stack differ"),
    ("os", lambda r: r.versions.get("os"), "different OS images on nodes of one job"),
)


class Difference(Doc):
    key: str
    why: str
    values: dict[str, list[str]] = Field(description="value -> hosts")
    majority: str
    outliers: list[str]


class FleetReport(Doc):
    nodes: list[str]
    differences: list[Difference]
    identical: dict[str, str]
    failing: dict[str, list[str]] = Field(description="readiness item -> hosts where it fails")


def compare(checks: dict[str, NodeCheck]) -> FleetReport:
    """`checks`: a name per node (its hostname, or its file's name when two share one) -> its check."""
    differences: list[Difference] = []
    identical: dict[str, str] = {}
    for key, get, why in KEYS:
        values: dict[str, list[str]] = {}
        for host, c in checks.items():
            values.setdefault(get(c.report) or "(not found)", []).append(host)
        if len(values) == 1:
            identical[key] = next(iter(values))
            continue
        majority = max(values, key=lambda v: (len(values[v]), v != "(not found)"))
        differences.append(Difference(key=key, why=why, values={v: sorted(h) for v, h in sorted(values.items())},
                                      majority=majority,
                                      outliers=sorted(h for v, hs in values.items() if v != majority for h in hs)))
    failing: dict[str, list[str]] = {}
    for host, c in checks.items():
        for item in c.items:
            if item.status == "fail":
                failing.setdefault(item.id, []).append(host)
    return FleetReport(nodes=sorted(checks), differences=differences, identical=identical,
                       failing={k: sorted(v) for k, v in sorted(failing.items())})
