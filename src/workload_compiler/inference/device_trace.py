"""Provenance of the serving device the search chose: its kernel ceilings, how its routed experts are
timed and whether the engine's host work per request floors its steps (measured, or assumed with
the reason). One place for the aggregated and the disaggregated answers."""

from __future__ import annotations

import dataclasses

from ..catalog import moe_latency
from ..catalog.loader import Catalog
from ..provenance import Trace
from .engines import Engine
from .layout import ServingLayout
from .model import ServedModel
from .performance import Device, moe_op_measured


def trace_ceilings(trace: Trace, acc_id: str, dev: Device) -> None:
    """The kernel ceilings the step model runs at: measured for this GPU, or assumed as the ceilings'
    note says (catalog/kernel_ceilings.py estimate: from its own kv_stream, or a median)."""
    c = dev.ceilings
    value = {"gemm_compute": c.gemm_compute, "gemm_stream": c.gemm_stream, "kv_stream": c.kv_stream}
    if c.note:
        trace.assumed("compute.kernel_ceilings", value, c.note)
    else:
        trace.measured("compute.kernel_ceilings", value, f"{acc_id}: {c.source}")


def trace_moe_kernel(trace: Trace, m: ServedModel, dev: Device, tp: int, ep: int,
                     key: str = "compute.moe_kernel") -> None:
    """How the chosen layout's routed experts are timed: TensorRT-LLM's measured MoE op, or modelled
    grouped GEMMs where that GPU, format, expert shape and degrees were not measured."""
    if not m.arch.is_moe:
        return
    lay = ServingLayout.of(tp=tp, ep=ep)
    etp, moe_ep = int(lay.etp), int(lay.ep)
    if moe_op_measured(m, dev, etp, moe_ep):
        trace.measured(key, "measured MoE op", f"{dev.hw.accelerator_id}: {moe_latency.source()}",
                       why=f"TensorRT-LLM's CUTLASS MoE op at expert TP {etp}, EP {moe_ep}, {m.weights} weights")
    else:
        trace.assumed(key, "modelled grouped GEMMs",
                      f"no measured TensorRT-LLM MoE op for {dev.hw.accelerator_id}, {m.weights} weights, this expert "
                      f"shape at expert TP {etp}, EP {moe_ep} (catalog/data/moe_op_latency.json.gz): the routed "
                      "experts run as GEMMs at the kernel ceilings")


def with_host_cost(catalog: Catalog, dev: Device, eng: Engine) -> Device:
    """The device with the engine's measured host seconds per running request on its system's host
    CPU (catalog systems.yaml `cpu`), 0 where the engine was not measured on such a host."""
    if not eng.host_s_per_request:
        return dev
    return dataclasses.replace(dev, host_s_per_request=eng.host_cost(catalog.system(dev.hw.system_id).cpu))


def trace_host_cost(trace: Trace, catalog: Catalog, dev: Device, eng: Engine) -> None:
    """Where the chosen device's steps have the engine's host floor, and where it is not known."""
    if not eng.host_s_per_request:
        return
    system = catalog.system(dev.hw.system_id)
    if dev.host_s_per_request:
        trace.measured("compute.host_s_per_request", dev.host_s_per_request, eng.host_source,
                       why=f"{eng.name} on {system.id}'s {eng.host_cpu} host: a step lasts at least this x "
                       "its requests")
    else:
        trace.assumed("compute.host_s_per_request", 0.0,
                      f"{eng.name}'s host work per running request is measured on {eng.host_cpu} hosts only; on "
                      f"{system.id} ({system.cpu or 'CPU not in the catalog'}) it is assumed hidden behind the GPU "
                      "step", unit="s")
