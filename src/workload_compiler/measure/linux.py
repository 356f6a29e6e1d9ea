"""Readers of the Linux text interfaces (/proc, /sys, /etc): pure functions over file contents.

Each takes the text a file holds and returns plain values, so tests feed fixture text and the
probes (probe.py) only read files. Formats: proc(5) for /proc/cpuinfo, /proc/meminfo, /proc/mounts,
/proc/cmdline, /proc/self/limits; os-release(5); the kernel's cpulist format
(Documentation/admin-guide/cputopology.rst, "0-3,8-11").
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class CpuInfo:
    model: str
    sockets: int
    cores: int          # physical cores (unique socket, core id pairs)
    threads: int        # logical CPUs
    flags: frozenset[str]


def _records(text: str) -> list[dict[str, str]]:
    """Blank-line separated 'key : value' blocks (one per logical CPU in /proc/cpuinfo)."""
    out: list[dict[str, str]] = []
    block: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if block:
                out.append(block)
                block = {}
            continue
        key, sep, value = line.partition(":")
        if sep:
            block[key.strip().lower()] = value.strip()
    if block:
        out.append(block)
    return out


def parse_cpuinfo(text: str) -> CpuInfo:
    """Model, sockets, physical cores and logical CPUs from /proc/cpuinfo (x86 and Arm layouts)."""
    blocks = [b for b in _records(text) if "processor" in b]
    threads = len(blocks)
    first = blocks[0] if blocks else {}
    model = first.get("model name") or first.get("cpu model") or first.get("hardware") or ""
    if not model and "cpu part" in first:   # Arm: implementer and part codes, no name
        model = f"arm implementer {first.get('cpu implementer', '?')} part {first['cpu part']}"
    sockets = {b.get("physical id", "0") for b in blocks}
    cores = {(b.get("physical id", "0"), b.get("core id", b.get("processor", ""))) for b in blocks}
    flags = frozenset((first.get("flags") or first.get("features") or "").split())
    return CpuInfo(model=model or "unknown", sockets=max(len(sockets), 1), cores=max(len(cores), 1),
                   threads=threads, flags=flags)


def parse_meminfo(text: str) -> dict[str, float]:
    """/proc/meminfo -> {key: value}; 'kB' values in bytes (the kernel's kB is 1024 bytes)."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        parts = rest.split()
        if not sep or not parts:
            continue
        try:
            value = float(parts[0])
        except ValueError:
            continue
        out[key.strip()] = value * 1024.0 if len(parts) > 1 and parts[1] == "kB" else value
    return out


def parse_os_release(text: str) -> dict[str, str]:
    """os-release(5): KEY=value lines, values possibly shell-quoted."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, raw = line.partition("=")
        try:
            parts = shlex.split(raw)
        except ValueError:
            parts = [raw]
        out[key] = " ".join(parts)    # an unquoted value with spaces (invalid, but seen) keeps its words
    return out


def parse_cpulist(text: str) -> list[int]:
    """'0-3,8-11' -> [0, 1, 2, 3, 8, 9, 10, 11]; empty text -> []."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        cpus += list(range(int(lo), int(hi) + 1)) if sep else [int(lo)]
    return cpus


@dataclass(frozen=True, kw_only=True)
class Mount:
    device: str
    mountpoint: str
    fstype: str
    options: tuple[str, ...]


def parse_mounts(text: str) -> list[Mount]:
    """/proc/mounts lines (octal escapes such as \\040 for a space decoded)."""
    def unescape(s: str) -> str:
        return s.encode("latin-1").decode("unicode_escape") if "\\" in s else s
    out: list[Mount] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            out.append(Mount(device=unescape(parts[0]), mountpoint=unescape(parts[1]), fstype=parts[2],
                             options=tuple(parts[3].split(","))))
    return out


def mount_of(path: str, mounts: list[Mount]) -> Mount | None:
    """The mount a path lives on: the longest mountpoint that is a prefix of it."""
    best: Mount | None = None
    for m in mounts:
        root = m.mountpoint.rstrip("/") or "/"
        inside = path == root or path.startswith(root + "/") or root == "/"
        if inside and (best is None or len(root) > len(best.mountpoint.rstrip("/") or "/")):
            best = m
    return best


def parse_cmdline(text: str) -> dict[str, str]:
    """/proc/cmdline -> {param: value}; a bare flag maps to ''."""
    out: dict[str, str] = {}
    for token in text.split():
        if token == "--":          # what follows is for init, not the kernel
            break
        key, _, value = token.partition("=")
        out[key] = value
    return out


def parse_limits(text: str) -> dict[str, tuple[str, str]]:
    """/proc/<pid>/limits -> {limit name: (soft, hard)}."""
    out: dict[str, tuple[str, str]] = {}
    for line in text.splitlines()[1:]:
        name = line[:26].strip()
        fields = line[26:].split()
        if name and len(fields) >= 2:
            out[name] = (fields[0], fields[1])
    return out


def selected_word(text: str) -> str:
    """'always [madvise] never' -> 'madvise' (sysfs multiple-choice files)."""
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text.strip()
