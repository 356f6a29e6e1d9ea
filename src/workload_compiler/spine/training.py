"""The training spine: intake -> objective and compute layers (then fabric ... facility).

`compile_training` resolves what is missing (each fill an assumption), picks the GPU count (given,
implied by a pinned layout, needed for a deadline, or the fewest that hold the model), runs the
planner over the layouts the pins allow, and writes the layers from the best layout. A workload
that cannot be met comes back as a result with `feasible=False` and the binding constraint named.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from ..arch.counts import param_counts, training_flops_per_token
from ..arch.lora import lora_adapter_params
from ..arch.model import ModelArch
from ..arch.resolve import resolve_model
from ..catalog.loader import Catalog
from ..errors import Infeasible, InputError, WorkloadError
from ..intake.common import ComputeIntake, ParallelismIntake
from ..intake.training import TrainingWorkload
from ..perf.gemm_precision import gemm_precision
from ..perf.layout import PEAK_CLASS, Hardware, TrainingSetup
from ..planner.published import best_published_mfu
from ..planner.result import RankedLayout
from ..planner.tight_memory import search_at_count
from ..provenance import Trace
from ..sizing.result import Collision
from .bottleneck import bottleneck_view, largest_step_terms
from .fabric_pins import compute_switch, fabric_hardware
from .gpu_count import MAX_SEARCH_GPUS, TOP_K, GpuChoice, choose_gpus
from .infrastructure import build_training_infrastructure, layer_dict, training_goodput
from .node_choice import choose_accelerator, choose_system
from .result import BottleneckLayer, ComputeLayer, ObjectiveLayer, ParallelismOut, SearchSummary, SystemSpec
from .training_defaults import DEFAULT_ACCELERATOR, TrainingRunResolved, resolve_run
from .training_setup import check_host_link, note_unmeasured_kernels, resolve_setup

STEP_FORMULA = "training step-time model (perf/step_time.py)"
MEMORY_FORMULA = "training memory model (perf/memory.py)"
PLANNER_FORMULA = "planner optimum: fastest layout that fits (planner/search.py)"
FABRIC_PASSES = 3   # deadline walks: again on the fabric of the count found, when it differs from the one searched


@dataclass(frozen=True, kw_only=True)
class ResolvedTraining:
    """What the spine resolves from a training intake before it picks a GPU count and a layout;
    `wkc validate` reads the same object, so a published run is judged on the user's path."""

    arch: ModelArch
    run: TrainingRunResolved
    hardware: Hardware
    setup: TrainingSetup
    trace: Trace


def resolve_training(w: TrainingWorkload, catalog: Catalog) -> ResolvedTraining:
    trace = Trace()
    arch = resolve_model(w.model, trace, "model")
    run = resolve_run(w, arch, trace)
    hw = resolve_hardware(w.compute, catalog, trace, w.fabric.node_scale_out_bandwidth)
    setup = resolve_setup(w, arch, run, trace)
    check_precision(setup, hw)
    note_unmeasured_kernels(hw, setup, trace)
    check_host_link(w.compute.parallelism.activation_offload_layers, hw)
    return ResolvedTraining(arch=arch, run=run, hardware=hw, setup=setup, trace=trace)


def resolve_hardware(compute: ComputeIntake, catalog: Catalog, trace: Trace,
                     node_scale_out_bytes_per_s: float | None = None) -> Hardware:
    acc = choose_accelerator(compute, catalog, trace, DEFAULT_ACCELERATOR,
                             "no accelerator given: H100 SXM, the most used in published runs")
    system = choose_system(compute, acc, catalog, trace)
    hw = catalog.hardware(acc.id, system.id)
    if node_scale_out_bytes_per_s is not None:
        trace.given("fabric.node_scale_out_bandwidth", node_scale_out_bytes_per_s)
        hw = dataclasses.replace(hw, scale_out_bandwidth_bytes_per_s=node_scale_out_bytes_per_s / hw.gpus_per_node)
    return hw


def check_precision(setup: TrainingSetup, hw: Hardware) -> None:
    """FP8/FP4 training needs the accelerator's tensor cores for it; never emulate silently. The
    step-time model's `gemm_precision` decides; this only names the intake field in the error."""
    try:
        gemm_precision(setup, hw)
    except InputError as exc:
        raise InputError("training.precision", setup.precision, exc.allowed) from None


def _parallelism_provenance(pins: ParallelismIntake, trace: Trace) -> None:
    for key, value in pins.model_dump().items():
        if value is not None:
            trace.given(f"compute.parallelism.{key}", value)
        else:
            trace.derived(f"compute.parallelism.{key}", None, PLANNER_FORMULA)


def parallelism_out(best: RankedLayout) -> ParallelismOut:
    return ParallelismOut(tp=best.tp, pp=best.pp, dp=best.dp, cp=best.cp, ep=best.ep, etp=best.etp, vp=best.vp,
                          micro_batch_size=best.micro_batch_size, recompute=best.recompute,
                          sequence_parallel=best.sequence_parallel, zero_stage=best.zero_stage,
                          first_stage_layers=best.first_stage_layers, middle_stage_layers=best.middle_stage_layers,
                          last_stage_layers=best.last_stage_layers, pipeline_layout=best.pipeline_layout,
                          activation_offload_layers=best.activation_offload_layers)


def compute_layer(best: RankedLayout, hw: Hardware, accelerator_name: str, w: TrainingWorkload, gpus: int,
                  trace: Trace, warnings: list[str], mfu_basis: str) -> ComputeLayer:
    nodes = math.ceil(gpus / hw.gpus_per_node)
    trace.derived("compute.nodes", nodes, "ceil(gpus / gpus_per_node)")
    _parallelism_provenance(w.compute.parallelism, trace)
    step_keys = ("step_time_s", "step_breakdown_s", "tokens_per_s", "tokens_per_s_per_gpu",
                 "model_tflops_per_gpu", "mfu")
    for key in step_keys:
        trace.derived(f"compute.{key}", None, STEP_FORMULA)
    for key in ("memory_per_gpu_bytes", "memory_breakdown_bytes", "memory_headroom_bytes"):
        trace.derived(f"compute.{key}", None, MEMORY_FORMULA)
    return ComputeLayer(
        accelerator=hw.accelerator_id, accelerator_name=accelerator_name, system=hw.system_id, gpus=gpus,
        nodes=nodes, gpus_per_node=hw.gpus_per_node,
        parallelism=parallelism_out(best),
        step_time_s=best.step_time_s, step_breakdown_s=best.step_breakdown_s, tokens_per_s=best.tokens_per_s,
        tokens_per_s_per_gpu=best.tokens_per_s / gpus, model_tflops_per_gpu=best.model_flops_per_gpu_per_s / 1e12,
        mfu=best.mfu, mfu_basis=mfu_basis, memory_per_gpu_bytes=best.memory_per_gpu_bytes,
        memory_breakdown_bytes=best.memory_breakdown_bytes, hbm_bytes=hw.hbm_bytes,
        memory_headroom_bytes=hw.hbm_bytes - best.memory_per_gpu_bytes,
        bottleneck=largest_step_terms(best.step_breakdown_s), warnings=warnings)


def objective_layer(arch: ModelArch, run: TrainingRunResolved, best: RankedLayout | None, w: TrainingWorkload,
                    trace: Trace) -> ObjectiveLayer:
    counts = param_counts(arch)
    fpt = training_flops_per_token(arch, run.seq_len, adapter_params=lora_adapter_params(arch, run.lora))
    total = fpt * run.tokens
    batch_tokens = float(run.global_batch_size * run.seq_len)
    ttt = run.tokens / best.tokens_per_s if best and best.tokens_per_s > 0 else math.inf
    target = w.target.time_to_train
    trace.derived("objective.params", counts.total, "arch/counts.py param_counts (weights, norms, embeddings)")
    trace.derived("objective.active_params", counts.active, "total minus the routed experts not in top-k")
    trace.derived("objective.flops_per_token", fpt, "3 x (2 x active matmul params + causal attention)"
                  if run.lora is None else "LoRA: 2 x (2 x active matmul params + causal attention) "
                  "+ 6 x adapter params (no weight gradients of the frozen weights)")
    trace.derived("objective.total_flops", total, "flops_per_token x tokens")
    trace.derived("objective.steps", run.tokens / batch_tokens, "tokens / (global_batch_size x seq_len)")
    trace.derived("objective.time_to_train_s", ttt, "tokens / compute.tokens_per_s (no failures; see reliability)")
    if target is not None:
        trace.given("objective.time_to_train_target_s", target)
    return ObjectiveLayer(
        model=arch.name, params=counts.total, active_params=counts.active, tokens=run.tokens, seq_len=run.seq_len,
        global_batch_size=run.global_batch_size, global_batch_tokens=batch_tokens, precision=run.precision,
        steps=run.tokens / batch_tokens, flops_per_token=fpt, total_flops=total, time_to_train_s=ttt,
        time_to_train_target_s=target, meets_target=None if target is None else bool(ttt <= target))


def add_infrastructure(spec: SystemSpec, w: TrainingWorkload, arch: ModelArch, hw: Hardware, catalog: Catalog,
                       best: RankedLayout, run: TrainingRunResolved, trace: Trace) -> None:
    """Layers 3-6 from the chosen layout; the objective gains the goodput-adjusted time."""
    assert isinstance(spec.objective, ObjectiveLayer) and isinstance(spec.compute, ComputeLayer)
    assert spec.objective.time_to_train_s is not None   # a layout was found: the time is finite
    layout = spec.compute.parallelism.model_dump()
    infra = build_training_infrastructure(
        w, catalog, system_id=hw.system_id, accelerator_vendor=catalog.accelerator(hw.accelerator_id).vendor,
        gpus=spec.compute.gpus, layout=layout, arch=arch, seq_len=run.seq_len, global_batch=run.global_batch_size,
        tokens=run.tokens, tokens_per_s=best.tokens_per_s, time_to_train_s=spec.objective.time_to_train_s,
        trace=trace)
    spec.fabric = infra.fabric
    spec.storage = infra.storage
    spec.reliability = infra.reliability
    spec.software = infra.software
    spec.facility = infra.facility
    spec.bottleneck = BottleneckLayer.model_validate(bottleneck_view(
        spec.compute.model_dump(), layer_dict(infra.storage), layer_dict(infra.reliability)))
    trace.derived("bottleneck.effective_mfu", None, "mfu x reliability.goodput")
    trace.derived("bottleneck.kernel_efficiency", None, "mfu / compute share of the step")
    adjusted = infra.reliability.goodput_adjusted_time_to_train_s
    spec.objective.goodput_adjusted_time_to_train_s = adjusted
    trace.derived("objective.goodput_adjusted_time_to_train_s", adjusted, "time_to_train_s / reliability.goodput")
    if adjusted is not None and spec.objective.time_to_train_target_s is not None:
        spec.objective.meets_target = bool(adjusted <= spec.objective.time_to_train_target_s)


def _compile_at(spec: SystemSpec, choice: GpuChoice, w: TrainingWorkload, arch: ModelArch,
                run: TrainingRunResolved, setup: TrainingSetup, hw: Hardware, catalog: Catalog,
                trace: Trace) -> RankedLayout | None:
    """Fill the spec's layers for the chosen GPU count; the best layout, or None when none fits."""
    plan = choice.plan or search_at_count(arch, setup, hw, choice.gpus, w.compute.parallelism, top_k=TOP_K,
                                          published_mfu=best_published_mfu(hw.accelerator_id, run.precision))
    spec.search = SearchSummary(evaluated=plan.evaluated, seconds=plan.seconds, from_cache=plan.from_cache,
                                rejected=plan.rejected,
                                alternatives=[layout.to_dict() for layout in plan.layouts[1:]])
    best = plan.best
    spec.objective = objective_layer(arch, run, best, w, trace)
    if best is None:
        binding, detail = plan.infeasible or ("memory", "no layout fits")
        spec.feasible, spec.binding_constraint = False, f"{binding}: {detail}"
        spec.collisions = [Collision(constraint=binding, detail=detail)]
        return None
    basis = f"{PEAK_CLASS[run.precision]} dense peak"
    name = catalog.accelerator(hw.accelerator_id).name
    spec.compute = compute_layer(best, hw, name, w, choice.gpus, trace, list(plan.warnings), basis)
    spec.compute.scale_out_bytes_per_s_per_gpu = hw.scale_out_bandwidth_bytes_per_s
    add_infrastructure(spec, w, arch, hw, catalog, best, run, trace)
    return best


def _count_estimate(w: TrainingWorkload) -> int:
    """The GPU count the fabric is first sized for: given, implied by the layout, the cap, else the
    largest the search allows (the fabric's worst case; refined once the count is chosen)."""
    p = w.compute.parallelism
    implied = p.tp * p.pp * p.dp * (p.cp or 1) if p.tp and p.pp and p.dp else None
    return w.compute.gpus or implied or w.compute.max_gpus or MAX_SEARCH_GPUS


@dataclass(frozen=True, kw_only=True)
class TrainingPlan:
    """The spine's GPU count and layout with layers 1-6, before cost and alternatives: `wkc plan`
    reads it, so plan and compile answer the same count on the same hardware."""

    spec: SystemSpec
    resolved: ResolvedTraining
    hardware: Hardware              # at the chosen count: the scale-out bandwidth of its fabric
    choice: GpuChoice | None        # None: infeasible before a count was chosen (spec says why)
    best: RankedLayout | None = None   # the layout the spec was built on (None: none fits)


def compile_training(w: TrainingWorkload, catalog: Catalog, *, with_alternatives: bool = True) -> SystemSpec:
    """The six layers of a training workload; with `with_alternatives` also its collisions and the
    recompiled alternatives (sizing/engine.py). Without them (an alternative or a sensitivity
    point, compiled for its own count, time and cost) the count an uncapped deadline would need is
    not searched: only a collision names it."""
    planned = plan_training(w, catalog, count_needed=with_alternatives)
    return _finish(planned.spec, w, catalog, planned.resolved.trace, with_alternatives)


def plan_training(w: TrainingWorkload, catalog: Catalog, resolved: ResolvedTraining | None = None, *,
                  count_needed: bool = True) -> TrainingPlan:
    """The GPU count (given, pinned, for the deadline after failures, the cap or hall, or the fewest
    that hold the model), its best layout and the layers built on it. `resolved`: the intake's
    resolution, when the caller has it (its trace gathers the compile's). `count_needed`: when a
    cap keeps the deadline out of reach, also search the count it would need
    (`objective.gpus_for_target`)."""
    r = resolved or resolve_training(w, catalog)
    arch, run, catalog_hw, setup, trace = r.arch, r.run, r.hardware, r.setup, r.trace
    hw_for = fabric_hardware_for(w, catalog, catalog_hw, trace)
    hw = hw_for(_count_estimate(w))
    # The deadline is met after failures: the walk over GPU counts divides each count's steady-state
    # time by the goodput of its best layout (`_goodput_of`), so one pass finds the fewest that meet it.
    # A second pass runs only when the fabric of the count found is not the one searched on.
    target = w.target.time_to_train
    for _ in range(FABRIC_PASSES):
        spec = SystemSpec(kind="training", name=w.name or arch.name)
        try:
            choice = choose_gpus(w, arch, run, setup, hw, catalog, trace,
                                 goodput=_goodput_of(w, catalog, arch, run, hw), count_needed=count_needed)
        except Infeasible as exc:
            spec.feasible, spec.binding_constraint = False, f"{exc.binding}: {exc.detail}"
            spec.objective = objective_layer(arch, run, None, w, trace)
            spec.collisions = [Collision(constraint=exc.binding, detail=exc.detail)]
            return TrainingPlan(spec=spec, resolved=r, hardware=hw, choice=None)
        chosen_hw = hw_for(choice.gpus)
        searched_on = hw
        if chosen_hw != hw:   # the fabric of the chosen count differs from the one searched: search it
            hw, choice = chosen_hw, dataclasses.replace(choice, plan=None)
        best = _compile_at(spec, choice, w, arch, run, setup, hw, catalog, trace)
        objective = spec.objective if isinstance(spec.objective, ObjectiveLayer) else None
        if objective is not None and choice.needed is not None:
            objective.gpus_for_target = choice.needed
        adjusted = objective.goodput_adjusted_time_to_train_s if objective else None
        if (best is None or not choice.for_deadline or target is None or adjusted is None or adjusted <= target
                or hw == searched_on):
            break
    return TrainingPlan(spec=spec, resolved=r, hardware=hw, choice=choice, best=best)


def _goodput_of(w: TrainingWorkload, catalog: Catalog, arch: ModelArch, run: TrainingRunResolved,
                hw: Hardware) -> Callable[[int, RankedLayout], float]:
    """The goodput of a count's best layout, as the reliability layer of its compile computes it. A
    count whose infrastructure cannot be built is walked on its steady-state time (goodput 1): its
    compile names the reason."""
    def goodput(gpus: int, best: RankedLayout) -> float:
        try:
            return training_goodput(w, catalog, system_id=hw.system_id, gpus=gpus,
                                    layout=parallelism_out(best).model_dump(), arch=arch,
                                    seq_len=run.seq_len, global_batch=run.global_batch_size, tokens=run.tokens,
                                    tokens_per_s=best.tokens_per_s)
        except WorkloadError:
            return 1.0

    return goodput


def fabric_hardware_for(w: TrainingWorkload, catalog: Catalog, hw: Hardware, trace: Trace) -> Callable[[int], Hardware]:
    """The performance model's hardware for n GPUs: the catalog's, with the scale-out bandwidth the
    intake's fabric gives n GPUs (oversubscription and routing across leaves; spine/fabric_pins.py)."""
    system = catalog.system(hw.system_id)
    switch = compute_switch(w.fabric, system, catalog)

    def hw_for(gpus: int) -> Hardware:
        at, effect = fabric_hardware(hw, w.fabric, system, switch, gpus)
        if effect.effective_bytes_per_s != effect.line_bytes_per_s:
            trace.derived("compute.scale_out_bytes_per_s_per_gpu", at.scale_out_bandwidth_bytes_per_s,
                          effect.formula)
        return at

    return hw_for


def _finish(spec: SystemSpec, w: TrainingWorkload, catalog: Catalog, trace: Trace,
            with_alternatives: bool) -> SystemSpec:
    from ..cost.section import cost_section  # the cost and sizing layers read the finished layers
    spec.cost = cost_section(spec, catalog, w.cost, trace)
    spec.assumptions, spec.provenance = trace.assumptions, trace.provenance
    if with_alternatives:
        from ..sizing.engine import attach
        attach(spec, w, catalog)
    return spec
