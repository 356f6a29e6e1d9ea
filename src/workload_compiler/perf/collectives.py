"""Alpha-beta cost of the NCCL collectives, vectorized over group sizes, and the link they run on.

Bandwidth terms follow the NCCL bus-bandwidth definitions (NVIDIA/nccl-tests doc/PERFORMANCE.md):
with S the buffer size in bytes, n ranks and B the per-rank link bandwidth (one direction),

    all-reduce       t = 2 (n-1)/n * S / B       (busbw factor 2(n-1)/n)
    reduce-scatter   t =   (n-1)/n * S / B       (S = the full, unscattered buffer)
    all-gather       t =   (n-1)/n * S / B       (S = the full, gathered buffer)
    all-to-all       t =   (n-1)/n * S / B       (S = what one rank holds before the exchange)

and the latency terms of the ring algorithms (Thakur, Rabenseifner & Gropp, IJHPCA 19(1), 2005):
2(n-1) alpha for the ring all-reduce, (n-1) alpha for the others. A group that does not fit in
the scale-up (NVLink) domain runs hierarchically: the members inside one domain reduce over
NVLink, the domains exchange S/k per GPU over the scale-out NICs (each GPU has its own NIC).
Every function takes NumPy arrays (or scalars) and returns arrays of the broadcast shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from .layout import FloatArray, Hardware

# Achievable fraction of the line rate (../shared/reference/infrastructure.md §3.4):
# NCCL NVLink4 ring busbw ~370 of 450 GB/s (nccl-tests #212); 8x A100 all-reduce 231.6 of
# 300 GB/s (Azure AI-benchmarking-guide, calibration/hpc_public.yaml) -> 0.80.
NVLINK_EFFICIENCY = 0.80
# NDR 400G NIC: NCCL reaches 46-48 of 50 GB/s (nccl-tests #290) -> 0.92.
NIC_EFFICIENCY = 0.92
# Per-step latency (alpha) of one ring hop. Assumed orders of magnitude of NCCL's simple/LL128
# protocols: a few microseconds inside an NVLink domain, ~10 us across an InfiniBand/RoCE hop.
NVLINK_LATENCY_S = 3e-6
NIC_LATENCY_S = 10e-6


def _ranks(n: Any) -> FloatArray:
    return np.maximum(np.asarray(n, dtype=np.float64), 1.0)


def all_reduce_s(size_bytes: Any, n: Any, bw_bytes_per_s: Any, latency_s: Any) -> FloatArray:
    """Ring all-reduce: 2(n-1)/n * S/B + 2(n-1) alpha; zero for one rank."""
    n = _ranks(n)
    return np.asarray(2.0 * (n - 1.0) / n * size_bytes / bw_bytes_per_s + 2.0 * (n - 1.0) * latency_s)


def reduce_scatter_s(size_bytes: Any, n: Any, bw_bytes_per_s: Any, latency_s: Any) -> FloatArray:
    """Ring reduce-scatter of a buffer of S bytes: (n-1)/n * S/B + (n-1) alpha."""
    n = _ranks(n)
    return np.asarray((n - 1.0) / n * size_bytes / bw_bytes_per_s + (n - 1.0) * latency_s)


def all_gather_s(size_bytes: Any, n: Any, bw_bytes_per_s: Any, latency_s: Any) -> FloatArray:
    """Ring all-gather into a buffer of S bytes: (n-1)/n * S/B + (n-1) alpha."""
    return reduce_scatter_s(size_bytes, n, bw_bytes_per_s, latency_s)


def all_to_all_s(size_bytes: Any, n: Any, bw_bytes_per_s: Any, latency_s: Any) -> FloatArray:
    """Pairwise all-to-all of S bytes per rank: (n-1)/n * S/B + (n-1) alpha."""
    return reduce_scatter_s(size_bytes, n, bw_bytes_per_s, latency_s)


def p2p_s(size_bytes: Any, bw_bytes_per_s: Any, latency_s: Any) -> FloatArray:
    """One point-to-point send of S bytes: S/B + alpha."""
    return np.asarray(np.asarray(size_bytes, dtype=np.float64) / bw_bytes_per_s + latency_s)


def scale_up_bw(hw: Hardware, collective: str = "all_reduce") -> float:
    """Achievable per-GPU, per-direction NVLink bandwidth (the bus bandwidth measured on this node
    type for `collective`, when there is one)."""
    return hw.measured.bus_bandwidth("scale_up", collective) or hw.scale_up_bandwidth_bytes_per_s * NVLINK_EFFICIENCY


# A node without NICs (a user catalog's workstation) moves nothing off-node. The searches keep every
# group inside its scale-up domain there (planner/search.py, inference/search.py, generic, HPC); the
# cross-domain term they still compute as an array is empty, and 0 bytes / 1 B/s keeps it zero where
# 0 / 0 would be NaN.
NO_NIC_BYTES_PER_S = 1.0


class Node(Protocol):
    """What a machine says of its reach (perf's Hardware, HPC's Device)."""

    @property
    def gpus_per_node(self) -> int: ...
    @property
    def scale_up_domain_gpus(self) -> int: ...
    @property
    def scale_out_bandwidth_bytes_per_s(self) -> float: ...


def reach_without_nics(node: Node) -> int | None:
    """The most GPUs one run spans on a node without a scale-out NIC (its node or scale-up domain,
    whichever is larger); None when it has NICs and no such limit. The one rule the training, HPC
    and generic searches apply to a user catalog's NIC-less node."""
    if node.scale_out_bandwidth_bytes_per_s > 0:
        return None
    return max(node.gpus_per_node, node.scale_up_domain_gpus)


def scale_out_bw(hw: Hardware, collective: str = "all_reduce") -> float:
    """Achievable per-GPU, per-direction scale-out (NIC) bandwidth (measured on this node type, when
    there is a measurement)."""
    return (hw.measured.bus_bandwidth("scale_out", collective)
            or max(hw.scale_out_bandwidth_bytes_per_s * NIC_EFFICIENCY, NO_NIC_BYTES_PER_S))


def local_members(n: Any, stride: Any, hw: Hardware) -> FloatArray:
    """Members of a group (n ranks, `stride` ranks apart) that share one scale-up domain."""
    # float floor-divide: numpy's `//` on float arrays is several times slower
    stride_f = np.maximum(np.asarray(stride, dtype=np.float64), 1.0)
    per_domain = np.maximum(np.floor(hw.scale_up_domain_gpus / stride_f), 1.0)
    return np.asarray(np.minimum(np.asarray(n, dtype=np.float64), per_domain))


def _hierarchical(ring: Callable[[Any, Any, Any, Any], FloatArray], size_bytes: Any, n: Any,
                  stride: Any, hw: Hardware) -> FloatArray:
    """`ring` over the k members inside one scale-up domain (NVLink), then over the n/k domains with
    S/k per GPU (the NICs; every GPU has its own)."""
    k = local_members(n, stride, hw)
    domains = _ranks(np.asarray(n) / k)
    intra = ring(size_bytes, k, scale_up_bw(hw), NVLINK_LATENCY_S)
    inter = ring(np.asarray(size_bytes) / k, domains, scale_out_bw(hw), NIC_LATENCY_S)
    return np.asarray(intra + inter)


def group_all_reduce_s(size_bytes: Any, n: Any, stride: Any, hw: Hardware) -> FloatArray:
    """All-reduce over a group of n ranks spaced `stride` apart; hierarchical across domains.

    Inside one domain (k members): reduce-scatter + all-gather over NVLink (together = one
    all-reduce). Across the n/k domains: all-reduce of S/k per GPU over the NICs.
    """
    return _hierarchical(all_reduce_s, size_bytes, n, stride, hw)


def group_reduce_scatter_s(size_bytes: Any, n: Any, stride: Any, hw: Hardware) -> FloatArray:
    """Reduce-scatter (or all-gather: same cost) over a group, hierarchical across domains."""
    return _hierarchical(reduce_scatter_s, size_bytes, n, stride, hw)


def group_all_to_all_s(size_bytes: Any, n: Any, stride: Any, hw: Hardware) -> FloatArray:
    """All-to-all over a group: the share bound for other domains crosses the NICs.

    Of the (n-1)/n * S a rank sends, (n-k)/n leaves its domain; the NVLink and NIC parts run
    at the same time, so the slower one sets the time.
    """
    n = _ranks(n)
    k = local_members(n, stride, hw)
    s = np.asarray(size_bytes, dtype=np.float64)
    intra = (k - 1.0) / n * s / scale_up_bw(hw, "all_to_all") + (k - 1.0) * NVLINK_LATENCY_S
    inter = (n - k) / n * s / scale_out_bw(hw, "all_to_all") + (n - k) * NIC_LATENCY_S
    return np.asarray(np.maximum(intra, inter))


def remote_domains_hit(n: Any, stride: Any, hw: Hardware, copies: float, groups: int = 0,
                       group_top_k: int = 0) -> FloatArray:
    """Expected scale-up domains other than its own that one token's `copies` expert copies land
    in, over an EP group of n ranks (`stride` apart), the experts spread evenly and the routing
    balanced: (D - 1) (1 - (1 - k/n)^copies) for D = n/k domains of k members. Group-limited
    routing (DeepSeek-V3: the experts of `group_top_k` of `groups` groups) caps it at the domains
    those groups span, group_top_k x max(1, D / groups), less its own domain's share."""
    n = _ranks(n)
    k = local_members(n, stride, hw)
    domains = n / k
    hit = (domains - 1.0) * (1.0 - (1.0 - k / n) ** copies)
    if groups and group_top_k:
        hit = np.minimum(hit, group_top_k * np.maximum(1.0, domains / groups) * (1.0 - 1.0 / domains))
    return np.asarray(hit)


def group_dispatch_dedup_s(token_bytes: Any, copies: float, n: Any, stride: Any, hw: Hardware,
                           groups: int = 0, group_top_k: int = 0) -> FloatArray:
    """Node-deduplicated dispatch (or combine) of DeepEP / HybridEP: a token crosses the NICs once
    per remote scale-up domain it goes to (`remote_domains_hit`, with the routing's group limit), to
    the same-index GPU there, which forwards it over NVLink to the experts' GPUs (DeepEP README: the
    normal kernels forward between the NVLink and RDMA domains; DeepSeek-V3 Sec 3.2.2). NVLink
    carries the local copies and the forwarded ones; the slower of the two links sets the time."""
    remote = remote_domains_hit(n, stride, hw, copies, groups, group_top_k)
    n = _ranks(n)
    k = local_members(n, stride, hw)
    s = np.asarray(token_bytes, dtype=np.float64)
    nvlink = copies * ((k - 1.0) / n + (n - k) / n * (k - 1.0) / k) * s
    intra = nvlink / scale_up_bw(hw, "all_to_all") + (k - 1.0) * NVLINK_LATENCY_S
    inter = remote * s / scale_out_bw(hw, "all_to_all") + (n / k - 1.0) * NIC_LATENCY_S
    return np.asarray(np.maximum(intra, inter))


def link_bw_latency(span: Any, hw: Hardware) -> tuple[FloatArray, FloatArray]:
    """(bandwidth, latency) of a point-to-point link between ranks `span` GPUs apart or less."""
    inside = np.asarray(span) <= hw.scale_up_domain_gpus
    bw = np.where(inside, scale_up_bw(hw), scale_out_bw(hw))
    lat = np.where(inside, NVLINK_LATENCY_S, NIC_LATENCY_S)
    return np.asarray(bw, dtype=np.float64), np.asarray(lat, dtype=np.float64)
