"""The compiled result: one pydantic document, versioned, with plain SI numbers in the layers and
the provenance of each number beside them (never inside them).

Every section is a typed model whose numeric fields declare their unit (`quantity()`), exported to
the JSON Schema; renderers (terminal, JSON, Markdown) read the document and its field metadata and
compute nothing. Which model a section holds depends on the archetype (`kind`): the training
layers are below, the inference and HPC ones in sections_inference.py and sections_hpc.py, the
fabric, storage, reliability, software and facility layers in their own packages.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, model_validator

from ..cost.result import CostSection
from ..engagement.acceptance import AcceptanceTargets
from ..engagement.boundary import OperatingBoundary
from ..engagement.mig import MigSection
from ..engagement.operations import OperationsLoad
from ..engagement.questions import NextQuestions
from ..engagement.register import BoundaryRegister
from ..engagement.sheet import WorkloadSheet
from ..errors import CatalogGap
from ..fabric import FabricLayer
from ..facility.layer import FacilityLayer
from ..generic.pipeline import PipelineSection
from ..provenance import Assumption, Provenance
from ..quantity import info, quantity, quantity_in, same_unit_as
from ..reliability import ReliabilityLayer
from ..sizing.result import Alternative, Collision, SensitivitySection
from ..software.stack import SoftwareLayer
from ..storage.plan import StorageLayer
from . import sections_generic, sections_hpc, sections_inference
from .doc import Doc as Doc
from .sections_generic import GenericCompute, GenericObjective
from .sections_hpc import HpcCompute, HpcLayer, HpcObjective, HpcStorage
from .sections_inference import (
    InferenceCompute,
    InferenceLayer,
    InferenceObjective,
    InferenceSearch,
    Open,
    ServingStorage,
)

SCHEMA_VERSION = "1.0"


class ParallelismOut(Doc):
    tp: int = quantity("count", "tensor parallel")
    pp: int = quantity("count", "pipeline parallel")
    dp: int = quantity("count", "data parallel")
    cp: int = quantity("count", "context parallel")
    ep: int = quantity("count", "expert parallel")
    etp: int = quantity("count", "tensor parallel inside each expert")
    vp: int = quantity("count", "virtual pipeline stages per rank")
    micro_batch_size: int = quantity("count", "sequences per micro-batch")
    recompute: str = info("activation recompute: none | selective | full | op_selective | modules | mla_up_proj")
    sequence_parallel: bool = info("Megatron sequence parallelism")
    zero_stage: int = quantity("count", "ZeRO / distributed-optimizer stage")
    first_stage_layers: int = quantity("count", "decoder layers on the first pipeline stage", default=0)
    middle_stage_layers: int = quantity("count", "decoder layers on the busiest middle stage", default=0)
    last_stage_layers: int = quantity("count", "decoder layers on the last pipeline stage", default=0)
    pipeline_layout: str | None = info("a Megatron-Core --pipeline-model-parallel-layout that realizes the split",
                                       default=None)
    activation_offload_layers: int = quantity(
        "count", "decoder layers whose stored activations go to host memory (Megatron-Core "
        "cpu_offloading_num_layers)", default=0)


class ObjectiveLayer(Doc):
    """Layer 1: what must be done and by when."""

    model: str = info("the model trained", headline=True)
    params: float = quantity("count", "parameters", headline=True)
    active_params: float = quantity("count", "parameters active per token (MoE)")
    tokens: float = quantity("tokens", "training tokens", headline=True)
    seq_len: int = quantity("tokens", "sequence length")
    global_batch_size: int = quantity("count", "sequences per step")
    global_batch_tokens: float = quantity("tokens", "tokens per step")
    precision: str = info("training precision", headline=True)
    steps: float = quantity("count", "optimizer steps")
    flops_per_token: float = quantity("FLOP", "model FLOPs per trained token, causal attention, no recompute")
    total_flops: float = quantity("FLOP", "model FLOPs of the run", headline=True)
    time_to_train_s: float | None = quantity("s", "tokens / tokens per second, no failures (null: no layout)",
                                             headline=True)
    time_to_train_target_s: float | None = quantity("s", "the deadline", default=None, headline=True)
    goodput_adjusted_time_to_train_s: float | None = quantity("s", "with failures, restarts and checkpoints",
                                                              default=None, headline=True)
    meets_target: bool | None = info("the goodput-adjusted time meets the deadline", default=None, headline=True)
    gpus_for_target: int | None = quantity(
        "count", "fewest GPUs whose best layout meets the deadline without the cap, in steady state (before "
                 "failures; when a cap or hall binds)",
        default=None)


class ComputeLayer(Doc):
    """Layer 2: accelerator, memory per device, parallel layout, device and node count."""

    accelerator: str = info("catalog accelerator id")
    accelerator_name: str = info("the accelerator", headline=True)
    system: str = info("catalog system id")
    gpus: int = quantity("count", "GPUs", headline=True)
    nodes: int = quantity("count", "nodes", headline=True)
    gpus_per_node: int = quantity("count", "GPUs per node")
    parallelism: ParallelismOut = info("the parallel layout (disaggregated serving: the decode pool's; "
                                       "inference.prefill_pool gives the prefill pool's)", headline=True)
    step_time_s: float = quantity("s", "one optimizer step", headline=True)
    step_breakdown_s: dict[str, float] = quantity("s", "one step by term (exposed time)")
    tokens_per_s: float = quantity("tokens/s", "training throughput", headline=True)
    tokens_per_s_per_gpu: float = quantity("tokens/s", "throughput per GPU")
    model_tflops_per_gpu: float = quantity("TFLOP/s", "model FLOPs per second per GPU")
    mfu: float = quantity("fraction", "model FLOPs utilization: model FLOP/s / peak", headline=True)
    mfu_basis: str = info("the peak MFU is measured against")
    memory_per_gpu_bytes: float = quantity("B", "memory one GPU uses", headline=True)
    memory_breakdown_bytes: dict[str, float] = quantity("B", "memory per GPU by term")
    hbm_bytes: float = quantity("B", "HBM of one GPU")
    memory_headroom_bytes: float = quantity("B", "HBM left free")
    bottleneck: str = info("largest terms of the step")
    warnings: list[str] = Field(default_factory=list, description="what the layout search warns about")

    scale_out_bytes_per_s_per_gpu: float | None = quantity(
        "B/s", "per-GPU scale-out bandwidth the step-time model used, per direction (fabric pins applied: NIC "
        "speed, oversubscription, rail optimization, transport; spine/fabric_pins.py)", default=None)


class LayoutSummary(Doc):
    """One ranked layout of the planner (the next best after the chosen one)."""

    model_config = ConfigDict(extra="allow")   # the planner adds keys; their units are declared here

    tp: int | None = quantity("count", "tensor parallel", default=None)
    pp: int | None = quantity("count", "pipeline parallel", default=None)
    dp: int | None = quantity("count", "data parallel", default=None)
    cp: int | None = quantity("count", "context parallel", default=None)
    ep: int | None = quantity("count", "expert parallel", default=None)
    etp: int | None = quantity("count", "tensor parallel inside each expert", default=None)
    vp: int | None = quantity("count", "virtual pipeline stages per rank", default=None)
    micro_batch_size: int | None = quantity("count", "sequences per micro-batch", default=None)
    recompute: str | None = info("activation recompute", default=None)
    zero_stage: int | None = quantity("count", "ZeRO stage", default=None)
    sequence_parallel: bool | None = info("sequence parallelism", default=None)
    step_time_s: float | None = quantity("s", "one step", default=None)
    step_breakdown_s: dict[str, float] | None = quantity("s", "one step by term", default=None)
    tokens_per_s: float | None = quantity("tokens/s", "throughput", default=None)
    model_flops_per_gpu_per_s: float | None = quantity("FLOP/s", "model FLOP/s per GPU", default=None)
    mfu: float | None = quantity("fraction", "model FLOPs utilization", default=None)
    memory_per_gpu_bytes: float | None = quantity("B", "memory per GPU", default=None)
    memory_breakdown_bytes: dict[str, float] | None = quantity("B", "memory per GPU by term", default=None)
    first_stage_layers: int | None = quantity("count", "decoder layers on the first pipeline stage", default=None)
    middle_stage_layers: int | None = quantity("count", "decoder layers on the busiest middle stage", default=None)
    last_stage_layers: int | None = quantity("count", "decoder layers on the last pipeline stage", default=None)
    middle_stage_mtp: int | None = quantity("count", "multi-token-prediction layers on a middle stage", default=None)
    pipeline_layout: str | None = info("a Megatron-Core --pipeline-model-parallel-layout", default=None)
    activation_offload_layers: int | None = quantity(
        "count", "decoder layers whose activations go to host memory", default=None)

class NotSized(Doc):
    """A layer the compile could not size: the catalog lacks a number it needs. The rest of the
    specification is still built; this says which numbers are missing and what they would size."""

    not_sized: str = info("why the layer is not sized: the missing catalog numbers and what they size",
                          headline=True)
    missing: list[str] = Field(default_factory=list, description="catalog paths of the missing numbers")

    @classmethod
    def from_gap(cls, gap: CatalogGap) -> NotSized:
        return cls(not_sized=gap.reason, missing=list(gap.missing))


class SearchSummary(Doc):
    evaluated: int = quantity("count", "layouts evaluated", headline=True)
    seconds: float = quantity("s", "search time")
    from_cache: bool = info("read back from the on-disk search cache (seconds: the original search's)",
                            default=False)
    rejected: dict[str, int] = quantity("count", "layouts rejected, by the first rule each breaks")
    alternatives: list[LayoutSummary] = Field(default_factory=list, description="the next best layouts")


class Loss(Open):
    cause: str = info("where time goes")
    share_of_step: float | None = quantity("fraction", "share of a training step", default=None)
    share_of_run: float | None = quantity("fraction", "share of the run's wall-clock time", default=None)


class BottleneckLayer(Doc):
    """Where a step's time goes: the MFU waterfall from peak to the effective rate of the run."""

    step_shares: dict[str, float] = quantity("fraction", "share of the step by term")
    kernel_efficiency: float = quantity("fraction", "MFU / compute share: how fast the kernels run", headline=True)
    mfu: float = quantity("fraction", "model FLOPs utilization per step")
    goodput: float = quantity("fraction", "share of wall-clock time that advances training")
    effective_mfu: float = quantity("fraction", "MFU x goodput: over the whole run", headline=True)
    data_loading_bound: bool = info("reads demand more than the storage tier delivers")
    losses: list[Loss] = info("what takes time besides the kernels, largest first")
    verdict: str = info("the bottleneck in words", headline=True)


# The section models of each archetype (a document read back from JSON gets the right ones).
TRAINING_SECTIONS: dict[str, Any] = {"objective": ObjectiveLayer, "compute": ComputeLayer, "search": SearchSummary,
                                     "bottleneck": BottleneckLayer, "storage": StorageLayer}
KIND_SECTIONS: dict[str, dict[str, Any]] = {"training": TRAINING_SECTIONS, "inference": sections_inference.SECTIONS,
                                            "hpc": sections_hpc.SECTIONS, "generic": sections_generic.SECTIONS}


class MeasuredEntry(Doc):
    """One measured value as the compile used it (or recorded it, with why not applied)."""

    field: str = Field(description="the measurable field (measure/fields.py)")
    value: float = quantity_in("unit", "SI value, in `unit`")
    unit: str
    spread: float | None = quantity_in("unit", "standard deviation over the repeats, in `unit`", default=None)
    repeats: int | None = quantity("count", "repeats of the measurement", default=None)
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

    low: float | None = same_unit_as("the number it qualifies", "lower end", default=None)
    high: float | None = same_unit_as("the number it qualifies", "upper end", default=None)
    basis: str = Field(description="what the band rests on: the kind, how many held-out runs, their error")



def _section(model: Any, value: Any) -> Any:
    """A mapping as the section model of its kind; a "not sized" mapping as `NotSized`."""
    if not isinstance(value, dict):
        return value
    if isinstance(value.get("not_sized"), str):
        return NotSized.model_validate(value)
    return model.model_validate(value) if model is not None else value


class SystemSpec(Doc):
    """The six-layer specification of one workload."""

    schema_version: str = SCHEMA_VERSION
    kind: str
    name: str | None
    feasible: bool = True
    binding_constraint: str | None = None
    verdict: str | None = info("meets target | feasible (no target) | target open (not known yet whether it is met) | "
                                "misses target | infeasible", default=None)
    objective: ObjectiveLayer | InferenceObjective | HpcObjective | GenericObjective | None = None
    compute: ComputeLayer | InferenceCompute | HpcCompute | GenericCompute | NotSized | None = None
    fabric: FabricLayer | NotSized | None = None
    storage: StorageLayer | HpcStorage | ServingStorage | NotSized | None = None
    reliability: ReliabilityLayer | NotSized | None = None
    bottleneck: BottleneckLayer | None = None
    software: SoftwareLayer | NotSized | None = None
    facility: FacilityLayer | NotSized | None = None
    inference: InferenceLayer | None = None
    hpc: HpcLayer | NotSized | None = None
    pipeline: PipelineSection | None = Field(default=None,
                                             description="generic archetype: the data path, stage by stage")
    search: SearchSummary | InferenceSearch | None = None
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
    unreachable: dict[str, str] = Field(
        default_factory=dict, description="values that cannot be reached (null in the document): dotted path -> why")
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

    @model_validator(mode="before")
    @classmethod
    def _sections_of_the_kind(cls, data: Any) -> Any:
        """Mappings become the section models of the document's kind (so an inference objective
        read back from JSON is an InferenceObjective, not whichever union member fits first)."""
        if not isinstance(data, dict):
            return data
        models = KIND_SECTIONS.get(str(data.get("kind")), {})
        return {k: _section(models.get(k), v) for k, v in data.items()}
