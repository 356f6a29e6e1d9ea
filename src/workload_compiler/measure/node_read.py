"""A node snapshot -> what the readiness checks need: CPU and NUMA topology, GPUs and NICs with
their PCIe location and NUMA node, RDMA ports, hugepages, kernel parameters, driver and library
versions, device naming. Pure: every value comes from the snapshot's text.

PCI class codes (PCI SIG Code and ID Assignment spec): 0x0300 VGA and 0x0302 3D controller (GPUs),
0x0200 Ethernet, 0x0207 InfiniBand. Vendor ids: 0x10de NVIDIA, 0x1002 AMD, 0x15b3 Mellanox/NVIDIA
networking. RDMA port state and rate follow sysfs-class-infiniband ("4: ACTIVE", "400 Gb/sec (4X NDR)").
"""

from __future__ import annotations

import contextlib
import json
import re

from pydantic import Field

from ..spine.doc import Doc
from .linux import (
    parse_cmdline,
    parse_cpuinfo,
    parse_cpulist,
    parse_limits,
    parse_meminfo,
    parse_mounts,
    parse_os_release,
    selected_word,
)
from .node_snapshot import NodeSnapshot

GPU_VENDORS = {"0x10de": "nvidia", "0x1002": "amd"}
GPU_CLASSES = ("0x0300", "0x0302")
NIC_CLASSES = {"0x0200": "ethernet", "0x0207": "infiniband"}
NIC_VENDORS = {"0x15b3": "mellanox", "0x8086": "intel", "0x14e4": "broadcom", "0x1af4": "virtio", "0x1d0f": "amazon"}
PCI_ADDRESS = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
# Kernel parameters that decide the RDMA / GPU path (kernel-parameters.txt): IOMMU mode, PCIe
# power states and ACS, hugepage pools, CPU isolation. Others are left out of the report.
CMDLINE_KEYS = ("iommu", "intel_iommu", "amd_iommu", "pci", "pcie_aspm", "pcie_acs_override", "hugepagesz",
                "default_hugepagesz", "hugepages", "transparent_hugepage", "isolcpus", "nohz_full", "numa_balancing",
                "processor.max_cstate", "intel_idle.max_cstate")
KERNEL_NET_NAME = re.compile(r"^(eth|ib)\d+$")    # kernel enumeration-order names (not predictable names)



class NumaNode(Doc):
    id: int
    cpus: list[int]
    memory_bytes: float | None = None


class Gpu(Doc):
    pci: str
    vendor: str
    device_id: str
    numa_node: int | None
    model: str | None = None
    vbios: str | None = None
    link: str | None = None           # "16 GT/s x16 of 32 GT/s x16"
    link_degraded: bool = False


class RdmaPort(Doc):
    port: int
    state: str
    rate_bits_per_s: float | None
    link_layer: str | None


class Nic(Doc):
    pci: str
    vendor: str
    kind: str                          # ethernet | infiniband (PCI class)
    numa_node: int | None
    netdevs: list[str] = Field(default_factory=list)
    rdma_device: str | None = None
    firmware: str | None = None
    ports: list[RdmaPort] = Field(default_factory=list)
    link: str | None = None
    link_degraded: bool = False


class NodeReport(Doc):
    hostname: str
    collected_at: str
    source: str
    cpu_model: str
    sockets: int
    cores: int
    threads: int
    memory_bytes: float | None
    numa: list[NumaNode]
    gpus: list[Gpu]
    nics: list[Nic]
    hugepages: dict[str, dict[str, int]] = Field(description="page size -> total, free")
    hugetlbfs_mounted: bool
    transparent_hugepages: str | None
    cmdline: dict[str, str]
    sysctl: dict[str, str]
    memlock: tuple[str, str] | None = Field(description="max locked memory (soft, hard) of the checking shell")
    versions: dict[str, str]
    modules: list[str]
    netdevs: list[str]
    kernel_named_netdevs: list[str]
    udev_rules: list[str]
    disks_by_id: int | None
    disks_by_path: int | None


def _int(text: str | None) -> int | None:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def _rate(text: str | None) -> float | None:
    """'400 Gb/sec (4X NDR)' -> 4e11 bits/s."""
    m = re.match(r"\s*([\d.]+)\s*Gb/sec", text or "")
    return float(m.group(1)) * 1e9 if m else None


def _link(s: NodeSnapshot, pci: str) -> tuple[str | None, bool]:
    base = f"/sys/bus/pci/devices/{pci}/"
    cur_s, cur_w = s.text(base + "current_link_speed"), s.text(base + "current_link_width")
    max_s, max_w = s.text(base + "max_link_speed"), s.text(base + "max_link_width")
    if cur_s is None or cur_w is None:
        return None, False
    text = f"{cur_s.strip()} x{cur_w.strip()}"
    if max_s is None or max_w is None:
        return text, False
    degraded = (_int(cur_w) or 0) < (_int(max_w) or 0) or _speed(cur_s) < _speed(max_s)
    return f"{text} of {max_s.strip()} x{max_w.strip()}", degraded


def _speed(text: str) -> float:
    m = re.match(r"\s*([\d.]+)", text)
    return float(m.group(1)) if m else 0.0


def _pci_devices(s: NodeSnapshot) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for path, text in s.under("/sys/bus/pci/devices/").items():
        parts = path.split("/")
        if len(parts) == 7:
            out.setdefault(parts[5], {})[parts[6]] = text.strip()
    return out


def _nvidia_gpu_info(s: NodeSnapshot) -> dict[str, dict[str, str]]:
    """/proc/driver/nvidia/gpus/<pci>/information: 'Model: ...', 'Video BIOS: ...', keyed by PCI address."""
    out: dict[str, dict[str, str]] = {}
    for path, text in s.under("/proc/driver/nvidia/gpus/").items():
        fields = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in text.splitlines()) if v}
        out[path.split("/")[5].lower()] = fields
    return out


def _gpus(s: NodeSnapshot, pci: dict[str, dict[str, str]]) -> list[Gpu]:
    info = _nvidia_gpu_info(s)
    gpus = []
    for addr, f in sorted(pci.items()):
        if f.get("class", "")[:6] not in GPU_CLASSES or f.get("vendor") not in GPU_VENDORS:
            continue
        link, degraded = _link(s, addr)
        extra = info.get(addr.lower(), {})
        numa = _int(f.get("numa_node"))
        gpus.append(Gpu(pci=addr, vendor=GPU_VENDORS[f["vendor"]], device_id=f.get("device", ""),
                        numa_node=None if numa is None or numa < 0 else numa, model=extra.get("Model"),
                        vbios=extra.get("Video BIOS"), link=link, link_degraded=degraded))
    return gpus


def _nics(s: NodeSnapshot, pci: dict[str, dict[str, str]]) -> list[Nic]:
    by_pci: dict[str, Nic] = {}
    for addr, f in sorted(pci.items()):
        kind = NIC_CLASSES.get(f.get("class", "")[:6])
        if kind is None:
            continue
        link, degraded = _link(s, addr)
        numa = _int(f.get("numa_node"))
        by_pci[addr] = Nic(pci=addr, vendor=NIC_VENDORS.get(f.get("vendor", ""), f.get("vendor", "?")), kind=kind,
                           numa_node=None if numa is None or numa < 0 else numa, link=link, link_degraded=degraded)
    for link_path, target in s.links.items():
        parts = link_path.split("/")
        found = PCI_ADDRESS.findall(target)
        addr = found[-1] if found else ""
        if addr not in by_pci or len(parts) < 5:
            continue
        nic, name = by_pci[addr], parts[4]
        if link_path.startswith("/sys/class/net/"):
            nic.netdevs.append(name)
        elif link_path.startswith("/sys/class/infiniband/"):
            base = f"/sys/class/infiniband/{name}/"
            ports = []
            for path, text in sorted(s.under(base + "ports/").items()):
                if path.endswith("/state"):
                    port = path.removeprefix(base + "ports/").split("/")[0]
                    pbase = f"{base}ports/{port}/"
                    layer = (s.text(pbase + "link_layer") or "").strip() or None
                    ports.append(RdmaPort(port=int(port), state=text.strip(),
                                          rate_bits_per_s=_rate(s.text(pbase + "rate")), link_layer=layer))
            nic.rdma_device, nic.ports = name, ports
            nic.firmware = (s.text(base + "fw_ver") or "").strip() or None
    return list(by_pci.values())


def _versions(s: NodeSnapshot) -> dict[str, str]:
    v: dict[str, str] = {}
    kernel = (s.text("/proc/version") or "").split()
    if len(kernel) >= 3:
        v["kernel"] = kernel[2]
    osr = parse_os_release(s.text("/etc/os-release") or "")
    if osr.get("PRETTY_NAME"):
        v["os"] = osr["PRETTY_NAME"]
    nv = s.text("/sys/module/nvidia/version") or ""
    m = re.search(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)", s.text("/proc/driver/nvidia/version") or "")
    if nv.strip() or m:
        v["nvidia_driver"] = nv.strip() or (m.group(1) if m else "")
    for mod in ("amdgpu", "mlx5_core"):
        text = (s.text(f"/sys/module/{mod}/version") or "").strip()
        if text:
            v[f"{mod}"] = text
    cuda = s.text("/usr/local/cuda/version.json")
    if cuda:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            v["cuda"] = str(json.loads(cuda)["cuda"]["version"])
    elif s.text("/usr/local/cuda/version.txt"):
        v["cuda"] = (s.text("/usr/local/cuda/version.txt") or "").split()[-1]
    for lib, key in (("libnccl.so.", "nccl"), ("librccl.so.", "rccl")):
        found = sorted({n.removeprefix(lib) for names in s.listings.values() for n in names
                        if n.startswith(lib) and n.removeprefix(lib).count(".") >= 2})
        if found:
            v[key] = ",".join(found)
    fw = sorted({nic for nic in (s.text(p) for p in s.files if p.endswith("/fw_ver")) if nic})
    if fw:
        v["nic_firmware"] = ",".join(f.strip() for f in fw)
    return v


def node_report(s: NodeSnapshot) -> NodeReport:
    cpu = parse_cpuinfo(s.text("/proc/cpuinfo") or "")
    numa = []
    for path, text in sorted(s.under("/sys/devices/system/node/").items()):
        m = re.match(r"/sys/devices/system/node/node(\d+)/cpulist$", path)
        if m:
            mem = parse_meminfo(re.sub(r"^Node \d+ ", "", s.text(path.replace("cpulist", "meminfo")) or "",
                                       flags=re.M)).get("MemTotal")
            numa.append(NumaNode(id=int(m.group(1)), cpus=parse_cpulist(text), memory_bytes=mem))
    pci = _pci_devices(s)
    huge: dict[str, dict[str, int]] = {}
    for path, text in s.under("/sys/kernel/mm/hugepages/").items():
        size, name = path.split("/")[5].removeprefix("hugepages-"), path.rsplit("/", 1)[-1]
        huge.setdefault(size, {})["total" if name == "nr_hugepages" else "free"] = _int(text) or 0
    thp = s.text("/sys/kernel/mm/transparent_hugepage/enabled")
    limits = parse_limits(s.text("/proc/self/limits") or "")
    sysctl = {k: (s.text(p) or "").strip() for k, p in (("kernel.numa_balancing", "/proc/sys/kernel/numa_balancing"),
                                                         ("vm.zone_reclaim_mode", "/proc/sys/vm/zone_reclaim_mode"))
              if s.text(p) is not None}
    modules = sorted({p.split("/")[3] for p in s.files if p.startswith("/sys/module/") and p.endswith("/initstate")
                      and (s.files[p].strip() == "live")})
    netdevs = sorted(set(s.listings.get("/sys/class/net", [])) | {p.split("/")[4] for p in s.under("/sys/class/net/")})
    physical = {p.split("/")[4] for p in s.links if p.startswith("/sys/class/net/")}
    netdevs = [n for n in netdevs if n in physical]     # a netdev without a device link is virtual (lo, bridges)
    udev = sorted(s.listings.get("/etc/udev/rules.d", []) + s.listings.get("/etc/systemd/network", []))
    by_id, by_path = s.listings.get("/dev/disk/by-id"), s.listings.get("/dev/disk/by-path")
    return NodeReport(
        hostname=(s.text("/proc/sys/kernel/hostname") or "unknown").strip(), collected_at=s.collected_at,
        source=s.source, cpu_model=cpu.model, sockets=cpu.sockets, cores=cpu.cores, threads=cpu.threads,
        memory_bytes=parse_meminfo(s.text("/proc/meminfo") or "").get("MemTotal"), numa=numa, gpus=_gpus(s, pci),
        nics=_nics(s, pci), hugepages=huge,
        hugetlbfs_mounted=any(m.fstype == "hugetlbfs" for m in parse_mounts(s.text("/proc/mounts") or "")),
        transparent_hugepages=selected_word(thp) if thp else None,
        cmdline={k: v for k, v in parse_cmdline(s.text("/proc/cmdline") or "").items() if k in CMDLINE_KEYS},
        sysctl=sysctl, memlock=limits.get("Max locked memory"), versions=_versions(s), modules=modules,
        netdevs=netdevs, kernel_named_netdevs=[n for n in netdevs if KERNEL_NET_NAME.match(n)], udev_rules=udev,
        disks_by_id=None if by_id is None else len(by_id), disks_by_path=None if by_path is None else len(by_path))
