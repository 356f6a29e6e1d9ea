"""The compiled result: one pydantic document, versioned, with plain SI numbers in the layers and
the provenance of each number beside them (never inside them).

Renderers (terminal, JSON, Markdown) read this document and compute nothing.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..cost.result import CostSection
from ..engagement.acceptance import AcceptanceTargets
from ..engagement.boundary import OperatingBoundary
from ..engagement.mig import MigSection
from ..engagement.operations import OperationsLoad
from ..engagement.questions import NextQuestions
from ..engagement.register import BoundaryRegister
from ..engagement.sheet import WorkloadSheet
from ..errors import CatalogGap
from ..generic.pipeline import PipelineSection
from ..provenance import Assumption, Provenance
from ..quantity import quantity
from ..sizing.result import Alternative, Collision, SensitivitySection
from .doc import Doc as Doc

SCHEMA_VERSION = "1.0"


class ParallelismOut(Doc):
    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    etp: int
    vp: int
    micro_batch_size: int
    recompute: str
    sequence_parallel: bool
    zero_stage: int
    first_stage_layers: int = Field(default=0, description="decoder layers on the first pipeline stage")
    middle_stage_layers: int = Field(default=0, description="decoder layers on the busiest middle stage")
    last_stage_layers: int = Field(default=0, description="decoder layers on the last pipeline stage")
    pipeline_layout: str | None = Field(default=None, description="a Megatron-Core --pipeline-model-parallel-layout "
                                        "that realizes the split")


class ObjectiveLayer(Doc):
    """Layer 1: what must be done and by when."""

    model: str
    params: float
    active_params: float
    tokens: float
    seq_len: int
    global_batch_size: int
    global_batch_tokens: float
    precision: str
    steps: float
    flops_per_token: float = Field(description="model FLOPs per trained token, causal attention, no recompute")
    total_flops: float
    time_to_train_s: float
    time_to_train_target_s: float | None = None
    goodput_adjusted_time_to_train_s: float | None = None
    meets_target: bool | None = None
    gpus_for_target: int | None = quantity(
        "count", "fewest GPUs whose best layout meets the deadline without the cap, in steady state (before "
                 "failures; when a cap or hall binds)",
        default=None)


class ComputeLayer(Doc):
    """Layer 2: accelerator, memory per device, parallel layout, device and node count."""

    accelerator: str
    accelerator_name: str
    system: str
    gpus: int
    nodes: int
    gpus_per_node: int
    parallelism: ParallelismOut
    step_time_s: float
    step_breakdown_s: dict[str, float]
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    model_tflops_per_gpu: float
    mfu: float
    mfu_basis: str
    memory_per_gpu_bytes: float
    memory_breakdown_bytes: dict[str, float]
    hbm_bytes: float
    memory_headroom_bytes: float
    bottleneck: str
    warnings: list[str] = Field(default_factory=list)
    scale_out_bytes_per_s_per_gpu: float | None = quantity(
        "B/s", "per-GPU scale-out bandwidth the step-time model used, per direction (fabric pins applied: NIC "
        "speed, oversubscription, rail optimization, transport; spine/fabric_pins.py)", default=None)


class NotSized(Doc):
    """A layer the compile could not size: the catalog lacks a number it needs. The rest of the
    specification is still built; this says which numbers are missing and what they would size."""

    not_sized: str = Field(description="why the layer is not sized: the missing catalog numbers and what they size")
    missing: list[str] = Field(default_factory=list, description="catalog paths of the missing numbers")

    @classmethod
    def from_gap(cls, gap: CatalogGap) -> NotSized:
        return cls(not_sized=gap.reason, missing=list(gap.missing))


class SearchSummary(Doc):
    evaluated: int
    seconds: float
    rejected: dict[str, int]
    alternatives: list[dict[str, Any]] = Field(default_factory=list)


class MeasuredEntry(Doc):
    """One measured value as the compile used it (or recorded it, with why not applied)."""

    field: str = Field(description="the measurable field (measure/fields.py)")
    value: float = Field(description="SI value, in `unit`")
    unit: str
    spread: float | None = Field(default=None, description="standard deviation over the repeats, in `unit`")
    repeats: int | None = None
    machine_kind: str
    machine_id: str
    machine: str = Field(description="the machine it was measured on, as a person reads it")
    date: str
    tool: str
    origin: str = Field(description="'intake' or the calibration file it came from")
    status: str = Field(description="applied (replaces the assumption named in `replaces`) or recorded")
    replaces: str
    note: str | None = None


class MeasuredSection(Doc):
    """Measurements bound to the machine they were taken on; applied to that machine only."""

    entries: list[MeasuredEntry] = Field(default_factory=list)
    calibration_files: list[str] = Field(default_factory=list)
    sized_accelerators: list[str] = Field(default_factory=list)
    sized_systems: list[str] = Field(default_factory=list)
    sized_why: str = ""
    left_behind: list[str] = Field(
        default_factory=list, description="a recompile on another machine: the baseline's measured values not applied")


class Band(Doc):
    """The range the true value lay in for held-out runs of this kind; low/high None = not validated."""

    low: float | None = Field(default=None, description="lower end, in the unit of the number it qualifies")
    high: float | None = Field(default=None, description="upper end, in the unit of the number it qualifies")
    basis: str = Field(description="what the band rests on: the kind, how many held-out runs, their error")



class SystemSpec(Doc):
    """The six-layer specification of one workload."""

    schema_version: str = SCHEMA_VERSION
    kind: str
    name: str | None
    feasible: bool = True
    binding_constraint: str | None = None
    objective: ObjectiveLayer | dict[str, Any] | None = None
    compute: ComputeLayer | dict[str, Any] | None = None
    fabric: dict[str, Any] | None = None
    storage: dict[str, Any] | None = None
    reliability: dict[str, Any] | None = None
    bottleneck: dict[str, Any] | None = None
    software: dict[str, Any] | None = None
    facility: dict[str, Any] | None = None
    inference: dict[str, Any] | None = None
    hpc: dict[str, Any] | None = None
    pipeline: PipelineSection | None = Field(default=None,
                                             description="generic archetype: the data path, stage by stage")
    search: SearchSummary | dict[str, Any] | None = None
    collisions: list[Collision] = Field(default_factory=list,
                                        description="pinned limits and targets the requirement breaks (sizing/)")
    alternatives: list[Alternative] = Field(
        default_factory=list, description="recompiled variants, ranked: cheapest meeting every target first")
    cost: CostSection | None = Field(default=None, description="$ and energy of the run or fleet (cost/)")
    sensitivity: SensitivitySection | None = Field(
        default=None, description="tornado over the assumed values (wkc sensitivity, compile --sensitivity)")
    measured: MeasuredSection | None = Field(default=None, description="measurements, bound to their machines")
    pins: dict[str, Any] = Field(default_factory=dict, description="the pins (dotted intake keys) applied by recompile")
    uncertainty: dict[str, Band] = Field(
        default_factory=dict, description="a band on each headline number (dotted result path -> low, high, basis) "
        "from the models' held-out error on published runs of the same kind (spine/uncertainty.py)")
    intake: dict[str, Any] | None = Field(
        default=None, description="the validated intake this spec was compiled from (pins applied); "
                                  "recompile(spec, pins) starts from it")
    not_sized: dict[str, str] = Field(
        default_factory=dict, description="layer -> why it is not sized (a catalog number it needs is unknown)")
    # From requirement to supply (issue 9, seed 000): engagement/attach.py fills these after the layers.
    sheet: WorkloadSheet | None = None
    next_questions: NextQuestions | None = None
    operating_boundary: OperatingBoundary | None = None
    boundary_register: BoundaryRegister | None = None
    operations: OperationsLoad | None = None
    acceptance: AcceptanceTargets | None = None
    mig: MigSection | None = None
    assumptions: list[Assumption] = Field(default_factory=list)
    provenance: dict[str, Provenance] = Field(default_factory=dict)
