"""Activation offload by layer: Megatron-Core's `cpu_offloading_num_layers`.

The stored activations of the first n decoder layers go to host memory after their forward (copy
engine, device to host) and come back before their backward (host to device, prefetched one layer
ahead), both beside the compute of the neighbouring layer (Transformer Engine's
`get_cpu_offload_context`). Megatron-Core accepts it only with pipeline-parallel size 1, with no
activation recompute and with n < num_layers (transformer_config.py `__post_init__`:
"Currently there is no support for Pipeline parallelism with CPU offloading", "CPU offloading does
not work when activation recomputation is enabled").

Memory: the rank keeps L - n layers' stored activations plus one offloaded layer in transit (the
one being copied out in forward, or prefetched in backward). Time: per offloaded layer and
micro-batch, what the copy does not hide under one layer's forward (out) and backward (in, 2x the
forward): max(0, t_copy - t_fwd) + max(0, t_copy - 2 t_fwd). The copy runs at the host link's
rate per direction times the pinned-copy efficiency (catalog engagement.yaml
pipeline.host_to_device_efficiency: 51 of 64 GB/s on H100 PCIe Gen5).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import numpy as np

from ..arch.model import ModelArch
from .layout import FloatArray, Hardware, IntArray, Layout, TrainingSetup

MemoryTotal = Callable[[ModelArch, TrainingSetup, Layout], dict[str, FloatArray]]


@functools.cache
def copy_efficiency() -> float:
    """Pinned host <-> device copies over the link's line rate (catalog engagement.yaml)."""
    from ..catalog.loader import package_yaml
    return float(package_yaml("engagement.yaml")["pipeline"]["host_to_device_efficiency"]["value"])


def kept_fraction(offload: IntArray, layers: FloatArray) -> FloatArray:
    """Share of a rank's stored layer activations left in HBM with `offload` layers on the host:
    (L - n + 1) / L for n > 0 (one layer in transit), 1 for n = 0."""
    n = np.asarray(offload, dtype=np.float64)
    return np.asarray(1.0 - np.maximum(n - 1.0, 0.0) / np.maximum(layers, 1.0))


def applies(pp: IntArray, recompute: IntArray) -> np.ndarray:
    """Where Megatron-Core lets a layout offload layers: pipeline-parallel size 1, no recompute."""
    return np.asarray((np.asarray(pp) == 1) & (np.asarray(recompute) == 0))


def most_layers(layers: int) -> int | None:
    """The most layers a rank can offload (Megatron-Core: fewer than num_layers), or None where
    offload cannot free anything: with one layer always in transit, it takes at least 2 of >= 3."""
    return layers - 1 if layers >= 3 else None


def offload_possible(setup: TrainingSetup, hw: Hardware) -> bool:
    """The framework offloads whole layers and the catalog knows the host link."""
    return setup.framework.layer_offload and bool(hw.host_link_bytes_per_s)


def exposed_s(stored_per_layer_bytes: FloatArray, forward_per_layer_s: FloatArray, offload: IntArray,
              micro: FloatArray, hw: Hardware) -> FloatArray:
    """Copy time left on the critical path per step (module doc)."""
    if not hw.host_link_bytes_per_s:
        return np.asarray(np.where(np.asarray(offload) > 0, np.inf, 0.0))
    copy = stored_per_layer_bytes / (hw.host_link_bytes_per_s * copy_efficiency())
    per_layer = np.maximum(copy - forward_per_layer_s, 0.0) + np.maximum(copy - 2.0 * forward_per_layer_s, 0.0)
    return np.asarray(micro * np.asarray(offload, dtype=np.float64) * per_layer)


def fewest_layers_to_fit(arch: ModelArch, setup: TrainingSetup, layout: Layout, total: FloatArray,
                         cap: float, memory_detail: MemoryTotal) -> IntArray:
    """Per layout, the fewest offloaded layers that bring `total` (bytes per GPU, no offload) under
    `cap`; 0 where it already fits or where offload cannot apply (pp > 1, a recompute mode, or
    no count below the layer count suffices). One memory evaluation with every layer but one
    offloaded gives the bytes each layer moves (the model is linear in n); the count found is
    then checked by the caller's own evaluation."""
    shape = np.shape(total)
    candidates = np.broadcast_to(applies(layout.pp, layout.recompute), shape) & (total > cap)
    most = most_layers(arch.layers)
    if most is None or not candidates.any():
        return np.zeros(shape, dtype=np.int64)
    lean = memory_detail(arch, setup, dataclasses.replace(layout, offload=np.asarray(most)))["total"]
    per_layer = (total - np.broadcast_to(lean, shape)) / (most - 1)       # bytes freed per layer offloaded
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.ceil((total - cap) / per_layer) + 1.0                  # + the layer in transit
    ok = candidates & (per_layer > 0) & (need <= most)
    return np.where(ok, need, 0.0).astype(np.int64)


__all__ = ["applies", "copy_efficiency", "exposed_s", "fewest_layers_to_fit", "kept_fraction", "most_layers",
           "offload_possible"]
