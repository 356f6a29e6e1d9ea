"""Communication time of one step per GPU: halo, all-to-all, all-reduce, broadcast (alpha-beta).

Links: inside a scale-up domain (NVLink / Infinity Fabric) at NVLINK_EFFICIENCY of the catalog
figure with latency NVLINK_LATENCY_S; across nodes at NIC_EFFICIENCY of the per-GPU NIC rate
with NIC_LATENCY_S (constants shared with perf/collectives.py).

- halo: the domain (a cube of units, or columns x levels) is split into a balanced grid of
  sub-domains (as MPI_Dims_create); a GPU sends surface units x bytes through each face with a
  neighbour. The slowest GPU has the most faces leaving its scale-up domain; its in-domain and
  off-domain traffic run at the same time, so the slower of the two sets the time.
- all-to-all (FFT transposes, LogGP): a slab FFT (GPUs <= grid side) transposes once among all
  GPUs, a pencil FFT twice among sqrt(GPUs); t = (p-k)/p S / (B_nic f_a2a) + (p-k) g + alpha,
  plus packing and unpacking S through HBM (4 S bytes).
- all-reduce: the cheaper of recursive doubling (log2 p (alpha + S/B), small messages: Krylov
  dot products) and the ring (2 (p-1)/p S/B + 2 (p-1) alpha) (Thakur, Rabenseifner & Gropp,
  IJHPCA 19(1), 2005), hierarchical across domains.
- broadcast (dense LU panels): bytes / sqrt(p) per GPU on the slowest link + log2 p alpha.
- host-staged halo (codes without GPU-direct transfers): see `host_staged_halo_s`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..errors import CatalogGap, Infeasible
from ..perf.collectives import (
    NIC_EFFICIENCY,
    NIC_LATENCY_S,
    NVLINK_EFFICIENCY,
    NVLINK_LATENCY_S,
    all_reduce_s,
)
from ..perf.layout import FloatArray
from .classes import Exchange, Profile
from .device import Device
from .fitted import FITTED, HpcConstants
from .roofline import memory_rate

COMM_FORMULA = "alpha-beta communication per pattern (hpc/comm.py)"
# ASSUMED: one synchronized host copy phase (enqueue, PCIe DMA start, queue finish) ~10 us; a small
# share of the measured phases (tens of ms), it only matters for tiny halos.
HOST_COPY_LATENCY_S = 10e-6


@functools.cache
def decompose(gpus: int, dims: int) -> tuple[int, ...]:
    """Balanced factorization of `gpus` into `dims` factors, largest first (MPI_Dims_create)."""
    out = [1] * dims
    for prime in _prime_factors(gpus)[::-1]:
        i = min(range(dims), key=lambda j: out[j])
        out[i] *= prime
    return tuple(sorted(out, reverse=True))


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out + ([n] if n > 1 else [])


def _scale_up_bw(device: Device, pattern: str) -> float:
    if device.scale_up_bandwidth_bytes_per_s is None:
        raise CatalogGap([f"accelerators.{device.accelerator_id}.scale_up_bandwidth_bytes_per_s",
                          f"systems.{device.system_id}.scale_up_bandwidth_bytes_per_s"],
                         f"the {pattern} exchange between GPUs of one {device.system_id} node",
                         value=device.accelerator_id,
                         hint="add either in a user catalog directory, or run on one GPU")
    return device.scale_up_bandwidth_bytes_per_s * NVLINK_EFFICIENCY


def _nic_bw(device: Device) -> float:
    """What one GPU's share of the node's NICs carries; a node without NICs cannot exchange with
    another one, so a run across nodes there is infeasible, not infinitely slow."""
    if device.scale_out_bandwidth_bytes_per_s <= 0:
        raise Infeasible("fabric", f"{device.system_id} has no scale-out NIC: the run cannot span nodes "
                                   f"(at most {device.gpus_per_node} GPUs)")
    return device.scale_out_bandwidth_bytes_per_s * NIC_EFFICIENCY


def halo_faces(units: float, gpus: int, dims: int, levels: float,
               domain: int) -> tuple[float, float, int, int]:
    """(in-domain surface units, off-domain surface units, in-domain faces, off-domain faces) of
    the worst GPU; the domain is a cube (dims=3) or a square of columns x levels (dims=2)."""
    d = decompose(gpus, dims)
    block = decompose(min(gpus, domain), dims)
    side = (units / levels) ** (1.0 / dims)
    sub = [side / di for di in d]
    surf_in = surf_off = 0.0
    faces_in = faces_off = 0
    for i, di in enumerate(d):
        if di == 1:
            continue
        area = math.prod(s for j, s in enumerate(sub) if j != i) * (levels if dims == 2 else 1.0)
        off = 0 if di <= block[i] else (1 if block[i] > 1 else 2)
        surf_in += (2 - off) * area
        surf_off += off * area
        faces_in += 2 - off
        faces_off += off
    return surf_in, surf_off, faces_in, faces_off


def halo_s(e: Exchange, profile: Profile, device: Device, units: float, gpus: int) -> float:
    if gpus <= 1:
        return 0.0
    s_in, s_off, f_in, f_off = halo_faces(units, gpus, profile.decomposition_dims, profile.levels,
                                          device.scale_up_domain_gpus)
    t_in = (s_in * e.bytes / _scale_up_bw(device, "halo") + f_in * NVLINK_LATENCY_S) if f_in else 0.0
    t_off = (s_off * e.bytes / _nic_bw(device) + f_off * NIC_LATENCY_S) if f_off else 0.0
    return e.per_step * max(t_in, t_off)


def host_staged_halo_s(e: Exchange, profile: Profile, device: Device, units: float, gpus: int,
                       c: HpcConstants) -> float:
    """Halo exchange staged through host memory, not overlapped with compute (FluidX3D's OpenCL
    multi-GPU, src/lbm.cpp communicate_field): per decomposed axis every GPU copies its two faces to
    the host, all wait, then copy the neighbours' faces back. The copies of the GPUs on one host pass
    through host memory one after another, each phase taking
        GPUs on the host x 2 faces x face units x bytes / (host link x host_staging_fraction).
    """
    if gpus <= 1:
        return 0.0
    if device.host_link_bytes_per_s is None:
        raise CatalogGap([f"accelerators.{device.accelerator_id}.pcie_bandwidth_bytes_per_s"],
                         "the host-staged halo exchange (GPU to host link)", value=device.accelerator_id)
    dims = profile.decomposition_dims
    split = decompose(gpus, dims)
    sub = [(units / profile.levels) ** (1.0 / dims) / di for di in split]
    sharing = min(gpus, device.gpus_per_node)
    rate = device.host_link_bytes_per_s * c.host_staging_fraction
    total = 0.0
    for i, di in enumerate(split):
        if di == 1:
            continue
        area = math.prod(s for j, s in enumerate(sub) if j != i) * (profile.levels if dims == 2 else 1.0)
        per_gpu = 2.0 * area * e.bytes   # both faces of the axis (periodic: both neighbours)
        total += 2.0 * (sharing * per_gpu / rate + HOST_COPY_LATENCY_S)   # to the host, then back
    return e.per_step * total


def all_to_all_s(e: Exchange, device: Device, units: float, gpus: int, c: HpcConstants) -> float:
    if gpus <= 1:
        return 0.0
    side = (units * e.fft_points_per_unit) ** (1.0 / 3.0)
    peers = gpus if gpus <= side else math.ceil(math.sqrt(gpus))
    transposes = 1 if gpus <= side else 2
    size = e.bytes * units / gpus      # what one GPU holds before each transpose
    domain = device.scale_up_domain_gpus
    total = 0.0
    for t in range(transposes):
        k = min(peers, domain) if t == 0 else max(1, min(peers, domain // peers))
        intra = ((k - 1) / peers * size / _scale_up_bw(device, "all-to-all") + NVLINK_LATENCY_S
                 if k > 1 else 0.0)
        inter = ((peers - k) / peers * size / (device.scale_out_bandwidth_bytes_per_s
                                               * c.all_to_all_network_fraction)
                 + (peers - k) * c.all_to_all_peer_gap_s + NIC_LATENCY_S) if peers > k else 0.0
        pack = 4.0 * size / memory_rate(device, "stream", "application", c)
        total += max(intra, inter) + pack
    return e.per_step * total


def all_reduce_small_or_ring_s(e: Exchange, device: Device, gpus: int) -> float:
    if gpus <= 1:
        return 0.0
    k = min(gpus, device.scale_up_domain_gpus)
    domains = gpus / k
    b_up = _scale_up_bw(device, "all-reduce") if k > 1 else 1.0
    doubling = math.log2(k) * (NVLINK_LATENCY_S + e.bytes / b_up)
    ring = float(all_reduce_s(e.bytes, k, b_up, NVLINK_LATENCY_S))
    if domains > 1:     # across scale-up domains: over the NICs (none inside one domain)
        doubling += math.log2(domains) * (NIC_LATENCY_S + e.bytes / _nic_bw(device))
        ring += float(all_reduce_s(e.bytes / k, domains, _nic_bw(device), NIC_LATENCY_S))
    return e.per_step * min(doubling, ring)


def broadcast_s(e: Exchange, device: Device, gpus: int) -> float:
    if gpus <= 1:
        return 0.0
    inside = gpus <= device.scale_up_domain_gpus
    bw = _scale_up_bw(device, "broadcast") if inside else _nic_bw(device)
    lat = NVLINK_LATENCY_S if inside else NIC_LATENCY_S
    return e.per_step * (e.bytes / math.sqrt(gpus) / bw + math.log2(gpus) * lat)


def comm_times(profile: Profile, device: Device, units: float, gpus: Any,
               c: HpcConstants = FITTED) -> dict[str, FloatArray]:
    """Seconds per step per pattern, for every GPU count in `gpus` (array)."""
    g = np.atleast_1d(np.asarray(gpus, dtype=np.int64))
    out: dict[str, FloatArray] = {}
    for e in profile.exchanges:
        vals = np.array([_one(e, profile, device, units, int(x), c) for x in g.ravel()], dtype=np.float64)
        out[e.pattern] = out.get(e.pattern, np.zeros(g.shape)) + vals.reshape(g.shape)
    return out


def _one(e: Exchange, profile: Profile, device: Device, units: float, gpus: int, c: HpcConstants) -> float:
    if e.pattern == "halo" and e.transport == "host_staged":
        return host_staged_halo_s(e, profile, device, units, gpus, c)
    if e.pattern == "halo":
        return halo_s(e, profile, device, units, gpus)
    if e.pattern == "all_to_all":
        return all_to_all_s(e, device, units, gpus, c)
    if e.pattern == "all_reduce":
        return all_reduce_small_or_ring_s(e, device, gpus)
    return broadcast_s(e, device, gpus)
