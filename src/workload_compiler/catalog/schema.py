"""Typed catalog entries. Units are in the field names; every entry carries its source.

Peak rates are *dense* (no 2:4 sparsity) and *peak* (datasheet), per device, in FLOP/s. A rate
the vendor does not publish is `None` and stays unknown: nothing is extrapolated from another
precision.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Precision = Literal["fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp6", "fp4"]


class PeakFlops(BaseModel):
    """Dense peak FLOP/s by precision (datasheet peak, no sparsity). None = not published."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fp64: float | None = None
    fp64_tensor: float | None = None
    fp32: float | None = None
    tf32: float | None = None
    bf16: float | None = None
    fp16: float | None = None
    fp8: float | None = None
    int8: float | None = None
    fp6: float | None = None
    fp4: float | None = None


class Accelerator(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    vendor: str
    architecture: str
    form_factor: str
    memory_bytes: float = Field(gt=0, description="HBM capacity, bytes (decimal GB x 1e9 as the vendor states)")
    memory_bandwidth_bytes_per_s: float = Field(gt=0, description="HBM peak bandwidth")
    tdp_w: float = Field(gt=0)
    scale_up_bandwidth_bytes_per_s: float | None = Field(
        default=None, description="scale-up (NVLink/Infinity Fabric) bandwidth per GPU, per direction")
    peak_flops: PeakFlops
    source: str
    as_of: str = ""
    unverified: bool = False
    notes: str = ""


class System(BaseModel):
    """A node (or rack-scale system) that holds accelerators."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    accelerator: str
    gpus_per_node: int = Field(gt=0, description="accelerators per node (per compute tray for NVL72: 4)")
    scale_up_domain_gpus: int = Field(gt=0, description="GPUs in one NVLink/scale-up domain")
    nodes_per_scale_up_domain: int = Field(default=1, ge=1)
    scale_out_nics_per_node: int = Field(ge=0)
    scale_out_nic_bits_per_s: float = Field(ge=0, description="line rate of one compute NIC")
    cpu_cores_per_node: int | None = None
    host_memory_bytes_per_node: float | None = None
    node_max_power_w: float | None = Field(default=None, description="max power of one node (or tray)")
    rack_power_w: float | None = Field(default=None, description="for rack-scale systems: the whole rack")
    rack_units: int | None = None
    cooling: Literal["air", "liquid", "hybrid"] = "air"
    source: str
    as_of: str = ""
    unverified: bool = False
    notes: str = ""
