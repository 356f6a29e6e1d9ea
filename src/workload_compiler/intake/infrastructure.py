"""Optional intake sections for the layers below compute: fabric, storage, reliability, software,
facility. Every field is optional; a field given is pinned, a field left out is filled by a named
rule and listed as an assumption. The facility section is also how a hall is pinned ("this hall
delivers 2 MW at 40 kW a rack") for the reverse question.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ..errors import InputError, Problem, canonical_id, one_of
from ..units import BitsPerSecond, Bytes, BytesPerSecond, Count, Seconds, Watts
from . import limits as L
from .boundary import BoundaryIntake, OperationsIntake
from .common import Strict
from .limits import limited, text
from .measured import MeasuredIntake
from .sheet import SheetIntake


class FabricIntake(Strict):
    """Compute-fabric pins. Those that change bandwidth reach the step-time model
    (spine/fabric_pins.py): NIC speed, oversubscription, rail optimization, transport, routing."""

    switch: str | None = text(description="catalog switch id of the compute fabric")
    oversubscription: float | None = limited(None, ge=1, le=L.MAX_OVERSUBSCRIPTION, why=L.OVERSUBSCRIPTION,
                                             description="leaf down:up port ratio (1 = non-blocking)")
    su_nodes: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS, description="nodes per scalable unit")
    nic_bandwidth: BitsPerSecond | None = limited(None, ge=L.MIN_NIC_BITS, le=L.MAX_NIC_BITS, why=L.NIC_BITS,
                                                  description="line rate of each compute NIC, e.g. 200Gb/s")
    rail_optimized: bool | None = Field(default=None, description="NIC i of every node on leaf i (default), or "
                                                                  "all of a node's NICs on one leaf (top of rack)")
    transport: Literal["infiniband", "roce"] | None = Field(
        default=None, description="RDMA transport: InfiniBand, or RoCE on an Ethernet fabric")
    adaptive_routing: bool | None = Field(
        default=None, description="per-packet adaptive routing (InfiniBand, Spectrum-X) or flow hashing (ECMP); "
                                  "default from the switch")
    node_scale_out_bandwidth: BytesPerSecond | None = limited(
        None, ge=L.MIN_BANDWIDTH, le=L.MAX_BANDWIDTH, why=L.BANDWIDTH,
        description="scale-out (NIC) bandwidth of one node, per direction, e.g. 50GB/s for 400 Gb/s; default: the "
        "system's NICs")


class StorageIntake(Strict):
    tier: Literal["good", "better", "best"] | None = None
    write_bandwidth: BytesPerSecond | None = limited(None, ge=L.MIN_BANDWIDTH, le=L.MAX_BANDWIDTH, why=L.BANDWIDTH,
                                                     description="aggregate, e.g. 250GB/s")
    checkpoint_mode: Literal["sync", "async"] | None = None
    gpudirect_storage: bool = False
    retained_checkpoints: int | None = limited(None, ge=0, le=100_000, why="10^5 checkpoints kept")
    dataset_tokens: Count | None = limited(None, ge=1, le=L.MAX_TOKENS, why=L.TOKENS,
                                           description="unique tokens on disk")
    token_bytes: float | None = limited(None, gt=0, le=1024, why="1 kB per token: 250x a 32-bit token id")
    dataset_samples: Count | None = limited(None, ge=1, le=L.MAX_UNITS, why=L.UNITS,
                                            description="images/videos: sample count")
    sample_size: Bytes | None = limited(None, gt=0, le=1e13, why="10 TB per sample")


def reject_unread(section: str, given: Strict, reads: tuple[str, ...], instead: str) -> None:
    """A key of a shared section (`storage`, `reliability`) that the archetype does not read is an
    error, never silently dropped; every such key is listed."""
    # an explicit null says "not given", as leaving the key out does
    unread = [k for k in type(given).model_fields
              if k in given.model_fields_set and k not in reads and getattr(given, k) is not None]
    if unread:
        raise InputError.of([Problem(f"{section}.{k}", getattr(given, k), instead) for k in unread])


# The reliability keys every archetype reads (engagement/operations.py: failures, spares, RMAs); restarts
# and checkpoint intervals belong to a training run's goodput (reliability.py).
FAILURE_KEYS = ("failure_rate", "failures_per_gpu_day", "failures_per_node_day")


class ReliabilityIntake(Strict):
    failure_rate: str | None = text(description="a named published rate (see catalog reliability.yaml)")
    failures_per_gpu_day: float | None = limited(None, ge=0, le=L.MAX_FAILURES_GPU_DAY, why=L.FAILURES_GPU_DAY)
    failures_per_node_day: float | None = limited(None, ge=0, le=L.MAX_FAILURES_NODE_DAY, why=L.FAILURES_NODE_DAY)
    restart_time: Seconds | None = limited(None, ge=0, le=L.MAX_LATENCY, why=L.LATENCY)
    checkpoint_interval: Seconds | None = limited(None, ge=1, le=L.MAX_DURATION,
                                                  why={"ge": "a second: no checkpoint writes faster",
                                                       "le": L.DURATION})

    @field_validator("failure_rate")
    @classmethod
    def _known_rate(cls, v: str | None) -> str | None:
        """A named rate the catalog holds (catalog/data/reliability.yaml), checked where it is given."""
        from ..catalog.loader import package_yaml

        names = list(package_yaml("reliability.yaml")["failure_rates"])
        if v is not None and v not in names:
            raise InputError("reliability.failure_rate", v, one_of(v, names))
        return v


class SoftwareIntake(Strict):
    access_model: str | None = text()


class FacilityIntake(Strict):
    power: Watts | None = limited(None, gt=0, le=L.MAX_POWER, why=L.POWER, description="power the hall delivers")
    power_basis: Literal["facility", "it"] = "facility"
    rack_power: Watts | None = limited(None, gt=0, le=L.MAX_RACK_POWER, why=L.RACK_POWER,
                                       description="per-rack power (and cooling) limit")
    cooling: str | None = text(description="air | rdhx | dlc | immersion (any letter case)")
    pue: float | None = limited(None, ge=1, le=3, why="PUE is at least 1 by definition; 3 is far beyond any "
                                "operating data centre (~1.1-2)")
    floor_area_m2: float | None = limited(None, gt=0, le=L.MAX_AREA, why=L.AREA)

    @field_validator("cooling")
    @classmethod
    def _cooling_id(cls, value: str | None) -> str | None:
        """The id as the catalog keeps it: a pinned 'DLC' once collided with the 'dlc' it sized."""
        return canonical_id(value)


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
