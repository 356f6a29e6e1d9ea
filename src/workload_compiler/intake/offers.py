"""The offers file of `wkc supply FILE --offers offers.yaml` (seed 000, "Supply & Capacity
Verification"): what each supplier can provide, held against the sized requirement.

    offers:
    - id: A
      supplier: Example Cloud
      system: dgx-h100              # catalog system id (or accelerator: ...)
      count: 512                    # GPUs
      fabric: {technology: infiniband, per_gpu_bandwidth: 50GB/s, oversubscription: 1}
      storage: {read_bandwidth: 100GB/s, write_bandwidth: 50GB/s, capacity: 2PB}
      site: {power: 1.5MW, rack_power: 41kW, cooling: [air, dlc]}
      access_model: scheduler
      lead_time: 8w
      price: {gpu_hour_usd: 2.90}   # or total_usd, or monthly_usd
      sla: {availability: 0.995, restore_time: 3d}
      term: 1y
      confirmed: [availability, lead_time]   # confirmed in writing; everything else stays open

Every field but id and count is optional: what an offer does not state is an open confirmation.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from ..units import Bytes, BytesPerSecond, Seconds, Watts
from . import limits as L
from .common import Strict
from .limits import limited

Confirmation = Literal["availability", "lead_time", "schedule", "sla", "price"]
CONFIRMATIONS: tuple[Confirmation, ...] = ("availability", "lead_time", "schedule", "sla", "price")


class OfferFabric(Strict):
    technology: str | None = Field(default=None, description="infiniband | roce | ethernet | spectrum-x")
    per_gpu_bandwidth: BytesPerSecond | None = limited(None, ge=L.MIN_BANDWIDTH, le=L.MAX_BANDWIDTH,
                                                       why=L.BANDWIDTH, description="scale-out, per GPU, per direction")
    oversubscription: float | None = limited(None, ge=1, le=L.MAX_OVERSUBSCRIPTION, why=L.OVERSUBSCRIPTION)
    scale_up_domain_gpus: int | None = limited(None, ge=1, le=L.MAX_GPUS, why=L.GPUS)


class OfferStorage(Strict):
    read_bandwidth: BytesPerSecond | None = limited(None, ge=L.MIN_BANDWIDTH, le=L.MAX_BANDWIDTH, why=L.BANDWIDTH)
    write_bandwidth: BytesPerSecond | None = limited(None, ge=L.MIN_BANDWIDTH, le=L.MAX_BANDWIDTH, why=L.BANDWIDTH)
    capacity: Bytes | None = limited(None, gt=0, le=L.MAX_BYTES, why=L.BYTES)


class OfferSite(Strict):
    power: Watts | None = limited(None, gt=0, le=L.MAX_POWER, why=L.POWER,
                                  description="facility power available to this deployment")
    rack_power: Watts | None = limited(None, gt=0, le=L.MAX_RACK_POWER, why=L.RACK_POWER)
    cooling: list[str] = Field(default_factory=list, description="cooling the site supports: air, rdhx, dlc, immersion")

    @field_validator("cooling", mode="before")
    @classmethod
    def _as_list(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


class OfferPrice(Strict):
    gpu_hour_usd: float | None = limited(None, gt=0, le=L.MAX_USD_HOUR, why=L.USD_HOUR)
    monthly_usd: float | None = limited(None, gt=0, le=1e12, why="$1 trillion a month: beyond any fleet")
    total_usd: float | None = limited(None, gt=0, le=1e13, why="$10 trillion: beyond any budget")

    @model_validator(mode="after")
    def _one(self) -> OfferPrice:
        if sum(v is not None for v in (self.gpu_hour_usd, self.monthly_usd, self.total_usd)) != 1:
            raise ValueError("give one of gpu_hour_usd, monthly_usd or total_usd")
        return self


class OfferSla(Strict):
    availability: float | None = Field(default=None, gt=0, le=1)
    response_time: Seconds | None = limited(None, gt=0, le=L.MAX_DURATION, why=L.DURATION)
    restore_time: Seconds | None = limited(None, gt=0, le=L.MAX_DURATION, why=L.DURATION)


class Offer(Strict):
    id: str = Field(min_length=1)
    supplier: str | None = None
    system: str | None = None
    accelerator: str | None = None
    count: int = limited(ge=1, le=L.MAX_GPUS, why=L.GPUS, description="GPUs offered")
    fabric: OfferFabric = Field(default_factory=OfferFabric)
    storage: OfferStorage = Field(default_factory=OfferStorage)
    site: OfferSite = Field(default_factory=OfferSite)
    access_model: str | None = None
    lead_time: Seconds | None = limited(None, ge=0, le=L.MAX_DURATION, why=L.DURATION)
    price: OfferPrice | None = None
    sla: OfferSla | None = None
    term: Seconds | None = limited(None, gt=0, le=L.MAX_DURATION, why=L.DURATION)
    confirmed: list[Confirmation] = Field(default_factory=list)

    @model_validator(mode="after")
    def _hardware(self) -> Offer:
        if self.system is None and self.accelerator is None:
            raise ValueError("name the offered system (catalog id) or accelerator")
        return self


class OffersFile(Strict):
    offers: list[Offer] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> OffersFile:
        ids = [o.id for o in self.offers]
        if len(ids) != len(set(ids)):
            raise ValueError(f"offer ids must be unique: {ids}")
        return self


__all__ = ["CONFIRMATIONS", "Confirmation", "Offer", "OfferFabric", "OfferPrice", "OfferSite", "OfferSla",
           "OfferStorage", "OffersFile"]
