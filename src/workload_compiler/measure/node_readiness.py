"""A node's report against the readiness checklist of the sized spec: pass, fail or not applicable
here, each with why. Pure over the report and the expectations.

The checklist ids are the software layer's (catalog/data/software_stacks.yaml `readiness`); the
expectations (GPUs and NICs per node, NIC rate, transport, multi-node, GPUDirect Storage) come from
the compiled spec. node-check adds three items the checklist leaves implicit: the GPUs the spec
sized are present, PCIe links run at their full width and speed, and the kernel lets RDMA pin
memory. What a node cannot show by itself (collective bandwidth across nodes, GPU diagnostics)
is "not applicable here" with the tool that shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import Field

from ..spine.doc import Doc
from .node_read import NodeReport

Status = Literal["pass", "fail", "not applicable here"]
NA: Status = "not applicable here"
SCHEMA = "wkc-node-check/1"
LINK_LAYER = {"infiniband": "InfiniBand", "roce": "Ethernet", "ethernet": "Ethernet"}



class Expectations(Doc):
    """What the sized spec asks of one node; None where nothing was sized (presence is checked)."""

    source: str
    checklist: list[str]
    vendor: str | None = None
    accelerator: str | None = None
    gpus_per_node: int | None = None
    nics_per_node: int | None = None
    nic_bits_per_s: float | None = None
    transport: str | None = None
    multi_node: bool = True
    gpudirect_storage: bool = False
    collective_target: str | None = None
    acceptance: dict[str, list[str]] = Field(
        default_factory=dict, description="readiness check id -> the sized spec's acceptance targets for it")


class Finding(Doc):
    check: str
    status: Status
    detail: str


class ItemResult(Doc):
    id: str
    status: Status
    why: str
    findings: list[Finding] = Field(default_factory=list)
    origin: Literal["spec checklist", "node-check"] = "spec checklist"


class NodeCheck(Doc):
    schema_: str = Field(default=SCHEMA, alias="schema")
    report: NodeReport
    expectations: Expectations
    items: list[ItemResult]
    summary: dict[str, int]


def _item(item_id: str, findings: list[Finding], origin: Literal["spec checklist", "node-check"] = "spec checklist",
          na_why: str | None = None) -> ItemResult:
    if na_why is not None:
        return ItemResult(id=item_id, status=NA, why=na_why, origin=origin)
    failed = [f for f in findings if f.status == "fail"]
    passed = [f for f in findings if f.status == "pass"]
    if failed:
        return ItemResult(id=item_id, status="fail", why="; ".join(f.detail for f in failed), findings=findings,
                          origin=origin)
    if passed:
        return ItemResult(id=item_id, status="pass", why="; ".join(f.detail for f in passed), findings=findings,
                          origin=origin)
    return ItemResult(id=item_id, status=NA, why="; ".join(f.detail for f in findings) or "nothing to check",
                      findings=findings, origin=origin)


def _f(check: str, ok: bool | None, detail: str) -> Finding:
    return Finding(check=check, status=NA if ok is None else ("pass" if ok else "fail"), detail=detail)


def _rdma_nics(r: NodeReport) -> list[str]:
    return [n.rdma_device for n in r.nics if n.rdma_device]


def gpus_present(r: NodeReport, e: Expectations) -> ItemResult:
    if e.gpus_per_node is None and not r.gpus:
        return _item("gpus_present", [], "node-check", "no GPU visible and no sized spec to expect one")
    fs = []
    if e.gpus_per_node is not None:
        fs.append(_f("count", len(r.gpus) == e.gpus_per_node,
                     f"{len(r.gpus)} GPUs visible on PCI, the spec sizes {e.gpus_per_node} per node ({e.source})"))
    if e.vendor is not None and r.gpus:
        vendors = sorted({g.vendor for g in r.gpus})
        fs.append(_f("vendor", vendors == [e.vendor], f"GPU vendor {', '.join(vendors)}; the spec sizes {e.vendor}"))
    if not fs:
        fs.append(_f("count", True, f"{len(r.gpus)} GPUs visible (no sized spec to compare with)"))
    return _item("gpus_present", fs, "node-check")


def driver_consistency(r: NodeReport, e: Expectations) -> ItemResult:
    if not r.gpus:
        return _item("driver_consistency", [], na_why="no GPU visible on PCI: no GPU driver to check")
    v = r.versions
    driver = v.get("nvidia_driver") if r.gpus[0].vendor == "nvidia" else v.get("amdgpu")
    fs = [_f("driver", bool(driver), f"GPU driver {driver}" if driver else "GPU driver version not readable "
             "(/sys/module/nvidia/version, /proc/driver/nvidia/version): is the driver loaded?")]
    libs = ", ".join(f"{k} {v[k]}" for k in ("cuda", "nccl", "rccl", "mlx5_core", "nic_firmware") if k in v)
    fs.append(_f("versions", None, f"recorded for --fleet: {libs or 'no runtime or collectives library found'}"))
    vbios = sorted({g.vbios for g in r.gpus if g.vbios})
    if len(vbios) > 1:
        fs.append(_f("gpu firmware", False, f"GPUs on this node run different VBIOS: {', '.join(vbios)}"))
    fws = sorted({n.firmware for n in r.nics if n.firmware and n.rdma_device})
    if len(fws) > 1:
        fs.append(_f("nic firmware", False, f"RDMA NICs on this node run different firmware: {', '.join(fws)}"))
    return _item("driver_consistency", fs)


def numa_cpu_affinity(r: NodeReport, e: Expectations) -> ItemResult:
    if not r.gpus:
        return _item("numa_cpu_affinity", [], na_why="no GPU visible: no GPU-NIC-CPU placement to check")
    fs = []
    multi_socket = len(r.numa) > 1
    unknown = [g.pci for g in r.gpus if g.numa_node is None]
    if multi_socket:
        fs.append(_f("gpu numa", not unknown, f"GPUs without a NUMA node (numa_node -1): {', '.join(unknown)}"
                     if unknown else f"every GPU reports its NUMA node ({len(r.numa)} NUMA nodes)"))
    else:
        fs.append(_f("gpu numa", True, "one NUMA node: every GPU, NIC and core share it"))
    if e.multi_node and multi_socket:
        rdma_numa = {n.numa_node for n in r.nics if n.rdma_device}
        lonely = [g.pci for g in r.gpus if g.numa_node is not None and g.numa_node not in rdma_numa]
        fs.append(_f("gpu-nic numa", not lonely and bool(rdma_numa),
                     f"GPUs with no RDMA NIC on their NUMA node: {', '.join(lonely)}" if lonely or not rdma_numa
                     else "every GPU has an RDMA NIC on its NUMA node"))
    bal = r.sysctl.get("kernel.numa_balancing")
    if bal is not None:
        fs.append(_f("numa balancing", None, f"kernel.numa_balancing = {bal} (ranks are pinned by the launcher)"))
    return _item("numa_cpu_affinity", fs)


def hugepages(r: NodeReport, e: Expectations) -> ItemResult:
    reserved = {size: v for size, v in r.hugepages.items() if v.get("total", 0) > 0}
    thp = r.transparent_hugepages
    if reserved:
        pools = ", ".join(f"{v['total']} x {size} ({v.get('free', 0)} free)" for size, v in sorted(reserved.items()))
        return _item("hugepages", [_f("pool", r.hugetlbfs_mounted,
                                      f"reserved {pools}" + ("; hugetlbfs mounted" if r.hugetlbfs_mounted
                                                             else "; no hugetlbfs mount: reserved but not usable"))])
    if thp in ("always", "madvise"):
        return _item("hugepages", [_f("thp", True, f"no reserved pool; transparent hugepages '{thp}' serve "
                                      "requests (enough for NCCL and PyTorch; a stack needing a reserved pool, "
                                      "e.g. DPDK, needs vm.nr_hugepages)")])
    return _item("hugepages", [_f("pool", False, "no reserved hugepages and transparent hugepages "
                                  f"'{thp or 'unknown'}'")])


def rdma_transport(r: NodeReport, e: Expectations) -> ItemResult:
    if not e.multi_node:
        return _item("rdma_transport", [], na_why="the sized job fits one node: no scale-out fabric")
    if not r.gpus and e.gpus_per_node is None:
        return _item("rdma_transport", [], na_why="not a GPU node and no sized spec")
    nics = [n for n in r.nics if n.rdma_device]
    if not nics:
        return _item("rdma_transport", [_f("devices", False, "no RDMA device (/sys/class/infiniband is empty): "
                                           "the compute fabric needs InfiniBand or RoCE")])
    fs = []
    ports = [(n.rdma_device, p) for n in nics for p in n.ports]
    down = [f"{d}/{p.port} {p.state}" for d, p in ports if "ACTIVE" not in p.state.upper()]
    fs.append(_f("port state", not down, f"ports not ACTIVE: {', '.join(down)}" if down
                 else f"{len(ports)} RDMA ports ACTIVE"))
    if e.transport is not None:
        want = LINK_LAYER.get(e.transport, "")
        wrong = [f"{d}/{p.port} {p.link_layer}" for d, p in ports if p.link_layer and p.link_layer != want]
        fs.append(_f("link layer", not wrong, f"link layer is not {want} ({e.transport}): {', '.join(wrong)}"
                     if wrong else f"link layer {want} ({e.transport})"))
    layer = LINK_LAYER.get(e.transport) if e.transport else None
    active = [p for _, p in ports if "ACTIVE" in p.state.upper() and (layer is None or p.link_layer == layer)]
    if e.nic_bits_per_s is not None:
        slow = [f"{p.rate_bits_per_s / 1e9:.0f} Gb/s" for _, p in ports if "ACTIVE" in p.state.upper()
                and p.rate_bits_per_s is not None and p.rate_bits_per_s < e.nic_bits_per_s]
        fs.append(_f("rate", not slow, f"ports below the sized {e.nic_bits_per_s / 1e9:.0f} Gb/s: {', '.join(slow)}"
                     if slow else f"ports at {e.nic_bits_per_s / 1e9:.0f} Gb/s or more"))
    if e.nics_per_node is not None:
        fs.append(_f("count", len(active) >= e.nics_per_node,
                     f"{len(active)} active compute ports, the spec sizes {e.nics_per_node} NICs per node"))
    return _item("rdma_transport", fs)


def rdma_memlock(r: NodeReport, e: Expectations) -> ItemResult:
    if not e.multi_node or not (r.gpus or e.gpus_per_node):
        return _item("rdma_memlock", [], "node-check", "no RDMA job on this node")
    if r.memlock is None:
        return _item("rdma_memlock", [_f("memlock", None, "max locked memory not readable")], "node-check")
    soft, hard = r.memlock
    ok = soft == "unlimited"
    return _item("rdma_memlock", [_f("memlock", ok, f"max locked memory {soft} (hard {hard}) for this shell: "
                                     + ("RDMA can register (pin) the buffers it needs" if ok else
                                        "RDMA registration of large buffers fails; set memlock unlimited "
                                        "(limits.conf, Slurm PropagateResourceLimits)"))], "node-check")


def persistent_device_naming(r: NodeReport, e: Expectations) -> ItemResult:
    fs = []
    if r.netdevs:
        pinned = any(name.endswith((".link", ".rules")) for name in r.udev_rules)
        kernel = r.kernel_named_netdevs
        fs.append(_f("net names", not kernel or pinned,
                     f"kernel enumeration names ({', '.join(kernel)}) with no udev/systemd .link rule: the order "
                     "can change across reboots" if kernel and not pinned else
                     f"predictable or rule-pinned interface names ({', '.join(r.netdevs)})"))
    if r.disks_by_id is not None or r.disks_by_path is not None:
        fs.append(_f("disk names", bool(r.disks_by_id), f"{r.disks_by_id or 0} /dev/disk/by-id and "
                     f"{r.disks_by_path or 0} by-path names"))
    else:
        fs.append(_f("disk names", False, "no /dev/disk/by-id: udev does not manage stable block device names here"))
    return _item("persistent_device_naming", fs)


def gpudirect_rdma(r: NodeReport, e: Expectations) -> ItemResult:
    if not r.gpus or not _rdma_nics(r):
        return _item("gpudirect_rdma", [], na_why="needs a GPU and an RDMA NIC on this node"
                     + ("" if r.gpus else " (no GPU visible)"))
    if not e.multi_node:
        return _item("gpudirect_rdma", [], na_why="the sized job fits one node")
    fs = []
    if r.gpus[0].vendor == "nvidia":
        fs.append(_f("peer memory", "nvidia_peermem" in r.modules, "nvidia_peermem loaded" if
                     "nvidia_peermem" in r.modules else "nvidia_peermem not loaded (modprobe nvidia-peermem; or "
                     "confirm the stack uses dma-buf with the open kernel module)"))
    else:
        fs.append(_f("peer memory", None, "AMD peer memory: no sysfs marker read; run a GPU-buffer RDMA test"))
    iommu = r.cmdline.get("intel_iommu") or r.cmdline.get("amd_iommu")
    translated = iommu == "on" and r.cmdline.get("iommu") != "pt"
    fs.append(_f("iommu", not translated, "IOMMU translating DMA (intel/amd_iommu=on without iommu=pt): GPUDirect "
                 "RDMA peer traffic is remapped or blocked" if translated else
                 f"IOMMU {'passthrough' if r.cmdline.get('iommu') == 'pt' else 'not forced on'} on the kernel line"))
    return _item("gpudirect_rdma", fs)


def gpudirect_storage(r: NodeReport, e: Expectations) -> ItemResult:
    if not r.gpus:
        return _item("gpudirect_storage", [], na_why="no GPU visible")
    ok = "nvidia_fs" in r.modules
    return _item("gpudirect_storage", [_f("nvidia_fs", ok, "nvidia_fs (GPUDirect Storage) loaded" if ok else
                                          "nvidia_fs not loaded: cuFile falls back to the host path")])


def pcie_links(r: NodeReport, e: Expectations) -> ItemResult:
    devices = [(g.pci, "GPU", g.link, g.link_degraded) for g in r.gpus]
    devices += [(n.pci, "NIC", n.link, n.link_degraded) for n in r.nics if n.rdma_device]
    known = [d for d in devices if d[2]]
    if not known:
        return _item("pcie_links", [], "node-check", "no GPU or RDMA NIC with a readable PCIe link")
    slow = [f"{kind} {pci} at {link}" for pci, kind, link, bad in known if bad]
    return _item("pcie_links", [_f("link", not slow, f"links below their maximum (down-trained): {', '.join(slow)}"
                                   if slow else f"{len(known)} GPU/NIC links at full width and speed")], "node-check")


def _not_here(item_id: str, e: Expectations) -> ItemResult:
    text = {"collective_tests": "a node cannot show collective bandwidth across nodes: run nccl-tests "
                                "(all_reduce_perf) within the node, then across all nodes"
                                + (f"; the checklist asks: {e.collective_target}" if e.collective_target else ""),
            "gpu_diagnostics": "node-check reads configuration; it runs no GPU diagnostics: run the vendor "
                               "diagnostics (DCGM: dcgmi diag -r 3)"}.get(item_id, "no node-level reading for it")
    if e.acceptance.get(item_id):
        text += "; pass when: " + "; ".join(e.acceptance[item_id])
    return _item(item_id, [], na_why=text)


CHECKS: dict[str, Callable[[NodeReport, Expectations], ItemResult]] = {
    "driver_consistency": driver_consistency, "numa_cpu_affinity": numa_cpu_affinity, "hugepages": hugepages,
    "rdma_transport": rdma_transport, "persistent_device_naming": persistent_device_naming,
    "gpudirect_rdma": gpudirect_rdma, "gpudirect_storage": gpudirect_storage}
EXTRA = (gpus_present, pcie_links, rdma_memlock)


def check_node(r: NodeReport, e: Expectations) -> NodeCheck:
    items = [fn(r, e) for fn in EXTRA[:1]]
    items += [CHECKS[i](r, e) if i in CHECKS else _not_here(i, e) for i in e.checklist]
    items += [fn(r, e) for fn in EXTRA[1:]]
    summary = {s: sum(1 for i in items if i.status == s) for s in ("pass", "fail", NA)}
    return NodeCheck.model_validate({"schema": SCHEMA, "report": r, "expectations": e, "items": items,
                                     "summary": summary})
