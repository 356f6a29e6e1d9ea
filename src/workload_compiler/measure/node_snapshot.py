"""A snapshot of the Linux layer of one node: the text of the files `wkc node-check` reads, the
symlinks it follows and the directories it lists. `collect` takes it from a live root (the edge);
everything after it (node_read.py, node_readiness.py, fleet.py) is pure over the snapshot, so a
snapshot taken on a GPU node can be checked anywhere (`--snapshot FILE`) and tests feed fixtures.
"""

from __future__ import annotations

import datetime as dt
import glob
import os
from pathlib import Path

from pydantic import Field

from ..spine.doc import Doc

SNAPSHOT_SCHEMA = "wkc-node-snapshot/1"
MAX_FILE_BYTES = 256 * 1024

# Files read (globs). /proc and /sys: proc(5), sysfs-bus-pci, sysfs-class-infiniband, sysfs-class-net.
FILES = (
    "/proc/cpuinfo", "/proc/meminfo", "/proc/cmdline", "/proc/version", "/proc/mounts", "/proc/self/limits",
    "/proc/sys/kernel/hostname", "/proc/sys/kernel/numa_balancing", "/proc/sys/vm/zone_reclaim_mode",
    "/etc/os-release", "/usr/local/cuda/version.json", "/usr/local/cuda/version.txt",
    "/sys/devices/system/node/node*/cpulist", "/sys/devices/system/node/node*/meminfo",
    "/sys/kernel/mm/hugepages/hugepages-*/nr_hugepages", "/sys/kernel/mm/hugepages/hugepages-*/free_hugepages",
    "/sys/kernel/mm/transparent_hugepage/enabled",
    "/sys/bus/pci/devices/*/class", "/sys/bus/pci/devices/*/vendor", "/sys/bus/pci/devices/*/device",
    "/sys/bus/pci/devices/*/numa_node", "/sys/bus/pci/devices/*/current_link_speed",
    "/sys/bus/pci/devices/*/current_link_width", "/sys/bus/pci/devices/*/max_link_speed",
    "/sys/bus/pci/devices/*/max_link_width",
    "/sys/class/net/*/operstate", "/sys/class/net/*/speed", "/sys/class/net/*/mtu", "/sys/class/net/*/type",
    "/sys/class/infiniband/*/fw_ver", "/sys/class/infiniband/*/hca_type", "/sys/class/infiniband/*/board_id",
    "/sys/class/infiniband/*/ports/*/state", "/sys/class/infiniband/*/ports/*/rate",
    "/sys/class/infiniband/*/ports/*/link_layer", "/sys/class/infiniband/*/ports/*/phys_state",
    "/proc/driver/nvidia/version", "/proc/driver/nvidia/gpus/*/information",
    "/sys/module/nvidia/version", "/sys/module/amdgpu/version", "/sys/module/mlx5_core/version",
    "/sys/module/nvidia_peermem/initstate", "/sys/module/nvidia_fs/initstate", "/sys/module/amdgpu/initstate",
    "/sys/module/ib_core/initstate", "/sys/module/nvidia_peermem/version",
    "/sys/class/nvme/*/model", "/sys/class/nvme/*/firmware_rev",
)
LINKS = ("/sys/class/net/*/device", "/sys/class/infiniband/*/device", "/sys/class/nvme/*/device")
LISTINGS = ("/dev/disk/by-id", "/dev/disk/by-path", "/etc/udev/rules.d", "/etc/systemd/network",
            "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/local/cuda/lib64",
            "/sys/class/infiniband", "/sys/class/net")
LISTED_PREFIXES = ("libnccl.so", "librccl.so", "libcudart.so", "libibverbs.so", "libmlx5.so")


class NodeSnapshot(Doc):
    schema_: str = Field(default=SNAPSHOT_SCHEMA, alias="schema")
    collected_at: str
    source: str = Field(description="where it was taken: 'live' or a note (fixtures say 'synthetic')")
    files: dict[str, str] = Field(default_factory=dict)
    links: dict[str, str] = Field(default_factory=dict, description="symlink -> the path it resolves to")
    listings: dict[str, list[str]] = Field(default_factory=dict, description="directory -> names in it")

    def text(self, path: str) -> str | None:
        return self.files.get(path)

    def under(self, prefix: str) -> dict[str, str]:
        """Files whose path starts with `prefix`."""
        return {p: t for p, t in self.files.items() if p.startswith(prefix)}


def _under_root(root: Path, pattern: str) -> list[tuple[str, Path]]:
    base = str(root).rstrip("/")
    return [(p[len(base):] if base else p, Path(p)) for p in sorted(glob.glob(base + pattern))]


def collect(root: Path = Path("/")) -> NodeSnapshot:
    """Read the node's files (unreadable ones are left out: absence is evidence too)."""
    files: dict[str, str] = {}
    for pattern in FILES:
        for name, path in _under_root(root, pattern):
            try:
                with path.open("rb") as fh:
                    files[name] = fh.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")
            except OSError:
                continue
    links: dict[str, str] = {}
    for pattern in LINKS:
        for name, path in _under_root(root, pattern):
            try:
                links[name] = os.path.realpath(path)[len(str(root).rstrip("/")):]
            except OSError:
                continue
    listings: dict[str, list[str]] = {}
    for d in LISTINGS:
        try:
            names = sorted(os.listdir(str(root).rstrip("/") + d))
        except OSError:
            continue
        if d.startswith(("/usr/lib", "/usr/local")):
            names = [n for n in names if n.startswith(LISTED_PREFIXES)]
        listings[d] = names
    return NodeSnapshot(collected_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), source="live",
                        files=files, links=links, listings=listings)
