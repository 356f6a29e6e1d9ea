"""What the planner returns: ranked layouts with their breakdowns, and how the search went."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..perf.layout import Layout


@dataclass(frozen=True, kw_only=True)
class PublishedMfu:
    """The best published MFU for an accelerator and precision class, with its record id."""

    accelerator: str
    precision: str
    mfu: float
    record: str
    source: str
    flops_definition: str
    moe: bool = False      # the best a mixture-of-experts run reached (a deadline walk's first probe)


@dataclass(frozen=True, kw_only=True)
class RankedLayout:
    """One layout of the top k, with the step-time and memory breakdowns the models gave it."""

    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    etp: int
    vp: int
    micro_batch_size: int
    recompute: str
    zero_stage: int
    sequence_parallel: bool
    step_time_s: float
    step_breakdown_s: dict[str, float]
    tokens_per_s: float
    model_flops_per_gpu_per_s: float
    mfu: float
    memory_per_gpu_bytes: float
    memory_breakdown_bytes: dict[str, float]
    # the pipeline split (perf/stages.py): decoder layers on the first, a middle and the last rank
    first_stage_layers: int = 0
    middle_stage_layers: int = 0
    last_stage_layers: int = 0
    pipeline_layout: str | None = None     # a Megatron-Core layout string that realizes the split
    middle_stage_mtp: int = 0              # MTP modules a layout string puts on a middle rank
    activation_offload_layers: int = 0     # layers whose activations go to host (perf/offload.py)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def layout(self) -> Layout:
        """The perf model's `Layout` of this one layout (shape () arrays)."""
        from ..perf.layout import RECOMPUTE_CODES
        from ..perf.pipeline_layout import expand_layout
        split = self.pp > 1
        # the chunk-0 layers the layout string spells out (the planner wrote it from the same split)
        leads = expand_layout(self.pipeline_layout, self.pp).representative().leads \
            if split and self.pipeline_layout else (-1, -1, -1)
        return Layout.of(tp=self.tp, pp=self.pp, dp=self.dp, cp=self.cp, ep=self.ep, etp=self.etp, vp=self.vp,
                         mbs=self.micro_batch_size, recompute=RECOMPUTE_CODES[self.recompute],
                         sp=self.sequence_parallel, zero=self.zero_stage,
                         first_layers=self.first_stage_layers if split else -1,
                         mid_layers=self.middle_stage_layers if split else -1,
                         last_layers=self.last_stage_layers if split else -1, mid_mtp=self.middle_stage_mtp,
                         first_lead=leads[0], mid_lead=leads[1], last_lead=leads[2],
                         offload=self.activation_offload_layers)


@dataclass(frozen=True, kw_only=True)
class PlanResult:
    """Top layouts for one GPU count, ranked by step time, and the census of the search.

    `evaluated` = layouts enumerated = sum(rejected.values()) + feasible. `rejected` maps each rule
    to the layouts it was the first to reject (rule order; reasons that rejected none are omitted).
    `infeasible` is (binding, detail) when no layout fits, else None.
    """

    gpus: int
    layouts: list[RankedLayout]
    evaluated: int
    feasible: int
    rejected: dict[str, int]
    seconds: float
    published_mfu: PublishedMfu | None = None
    infeasible: tuple[str, str] | None = None
    warnings: list[str] = field(default_factory=list)
    from_cache: bool = False        # read back from planner/search_cache.py; `seconds` is the original search's

    @property
    def best(self) -> RankedLayout | None:
        return self.layouts[0] if self.layouts else None

    def search_dict(self) -> dict[str, Any]:
        return {"gpus": self.gpus, "evaluated": self.evaluated, "feasible": self.feasible,
                "seconds": self.seconds, "from_cache": self.from_cache, "rejected": dict(self.rejected)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "layouts": [layout.to_dict() for layout in self.layouts],
            "search": self.search_dict(),
            "published_mfu": asdict(self.published_mfu) if self.published_mfu else None,
            "warnings": list(self.warnings),
        }
