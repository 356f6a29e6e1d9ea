"""The `cost` intake section, the same for every archetype: a rate card or the parts of ownership.

    cost:
      gpu_hour_usd: 3.50                        # one rate for every accelerator, or
      gpu_hour_usd: {h100-sxm: 3.50, b200: 6}   # a rate per accelerator id
      node_hour_usd: {dgx-h100: 30}             # and/or per node (server, or compute tray) hour
    cost:                                       # ownership
      capex_usd_per_system: {dgx-h100: 400000}  # per placement unit (a server; a rack for NVL72), or
      capex_usd_per_gpu: 40000
      network_share: 0.10                       # network capex as a fraction of compute capex
      storage_share: 0.05
      amortization_years: 4
      support_fraction_per_year: 0.08           # support and maintenance, per year, of capex
      power_usd_per_kwh: 0.08                   # energy at the facility's PUE (or `pue` here)
    budget_usd: 5M                              # a limit: per run (training, HPC) ...
    budget_usd_per_hour: 300                    # ... or per fleet hour (inference)

Every price is the user's: the tool holds no market prices. Without one, the `cost` result still
states the energy and says which price is missing.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ..units import Count
from .common import Strict

Rate = Annotated[float, Field(gt=0)]
RateCard = Rate | dict[str, Rate]


class CostIntake(Strict):
    """A rate card ($/GPU-hour, $/node-hour) or ownership (capex, shares, amortization, energy)."""

    gpu_hour_usd: RateCard | None = Field(
        default=None, description="$ per GPU-hour: one rate for every accelerator, or {accelerator id: rate}")
    node_hour_usd: RateCard | None = Field(
        default=None, description="$ per node-hour (a server, or a compute tray of a rack-scale system): "
                                  "one rate, or {system id: rate}")
    capex_usd_per_gpu: float | None = Field(default=None, gt=0)
    capex_usd_per_system: RateCard | None = Field(
        default=None, description="capex of one placement unit (a server; a rack for rack-scale systems): "
                                  "one figure, or {system id: figure}")
    network_share: float | None = Field(default=None, ge=0, le=2,
                                        description="network capex as a fraction of compute capex")
    storage_share: float | None = Field(default=None, ge=0, le=2,
                                        description="storage capex as a fraction of compute capex")
    amortization_years: float | None = Field(default=None, gt=0, le=30)
    support_fraction_per_year: float | None = Field(
        default=None, ge=0, le=1, description="support and maintenance per year, as a fraction of capex")
    power_usd_per_kwh: float | None = Field(default=None, ge=0)
    pue: float | None = Field(default=None, ge=1, le=3,
                              description="PUE for the energy bill (default: the facility layer's)")
    budget_usd: Count | None = Field(default=None, gt=0, description="a limit: $ per run (training, HPC)")
    budget_usd_per_hour: float | None = Field(default=None, gt=0,
                                              description="a limit: $ per fleet hour (inference)")

    @model_validator(mode="after")
    def _complete(self) -> CostIntake:
        owned = self.capex_usd_per_gpu is not None or self.capex_usd_per_system is not None
        if owned and self.amortization_years is None:
            raise ValueError("ownership needs amortization_years beside capex_usd_per_gpu / capex_usd_per_system")
        if self.amortization_years is not None and not owned:
            raise ValueError("amortization_years needs capex_usd_per_gpu or capex_usd_per_system")
        return self

    @property
    def rented(self) -> bool:
        return self.gpu_hour_usd is not None or self.node_hour_usd is not None

    @property
    def owned(self) -> bool:
        return self.capex_usd_per_gpu is not None or self.capex_usd_per_system is not None
