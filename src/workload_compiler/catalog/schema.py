"""Typed catalog entries. Units are in the field names; every entry carries its source.

Peak rates are *dense* (no 2:4 sparsity) and *peak* (datasheet), per device, in FLOP/s. A rate
the vendor does not publish is `None` and stays unknown: nothing is extrapolated from another
precision.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from ..intake.limits import limited
from ..units import GIB

Precision = Literal["fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp6", "fp4"]

# Bounds of a hardware figure, each with its reason: an entry of a user catalog with a typo (3.35e3
# for 3.35e12 B/s) is refused by name instead of reaching a division by zero or an overflow.
_MEMORY = {"ge": "100 MB: less than any accelerator's memory", "le": "100 TB: 300x the largest HBM (288 GB)"}
_BANDWIDTH = {"ge": "1 GB/s: slower than any accelerator's memory or link", "le": "1 PB/s: 50x the fastest HBM"}
_FLOPS = {"ge": "1 GFLOP/s: slower than any accelerator", "le": "10^18 FLOP/s: 50x the fastest accelerator"}
_POWER = {"ge": "1 W: less than any accelerator or node draws", "le": "10 MW: beyond any rack"}
_PORT = {"ge": "1 Gb/s: the slowest Ethernet port a server ships with", "le": "16 Tb/s: 10x the fastest NIC announced"}
_NIC = {**_PORT, "ge": "0 (no NIC) or " + _PORT["ge"]}


def _flops() -> Any:
    """An optional dense peak of one precision (None: not published)."""
    return limited(None, ge=1e9, le=1e18, why=_FLOPS)


# What the driver keeps of an accelerator's HBM where nobody measured it: the A100 40GB's share
# (39.50 of 40 GiB, torch's total capacity, accelerators.yaml). The measured shares run from 0.02 GiB
# (MI300X, 191.98 of 192) to 2.5 GiB (GB300, 276.50 of 279), so one figure cannot be exact; this one
# keeps the rule within 1.1% of every measured HBM capacity (tests/unit/test_catalog.py).
DRIVER_RESERVED_BYTES = 0.5 * GIB


def unmeasured_visible_bytes(vendor_memory_bytes: float) -> float:
    """Memory a process sees on an accelerator whose capacity was not measured: the vendor's "GB"
    read as GiB (HBM comes in binary stacks: an "80 GB" H100 has 5 x 16 GiB), less the driver's
    share. Within 1.1% of every measured HBM capacity (reading "GB" as 1e9 B is 5-7% short); GDDR
    with ECC keeps more (L40S: 44.39 of 48), so those entries carry their measured figure."""
    return vendor_memory_bytes / 1e9 * GIB - DRIVER_RESERVED_BYTES


class PeakFlops(BaseModel):
    """Dense peak FLOP/s by precision (datasheet peak, no sparsity). None = not published."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fp64: float | None = _flops()
    fp64_tensor: float | None = _flops()
    fp32: float | None = _flops()
    tf32: float | None = _flops()
    bf16: float | None = _flops()
    fp16: float | None = _flops()
    fp8: float | None = _flops()
    int8: float | None = _flops()
    fp6: float | None = _flops()
    fp4: float | None = _flops()


class Accelerator(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    vendor: str
    architecture: str
    form_factor: str
    memory_bytes: float = limited(
        ge=1e8, le=1e14, why=_MEMORY, description="HBM capacity, bytes (decimal GB x 1e9 as the vendor states)")
    memory_visible_bytes: float | None = limited(
        None, ge=1e8, le=1e14, why=_MEMORY, description="HBM the driver exposes to a process (CUDA total memory), "
        "bytes; None = not measured: the vendor figure read as GiB, less 0.5 GiB the driver keeps")
    memory_bandwidth_bytes_per_s: float | None = limited(
        ..., ge=1e9, le=1e15, why=_BANDWIDTH,
        description="HBM peak bandwidth; None when the vendor figure is not known")
    tdp_w: float | None = limited(..., ge=1, le=1e7, why=_POWER,
                                  description="max board/module power; None when not published")
    scale_up_bandwidth_bytes_per_s: float | None = limited(
        None, ge=1e9, le=1e15, why=_BANDWIDTH,
        description="scale-up (NVLink/Infinity Fabric) bandwidth per GPU, per direction")
    peak_flops: PeakFlops
    peak_flops_sparse: PeakFlops | None = Field(
        default=None, description="vendor 'with sparsity' headline (2:4), kept only to check dense < sparse")
    memory_type: str = ""
    scale_up_interconnect: str = ""
    pcie_bandwidth_bytes_per_s: float | None = limited(
        None, ge=1e9, le=1e15, why=_BANDWIDTH, description="host PCIe link, per direction (vendor bidirectional "
        "figure / 2)")
    host_link_bytes_per_s: float | None = limited(
        None, ge=1e9, le=1e15, why=_BANDWIDTH, description="GPU <-> host memory over NVLink-C2C (Grace "
        "superchips), per GPU, per direction; unset: the PCIe link is the host link")
    tensor_flops_per_exp: float | None = Field(
        default=None, gt=0, description="dense BF16 tensor-core FLOPs an SM issues per clock over the "
        "exponentials (MUFU.EX2) it issues per clock: where an attention kernel does fewer FLOPs per "
        "softmax exponential, the exponentials bind; unset: not known, no such bound")
    reference_id: str | None = Field(
        default=None, description="id of the entry in the shared reference hardware.yaml it was taken from")
    source: str
    supplements: dict[str, str] = Field(
        default_factory=dict,
        description="fields filled beyond the reference entry (null there): dotted field -> its source")
    as_of: str = ""
    unverified: bool = False
    notes: str = ""

    @property
    def process_memory_bytes(self) -> float:
        """What a training or serving process can allocate: the driver-visible capacity where it
        was measured (an "80 GB" H100 exposes 79.11 GiB), else `unmeasured_visible_bytes`."""
        return self.memory_visible_bytes or unmeasured_visible_bytes(self.memory_bytes)


class System(BaseModel):
    """A node (or rack-scale system) that holds accelerators."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    accelerator: str
    gpus_per_node: int = limited(ge=1, le=1024, why="1,024 accelerators: 14x the largest node or tray (72)",
                                 description="accelerators per node (per compute tray for NVL72: 4)")
    scale_up_domain_gpus: int = limited(ge=1, le=1 << 16, why="2^16 GPUs: 100x the largest NVLink domain (576)",
                                        description="GPUs in one NVLink/scale-up domain")
    nodes_per_scale_up_domain: int = limited(1, ge=1, le=1 << 16, why="2^16 nodes in one scale-up domain")
    scale_out_nics_per_node: int = limited(ge=0, le=1024, why="1,024 NICs: 64x any node (16)")
    scale_out_nic_bits_per_s: float = limited(ge=0, le=1.6e13, why=_NIC, description="line rate of one compute NIC")
    cpu_cores_per_node: int | None = None
    host_memory_bytes_per_node: float | None = None
    node_max_power_w: float | None = limited(None, ge=1, le=1e7, why=_POWER,
                                             description="max power of one node (or tray)")
    rack_power_w: float | None = limited(None, ge=1, le=1e7, why=_POWER,
                                         description="for rack-scale systems: the whole rack")
    rack_units: int | None = None
    cooling: Literal["air", "liquid", "hybrid"] = "air"
    scale_out_nic: str | None = Field(default=None, description="catalog id of the compute NIC")
    scale_up_bandwidth_bytes_per_s: float | None = limited(
        None, ge=1e9, le=1e15, why=_BANDWIDTH,
        description="per GPU, per direction; overrides the accelerator's figure (e.g. PCIe-only nodes)")
    rack_power_w_range: tuple[float, float] | None = Field(
        default=None, description="published spread of rack power where sources disagree (low, high)")
    cpu: str = ""
    source: str
    as_of: str = ""
    unverified: bool = False
    notes: str = ""

    @field_validator("scale_out_nic_bits_per_s")
    @classmethod
    def _nic_or_none(cls, bits: float, info: ValidationInfo) -> float:
        nics = info.data.get("scale_out_nics_per_node", 0)
        if 0 < bits < 1e9 or (nics > 0) != (bits > 0):
            raise ValueError(f"with {nics} NICs a node: none (0 NICs at 0 b/s) or NICs of 1 Gb/s or more")
        return bits


class Switch(BaseModel):
    """A network switch (one ASIC box); ports are logical ports at `port_bits_per_s`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    vendor: str
    technology: str
    ports: int = limited(ge=2, le=4096, why={"ge": "2 ports: a switch joins at least two links",
                                             "le": "4,096 ports: 8x the largest switch (512)"},
                         description="logical ports at port_bits_per_s (QM9700: 64 = 32 twin-port cages)")
    port_bits_per_s: float = limited(ge=1e9, le=1.6e13, why=_PORT)
    switching_bits_per_s: float | None = None
    power_w: float | None = limited(None, ge=1, le=1e7, why=_POWER,
                                    description="max switch power; None when not in the sources")
    rack_units: int | None = None
    in_network_reduction: str = ""
    role: Literal["compute", "storage", "inband", "oob", "any"] = "any"
    source: str
    as_of: str = ""
    unverified: bool = False
    notes: str = ""


class Nic(BaseModel):
    """A host network adapter used for the scale-out (compute) or storage fabric."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    vendor: str
    port_bits_per_s: float = limited(ge=1e9, le=1.6e13, why=_PORT, description="line rate of one port")
    ports: int = limited(1, ge=1, le=64, why="64 ports: 16x any NIC (4)")
    protocols: tuple[str, ...] = ()
    host_interface: str = ""
    power_w: float | None = None
    nccl_busbw_bytes_per_s: tuple[float, float] | None = Field(
        default=None, description="achievable NCCL bus bandwidth per NIC (low, high), measured")
    source: str
    as_of: str = ""
    unverified: bool = False
    notes: str = ""
