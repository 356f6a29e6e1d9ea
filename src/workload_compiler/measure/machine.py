"""The machine a profile ran on: CPU, memory, the storage under the data set, OS, Python and
library versions. Reading files is done by `probe_machine`; `machine_info` is pure over the texts,
so tests feed fixture files.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from ..intake.measured import MachineRef
from ..spine.doc import Doc
from ..units import GIB
from .linux import mount_of, parse_cpuinfo, parse_meminfo, parse_mounts, parse_os_release

Reader = Callable[[str], str | None]   # absolute path -> its text, or None when it cannot be read


class StorageInfo(Doc):
    path: str
    mountpoint: str | None = None
    filesystem: str | None = None
    device: str | None = None           # block device name, e.g. nvme0n1, vda
    model: str | None = None
    rotational: bool | None = None


class MachineInfo(Doc):
    hostname: str
    cpu_model: str
    sockets: int
    cores: int
    threads: int
    memory_bytes: float | None
    storage: StorageInfo
    os: str
    kernel: str
    python: str
    libraries: dict[str, str]

    def ref(self) -> MachineRef:
        """The `cpu` machine reference a profile's values are bound to."""
        mem = f", {self.memory_bytes / GIB:.1f} GiB" if self.memory_bytes else ""
        disk = self.storage.device or self.storage.filesystem or "?"
        return MachineRef(kind="cpu", id=self.cpu_model,
                          name=f"{self.cores} cores / {self.threads} threads{mem}, storage {disk}, {self.os}")


def storage_info(path: str, dev: tuple[int, int] | None, read: Reader,
                 resolve: Callable[[str], str | None]) -> StorageInfo:
    """The mount and block device under `path`; `dev` is (major, minor) of its st_dev and
    `resolve` turns a /sys/dev/block link into its target path."""
    mount = mount_of(path, parse_mounts(read("/proc/mounts") or ""))
    info = StorageInfo(path=path, mountpoint=mount.mountpoint if mount else None,
                       filesystem=mount.fstype if mount else None)
    target = resolve(f"/sys/dev/block/{dev[0]}:{dev[1]}") if dev and dev[0] else None
    if target is None and mount is not None and mount.device.startswith("/dev/"):
        target = resolve(f"/sys/class/block/{mount.device.removeprefix('/dev/')}")
    if target is None:
        return info
    name = target.rstrip("/").rsplit("/", 1)[-1]
    disk = target.rstrip("/").rsplit("/", 2)[-2] if read(f"{target}/partition") is not None else name
    model = (read(f"/sys/block/{disk}/device/model") or "").strip() or None
    rot = (read(f"/sys/block/{disk}/queue/rotational") or "").strip()
    return info.model_copy(update={"device": disk, "model": model, "rotational": rot == "1" if rot else None})


def machine_info(read: Reader, storage: StorageInfo, *, hostname: str, kernel: str, python: str,
                 libraries: dict[str, str]) -> MachineInfo:
    cpu = parse_cpuinfo(read("/proc/cpuinfo") or "")
    mem = parse_meminfo(read("/proc/meminfo") or "").get("MemTotal")
    osr = parse_os_release(read("/etc/os-release") or read("/usr/lib/os-release") or "")
    return MachineInfo(hostname=hostname, cpu_model=cpu.model, sockets=cpu.sockets, cores=cpu.cores,
                       threads=cpu.threads or (os.cpu_count() or 1), memory_bytes=mem, storage=storage,
                       os=osr.get("PRETTY_NAME") or osr.get("NAME") or platform.system(), kernel=kernel,
                       python=python, libraries=libraries)


def wkc_version() -> str:
    try:
        return metadata.version("workload-compiler")
    except metadata.PackageNotFoundError:
        return "unknown"


def read_text(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _resolve(path: str) -> str | None:
    p = Path(path)
    return str(p.resolve()) if p.exists() else None


def library_versions() -> dict[str, str]:
    """Python and the libraries the stages use, with NumPy's BLAS (it sets the compute rate)."""
    import numpy as np
    out = {"numpy": np.__version__}
    for dist in ("workload-compiler", "pydantic"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    try:
        cfg = np.show_config(mode="dicts")
        blas = (cfg or {}).get("Build Dependencies", {}).get("blas", {})
        if blas.get("name"):
            out["blas"] = f"{blas['name']} {blas.get('version', '')}".strip()
    except (TypeError, AttributeError):   # older NumPy without mode="dicts"
        pass
    return out


def probe_machine(data_path: Path) -> MachineInfo:
    """Read this machine (the edge: files under /proc, /sys, /etc)."""
    try:
        st = os.stat(data_path)
        dev: tuple[int, int] | None = (os.major(st.st_dev), os.minor(st.st_dev))
    except OSError:
        dev = None
    storage = storage_info(str(data_path.resolve()), dev, read_text, _resolve)
    return machine_info(read_text, storage, hostname=platform.node(), kernel=platform.release(),
                        python=f"{platform.python_implementation()} {platform.python_version()}",
                        libraries=library_versions())
