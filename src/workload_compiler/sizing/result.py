"""Typed result sections of the collision engine and the sensitivity analysis.

A collision states the requirement and the limit in one unit ("30 d needs 2,048 h100-sxm GPUs;
compute.gpus pins 256"). An alternative is a full recompile of the intake with a few pins changed
(`pins`), with what it achieves, what it costs and a check against every target and pinned limit.
The keys of the first version (`constraint`, `detail`, `required`, `achieved`, `ratio`; `name`,
`change`, `feasible`, `accelerator`, `gpus`, `time_to_train_s`, `it_power_w`, `facility_power_w`,
`meets_target`, `binding`) keep their meaning.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..quantity import quantity
from ..spine.doc import Doc

LimitKind = Literal["target", "pin"]


class Collision(Doc):
    constraint: str = Field(description="deadline | gpu count | gpu cap | hall | facility power | rack power | "
                                        "floor space | cooling | budget | ttft | tpot | request rate | replica cap "
                                        "| time to solution | memory | pinned layout")
    detail: str = Field(description="the requirement and the limit in one sentence, in one unit")
    kind: LimitKind = Field(default="pin", description="target (what must be achieved) or pin (a stated limit)")
    key: str | None = Field(default=None, description="the intake key that states the limit")
    unit: str | None = Field(default=None, description="unit of `requirement` and `limit` (GPUs: 'count')")
    requirement: float | None = Field(default=None, description="what the workload needs, in `unit`")
    limit: float | None = Field(default=None, description="what the limit allows, in `unit`")
    required: float | None = Field(default=None, description="first-version key: the target (deadline) or "
                                                             "the GPUs needed (cap)")
    achieved: float | None = Field(default=None, description="first-version key: what was reached, or the cap")
    ratio: float | None = quantity("1", "requirement / limit", default=None)


class Check(Doc):
    """One target or pinned limit, checked on one alternative."""

    name: str
    key: str = Field(description="intake key of the limit")
    kind: LimitKind
    unit: str
    limit: float | str = Field(description="the limit (a number in `unit`, or a pinned value such as 'air')")
    value: float | str | None = Field(description="what the alternative reaches (per site for hall limits)")
    met: bool | None


class Alternative(Doc):
    name: str
    change: str = Field(description="what changes, in words")
    feasible: bool
    lever: str = Field(default="", description="precision | accelerator | system | cooling | tokens | schedule | "
                                               "model | sites | gpus | replicas | slo | weights | kv_cache | "
                                               "disaggregated | availability | steps | tp")
    pins: dict[str, Any] = Field(default_factory=dict, description="the intake keys this variant sets (null: "
                                                                   "unpinned); `wkc compile FILE --set` them")
    sites: int = quantity("count", "sites the system is split over (hall limits are checked per site)", default=1)
    accelerator: str | None = None
    system: str | None = None
    gpus: int | None = quantity("count", "GPUs (all sites)", default=None)
    time_to_train_s: float | None = quantity("s", "goodput-adjusted time to train (training)", default=None)
    time_to_solution_s: float | None = quantity("s", "time to solution (HPC)", default=None)
    time_s: float | None = quantity("s", "time to result: train or solve (null for serving)", default=None)
    replicas: int | None = quantity("count", "serving replicas, spares included", default=None)
    gpus_per_replica: int | None = quantity("count", default=None)
    request_rate_per_s: float | None = quantity("requests/s", "requests per second served", default=None)
    output_tokens_per_s: float | None = quantity("tokens/s", "fleet output tokens/s at capacity", default=None)
    ttft_s: float | None = quantity("s", "TTFT at the target percentile (serving)", default=None)
    tpot_s: float | None = quantity("s", "TPOT at the target percentile (serving)", default=None)
    it_power_w: float | None = quantity("W", "IT power (all sites)", default=None)
    facility_power_w: float | None = quantity("W", "facility power (all sites)", default=None)
    cost_usd: float | None = quantity("USD", "$ per run (training, HPC)", default=None)
    cost_usd_per_hour: float | None = quantity("USD/h", "$ per fleet-hour", default=None)
    usd_per_million_tokens: float | None = quantity(
        "USD", "$ per 10^6 tokens: training tokens, or served output tokens", default=None)
    energy_wh: float | None = quantity("Wh", "energy per run (training, HPC) or per year (serving)", default=None)
    cost_missing: str | None = Field(default=None, description="why the $ fields are null")
    meets_target: bool | None = Field(default=None, description="first-version key: meets the time target")
    meets_targets: bool | None = Field(default=None, description="meets every target (deadline, SLO, load, "
                                                                 "budget)")
    meets_pins: bool | None = Field(default=None, description="stays within every pinned limit")
    checks: list[Check] = Field(default_factory=list)
    rank: int | None = Field(default=None, description="1 = cheapest alternative meeting every target")
    binding: str | None = None
    notes: list[str] = Field(default_factory=list, description="what the variant could not carry over")


class SensitivityPoint(Doc):
    value: Any = Field(description="the assumption's value at this end of its range")
    gpus: int | None = quantity("count", default=None)
    time_s: float | None = quantity("s", "time to train or to solution (null for serving)", default=None)
    replicas: int | None = quantity("count", "serving replicas", default=None)
    facility_power_w: float | None = quantity("W", default=None)
    cost_usd: float | None = quantity("USD", "$ per run, or per fleet-hour for serving", default=None)
    feasible: bool = True
    note: str | None = None


class SensitivityRow(Doc):
    field: str = Field(description="the assumption's path (as in `assumptions`)")
    pin: str | None = Field(description="the intake key varied")
    default: Any
    low: SensitivityPoint | None = None
    high: SensitivityPoint | None = None
    source: str = Field(description="where the plausible range comes from")
    swing: dict[str, float] = Field(default_factory=dict, description="|high - low| per output: gpus, time_s, "
                                                                      "replicas, facility_power_w, cost_usd")
    relative_swing: float = quantity("1", "largest |high - low| / baseline over the outputs; the tornado's order",
                                     default=0.0)
    method: str = Field(description="how the ends were evaluated (downstream layers only, or a recompile)")


class SensitivitySection(Doc):
    baseline: SensitivityPoint
    rows: list[SensitivityRow] = Field(default_factory=list, description="ranked by relative_swing, largest first")
    not_varied: dict[str, str] = Field(default_factory=dict, description="assumption -> why it has no range")
    seconds: float = quantity("s", "process time of the analysis")
