"""The `cost` result section: $ per run (or per fleet-hour), effective $/GPU-hour, $ per million
tokens, energy and its price, TCO per year. A $ field is null when no price was given, with the
reason in `missing`; energy is always stated."""

from __future__ import annotations

from pydantic import Field

from ..quantity import quantity
from ..spine.doc import Doc


class CostLine(Doc):
    item: str = Field(description="GPU-hours, node-hours, compute capex, network capex, storage capex, support, "
                                  "energy")
    usd_per_hour: float = quantity("USD/h", "this item's share of the fleet's $ per hour")
    formula: str
    in_total: bool = Field(default=True, description="false: shown beside the total, not added to it")


class CostSection(Doc):
    """Cost and energy of one compiled system. Training and HPC: per run; inference: per hour and year."""

    basis: str | None = Field(description="rate card | ownership | null (no price given)")
    price_source: str | None = Field(default=None, description="the intake keys the prices came from")
    accelerator: str
    system: str
    gpus: int = quantity("count", "GPUs priced (spares and both serving pools included)")
    gpu_hours: float | None = quantity("count", "GPU-hours of the run (training, HPC)", default=None)
    run_time_s: float | None = quantity("s", "the run priced: goodput-adjusted time to train, or time to "
                                             "solution", default=None)
    usd_per_gpu_hour: float | None = quantity("USD/h", "effective $ per GPU-hour (all lines of the total)",
                                              default=None)
    usd_per_hour: float | None = quantity("USD/h", "$ per hour of the whole fleet", default=None)
    cost_usd: float | None = quantity("USD", "$ per run (training, HPC)", default=None)
    usd_per_million_training_tokens: float | None = quantity("USD", "$ per 10^6 training tokens", default=None)
    usd_per_million_served_tokens: float | None = quantity(
        "USD", "$ per 10^6 output tokens at the served load (inference)", default=None)
    usd_per_million_served_tokens_at_capacity: float | None = quantity(
        "USD", "$ per 10^6 output tokens with every active replica at its capacity batch", default=None)
    tco_usd_per_year: float | None = quantity("USD", "the fleet's cost per year (rented: the rate x 8760 h)",
                                              default=None)
    capex_usd: float | None = quantity("USD", "ownership: compute + network + storage capex", default=None)
    it_power_w: float = quantity("W", "provisioned IT power (an upper bound on the draw)")
    pue: float = quantity("1", "PUE of the energy bill")
    energy_wh: float | None = quantity("Wh", "facility energy of the run: IT power x PUE x run time",
                                       default=None)
    energy_wh_per_year: float | None = quantity("Wh", "facility energy per year of the fleet (inference)",
                                                default=None)
    energy_cost_usd: float | None = quantity("USD", "energy of the run x power_usd_per_kwh", default=None)
    energy_cost_usd_per_year: float | None = quantity("USD", "energy per year x power_usd_per_kwh (inference)",
                                                      default=None)
    lines: list[CostLine] = Field(default_factory=list)
    missing: dict[str, str] = Field(default_factory=dict, description="null $ fields: field -> why")
