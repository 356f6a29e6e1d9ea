"""Optional intake sections for the layers below compute: fabric, storage, reliability, software,
facility. Every field is optional; a field given is pinned, a field left out is filled by a named
rule and listed as an assumption. The facility section is also how a hall is pinned ("this hall
delivers 2 MW at 40 kW a rack") for the reverse question.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..units import BitsPerSecond, Bytes, BytesPerSecond, Count, Seconds, Watts
from .boundary import BoundaryIntake, OperationsIntake
from .common import Strict
from .measured import MeasuredIntake
from .sheet import SheetIntake


class FabricIntake(Strict):
    """Compute-fabric pins. Those that change bandwidth reach the step-time model
    (spine/fabric_pins.py): NIC speed, oversubscription, rail optimization, transport, routing."""

    switch: str | None = Field(default=None, description="catalog switch id of the compute fabric")
    oversubscription: float | None = Field(default=None, ge=1, le=64,
                                           description="leaf down:up port ratio (1 = non-blocking)")
    su_nodes: int | None = Field(default=None, ge=1, description="nodes per scalable unit")
    nic_bandwidth: BitsPerSecond | None = Field(default=None, gt=0, le=1.6e13,
                                                description="line rate of each compute NIC, e.g. 200Gb/s")
    rail_optimized: bool | None = Field(default=None, description="NIC i of every node on leaf i (default), or "
                                                                  "all of a node's NICs on one leaf (top of rack)")
    transport: Literal["infiniband", "roce"] | None = Field(
        default=None, description="RDMA transport: InfiniBand, or RoCE on an Ethernet fabric")
    adaptive_routing: bool | None = Field(
        default=None, description="per-packet adaptive routing (InfiniBand, Spectrum-X) or flow hashing (ECMP); "
                                  "default from the switch")
    node_scale_out_bandwidth: BytesPerSecond | None = Field(
        default=None, gt=0, description="scale-out (NIC) bandwidth of one node, per direction, e.g. 50GB/s "
        "for 400 Gb/s; default: the system's NICs")


class StorageIntake(Strict):
    tier: Literal["good", "better", "best"] | None = None
    write_bandwidth: BytesPerSecond | None = Field(default=None, gt=0, description="aggregate, e.g. 250GB/s")
    checkpoint_mode: Literal["sync", "async"] | None = None
    gpudirect_storage: bool = False
    retained_checkpoints: int | None = Field(default=None, ge=0)
    dataset_tokens: Count | None = Field(default=None, gt=0, description="unique tokens on disk")
    token_bytes: float | None = Field(default=None, gt=0)
    dataset_samples: Count | None = Field(default=None, gt=0, description="images/videos: sample count")
    sample_size: Bytes | None = Field(default=None, gt=0)


class ReliabilityIntake(Strict):
    failure_rate: str | None = Field(default=None, description="a named published rate (see catalog reliability.yaml)")
    failures_per_gpu_day: float | None = Field(default=None, ge=0)
    failures_per_node_day: float | None = Field(default=None, ge=0)
    restart_time: Seconds | None = Field(default=None, ge=0)
    checkpoint_interval: Seconds | None = Field(default=None, gt=0)


class SoftwareIntake(Strict):
    access_model: str | None = None


class FacilityIntake(Strict):
    power: Watts | None = Field(default=None, gt=0, description="power the hall delivers")
    power_basis: Literal["facility", "it"] = "facility"
    rack_power: Watts | None = Field(default=None, gt=0, description="per-rack power (and cooling) limit")
    cooling: str | None = Field(default=None, description="air | rdhx | dlc | immersion")
    pue: float | None = Field(default=None, ge=1, le=3)
    floor_area_m2: float | None = Field(default=None, gt=0)


class InfrastructureIntake(Strict):
    """The sections shared by every archetype."""

    fabric: FabricIntake = Field(default_factory=FabricIntake)
    storage: StorageIntake = Field(default_factory=StorageIntake)
    reliability: ReliabilityIntake = Field(default_factory=ReliabilityIntake)
    software: SoftwareIntake = Field(default_factory=SoftwareIntake)
    facility: FacilityIntake = Field(default_factory=FacilityIntake)
    # The engagement around the sizing (issue 9): the workload sheet, the operating boundary and
    # boundary register, and the operations inputs. engagement/ reads them; no layer does.
    sheet: SheetIntake = Field(default_factory=SheetIntake)
    boundary: BoundaryIntake = Field(default_factory=BoundaryIntake)
    operations: OperationsIntake = Field(default_factory=OperationsIntake)
    measured: MeasuredIntake = Field(default_factory=MeasuredIntake,
                                     description="measured values, each bound to the machine it was taken on")
