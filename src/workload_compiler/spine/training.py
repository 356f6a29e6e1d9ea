"""The training spine: intake -> objective and compute layers (then fabric ... facility).

`compile_training` resolves what is missing (each fill an assumption), picks the GPU count (given,
implied by a pinned layout, needed for a deadline, or the fewest that hold the model), runs the
planner over the layouts the pins allow, and writes the layers from the best layout. A workload
that cannot be met comes back as a result with `feasible=False` and the binding constraint named.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..arch.counts import param_counts, training_flops_per_token
from ..arch.model import ModelArch
from ..arch.resolve import resolve_model
from ..catalog.loader import Catalog
from ..errors import Infeasible, InputError
from ..facility import Hall, fit_hall
from ..intake.common import ComputeIntake, ParallelismIntake
from ..intake.training import TrainingWorkload
from ..perf.layout import Hardware, TrainingSetup
from ..perf.objective import gpu_ladder, gpus_for_deadline, min_gpus_for_flops
from ..planner.capacity import fewest_gpus_to_hold
from ..planner.published import best_published_mfu
from ..planner.result import PlanResult, RankedLayout
from ..planner.search import search
from ..provenance import Trace
from .bottleneck import bottleneck_view
from .collisions import alternatives, find_collisions
from .infrastructure import build_training_infrastructure, layer_dict
from .result import ComputeLayer, ObjectiveLayer, ParallelismOut, SearchSummary, SystemSpec
from .training_defaults import DEFAULT_ACCELERATOR, TrainingRunResolved, resolve_run

STEP_FORMULA = "training step-time model (perf/step_time.py)"
MEMORY_FORMULA = "training memory model (perf/memory.py)"
PLANNER_FORMULA = "planner optimum: fastest layout that fits (planner/search.py)"
MAX_SEARCH_GPUS = 1_048_576
# A hall pinned without a per-rack limit: the cooling type's own density limit applies.
UNBOUNDED_RACK_W = 1e9


def resolve_hardware(compute: ComputeIntake, catalog: Catalog, trace: Trace) -> Hardware:
    if compute.accelerator is not None:
        acc = catalog.accelerator(compute.accelerator)
        trace.given("compute.accelerator", acc.id)
    elif compute.system is not None:
        acc = catalog.accelerator(catalog.system(compute.system).accelerator)
        trace.derived("compute.accelerator", acc.id, "the accelerator of the given system")
    else:
        acc = catalog.accelerator(DEFAULT_ACCELERATOR)
        trace.assumed("compute.accelerator", acc.id, "no accelerator given: H100 SXM, the most used in published runs")
    if compute.system is not None:
        system = catalog.system(compute.system)
        trace.given("compute.system", system.id)
    else:
        system = catalog.default_system(acc.id)
        trace.assumed("compute.system", system.id, f"the catalog's reference system for {acc.id}")
    return catalog.hardware(acc.id, system.id)


def check_precision(precision: str, hw: Hardware) -> None:
    """FP8/FP4 training needs the accelerator's tensor cores for it; never emulate silently."""
    if precision in ("fp8", "mxfp8") and hw.peak_flops_fp8 is None:
        raise InputError("training.precision", precision, f"bf16 or fp16: {hw.accelerator_id} has no FP8 tensor cores")
    if precision == "nvfp4" and hw.peak_flops_fp4 is None:
        raise InputError("training.precision", precision, f"bf16 or fp8: {hw.accelerator_id} has no FP4 tensor cores")


def check_pins(pins: ParallelismIntake, arch: ModelArch, gpus: int | None) -> int | None:
    """Validate a pinned layout against the model and the GPU count; return the GPU count it implies."""
    if pins.tp is not None and arch.attention_heads % pins.tp:
        raise InputError("compute.parallelism.tp", pins.tp,
                         f"a divisor of the {arch.attention_heads} attention heads")
    if pins.ep is not None and pins.ep > 1 and (not arch.is_moe or arch.moe_experts % pins.ep):
        allowed = f"a divisor of the {arch.moe_experts} experts" if arch.is_moe else "1 for a dense model"
        raise InputError("compute.parallelism.ep", pins.ep, allowed)
    if pins.vp is not None and pins.vp > 1 and (pins.pp or 1) == 1:
        raise InputError("compute.parallelism.vp", pins.vp, "1 unless pp > 1 (virtual stages interleave a pipeline)")
    degrees = (pins.tp, pins.pp, pins.dp, pins.cp or 1)
    if any(d is None for d in degrees[:3]):
        return None
    product = math.prod(d for d in degrees if d is not None)
    if gpus is not None and product != gpus:
        raise InputError("compute.parallelism", f"tp {pins.tp} x pp {pins.pp} x dp {pins.dp} x cp {pins.cp or 1}"
                         f" = {product}", f"a layout whose product is compute.gpus = {gpus}")
    return product


def hall_capacity(w: TrainingWorkload, hw: Hardware, catalog: Catalog, trace: Trace) -> int | None:
    """GPUs of the chosen system that fit in a pinned hall (facility.power), or None without a hall."""
    f = w.facility
    if f.power is None:
        return None
    hall = Hall(power_w=f.power, power_basis=f.power_basis, rack_power_w=f.rack_power or UNBOUNDED_RACK_W,
                cooling=f.cooling or "air", floor_area_m2=f.floor_area_m2, pue=f.pue)
    fit = fit_hall(hall, [catalog.system(hw.system_id)])[0]
    if not fit.feasible or fit.gpus == 0:
        raise Infeasible(fit.binding, f"no {hw.system_id} fits in the hall: {fit.detail}")
    return int(trace.derived("facility.hall_gpus", fit.gpus, f"hall fit ({fit.binding} binds): {fit.detail}"))


def choose_gpus(w: TrainingWorkload, arch: ModelArch, run: TrainingRunResolved, setup: TrainingSetup,
                hw: Hardware, catalog: Catalog, trace: Trace) -> tuple[int, int | None]:
    """The GPU count, by precedence: given > implied by pins > needed for the deadline > what a hall
    holds > the fewest that hold the model. Also the count the deadline needs when a cap binds."""
    pins = w.compute.parallelism
    implied = check_pins(pins, arch, w.compute.gpus)
    if w.compute.gpus is not None:
        return trace.given("compute.gpus", w.compute.gpus), None
    if implied is not None:
        return trace.derived("compute.gpus", implied, "tp x pp x cp x dp of the pinned layout"), None
    cache: dict[int, PlanResult] = {}

    def plan(n: int) -> PlanResult:
        if n not in cache:
            cache[n] = search(arch, setup, hw, n, pins, top_k=1)
        return cache[n]

    def best_tps(n: int) -> float:
        best = plan(n).best
        return best.tokens_per_s if best else 0.0

    caps = [c for c in (w.compute.max_gpus, hall_capacity(w, hw, catalog, trace)) if c is not None]
    cap = min(caps) if caps else MAX_SEARCH_GPUS
    deadline = w.target.time_to_train
    if deadline is not None:
        flops = training_flops_per_token(arch, run.seq_len) * run.tokens
        peak = hw.peak_flops_bf16 if run.precision in ("bf16", "fp16") else (hw.peak_flops_fp8 or hw.peak_flops_bf16)
        floor = min_gpus_for_flops(flops, deadline, peak)

        def needed(limit: int) -> int | None:
            return gpus_for_deadline(run.tokens, deadline, best_tps, node_gpus=hw.gpus_per_node,
                                     start_gpus=min(floor, limit), max_gpus=limit).gpus

        found = needed(cap)
        if found is not None:
            return trace.derived("compute.gpus", found,
                                 "fewest GPUs whose best layout meets target.time_to_train"), None
        uncapped = needed(MAX_SEARCH_GPUS) if cap < MAX_SEARCH_GPUS else None
        largest = _largest_plannable(cap, hw, plan)
        if largest is not None:
            why = "deadline unreachable within the GPU cap: the largest count that has a layout"
            return trace.derived("compute.gpus", largest, why), uncapped
        raise Infeasible("gpu cap", _cap_shortfall(arch, setup, hw, cap))
    if caps:
        largest = _largest_plannable(cap, hw, plan)
        if largest is None:
            raise Infeasible("gpu cap", _cap_shortfall(arch, setup, hw, cap))
        return trace.derived("compute.gpus", largest, "the most GPUs the cap or hall allows that have a layout"), None
    n = hw.gpus_per_node
    while n <= cap:
        if plan(n).best is not None:
            return trace.derived("compute.gpus", n, "fewest whole nodes with a layout that fits in memory"), None
        n *= 2
    detail = plan(n // 2).infeasible
    raise Infeasible("memory", f"no layout fits on up to {cap:,} {hw.accelerator_id} GPUs"
                     + (f": {detail[1]}" if detail else ""))


def _cap_shortfall(arch: ModelArch, setup: TrainingSetup, hw: Hardware, cap: int) -> str:
    """Why nothing fits under the cap: the model state against the HBM of the capped GPUs when that
    binds, else the activations and runtime on top of it."""
    bound = fewest_gpus_to_hold(arch, setup, hw)
    if bound.gpus is None or bound.gpus > cap:
        return bound.shortfall(cap)
    return (f"no layout of the model fits on {cap:,} or fewer {hw.accelerator_id} GPUs: the state fits "
            f"({bound.gpus} GPUs hold it) but not with activations and runtime memory")


def _largest_plannable(cap: int, hw: Hardware, plan: Callable[[int], PlanResult]) -> int | None:
    """The largest count on the GPU ladder at or below the cap whose planner search finds a layout."""
    for n in reversed(gpu_ladder(hw.gpus_per_node, hw.gpus_per_node, cap)):
        if plan(n).best is not None:
            return n
    return None


def _parallelism_provenance(pins: ParallelismIntake, trace: Trace) -> None:
    names = {"tp": "tp", "pp": "pp", "dp": "dp", "cp": "cp", "ep": "ep", "etp": "etp", "vp": "vp",
             "micro_batch_size": "micro_batch_size", "recompute": "recompute",
             "sequence_parallel": "sequence_parallel", "zero_stage": "zero_stage"}
    for key, attr in names.items():
        path = f"compute.parallelism.{key}"
        if getattr(pins, attr) is not None:
            trace.given(path, getattr(pins, attr))
        else:
            trace.derived(path, None, PLANNER_FORMULA)


def bottleneck(breakdown: dict[str, float]) -> str:
    total = sum(breakdown.values()) or 1.0
    ranked = sorted(breakdown.items(), key=lambda kv: -kv[1])
    top = ", ".join(f"{k} {v / total:.0%}" for k, v in ranked[:3] if v > 0)
    return f"largest terms of the step: {top}"


def compute_layer(best: RankedLayout, hw: Hardware, w: TrainingWorkload, gpus: int, trace: Trace,
                  warnings: list[str], mfu_basis: str) -> ComputeLayer:
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
        accelerator=hw.accelerator_id, accelerator_name=hw.accelerator_id, system=hw.system_id, gpus=gpus,
        nodes=nodes, gpus_per_node=hw.gpus_per_node,
        parallelism=ParallelismOut(tp=best.tp, pp=best.pp, dp=best.dp, cp=best.cp, ep=best.ep, etp=best.etp,
                                   vp=best.vp, micro_batch_size=best.micro_batch_size, recompute=best.recompute,
                                   sequence_parallel=best.sequence_parallel, zero_stage=best.zero_stage),
        step_time_s=best.step_time_s, step_breakdown_s=best.step_breakdown_s, tokens_per_s=best.tokens_per_s,
        tokens_per_s_per_gpu=best.tokens_per_s / gpus, model_tflops_per_gpu=best.model_flops_per_gpu_per_s / 1e12,
        mfu=best.mfu, mfu_basis=mfu_basis, memory_per_gpu_bytes=best.memory_per_gpu_bytes,
        memory_breakdown_bytes=best.memory_breakdown_bytes, hbm_bytes=hw.hbm_bytes,
        memory_headroom_bytes=hw.hbm_bytes - best.memory_per_gpu_bytes,
        bottleneck=bottleneck(best.step_breakdown_s), warnings=warnings)


def objective_layer(arch: ModelArch, run: TrainingRunResolved, best: RankedLayout | None, w: TrainingWorkload,
                    trace: Trace) -> ObjectiveLayer:
    counts = param_counts(arch)
    fpt = training_flops_per_token(arch, run.seq_len)
    total = fpt * run.tokens
    batch_tokens = float(run.global_batch_size * run.seq_len)
    ttt = run.tokens / best.tokens_per_s if best and best.tokens_per_s > 0 else math.inf
    target = w.target.time_to_train
    trace.derived("objective.params", counts.total, "arch/counts.py param_counts (weights, norms, embeddings)")
    trace.derived("objective.active_params", counts.active, "total minus the routed experts not in top-k")
    trace.derived("objective.flops_per_token", fpt, "3 x (2 x active matmul params + causal attention)")
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
    layout = spec.compute.parallelism.model_dump()
    infra = build_training_infrastructure(
        w, catalog, system_id=hw.system_id, accelerator_vendor=catalog.accelerator(hw.accelerator_id).vendor,
        gpus=spec.compute.gpus, layout=layout, arch=arch, seq_len=run.seq_len, global_batch=run.global_batch_size,
        tokens=run.tokens, tokens_per_s=best.tokens_per_s, time_to_train_s=spec.objective.time_to_train_s,
        trace=trace)
    spec.fabric = layer_dict(infra.fabric)
    spec.storage = layer_dict(infra.storage)
    spec.reliability = layer_dict(infra.reliability)
    spec.software = layer_dict(infra.software)
    spec.facility = layer_dict(infra.facility)
    spec.bottleneck = bottleneck_view(spec.compute.model_dump(), spec.storage, spec.reliability)
    trace.derived("bottleneck.effective_mfu", None, "mfu x reliability.goodput")
    trace.derived("bottleneck.kernel_efficiency", None, "mfu / compute share of the step")
    adjusted = infra.reliability.goodput_adjusted_time_to_train_s
    spec.objective.goodput_adjusted_time_to_train_s = adjusted
    trace.derived("objective.goodput_adjusted_time_to_train_s", adjusted, "time_to_train_s / reliability.goodput")
    if adjusted is not None and spec.objective.time_to_train_target_s is not None:
        spec.objective.meets_target = bool(adjusted <= spec.objective.time_to_train_target_s)


def compile_training(w: TrainingWorkload, catalog: Catalog, *, with_alternatives: bool = True) -> SystemSpec:
    trace = Trace()
    arch = resolve_model(w.model, trace, "model")
    run = resolve_run(w, arch, trace)
    hw = resolve_hardware(w.compute, catalog, trace)
    check_precision(run.precision, hw)
    setup = TrainingSetup(seq_len=run.seq_len, global_batch_size=run.global_batch_size, precision=run.precision)
    spec = SystemSpec(kind="training", name=w.name or arch.name)
    needed: int | None = None
    try:
        gpus, needed = choose_gpus(w, arch, run, setup, hw, catalog, trace)
    except Infeasible as exc:
        spec.feasible, spec.binding_constraint = False, f"{exc.binding}: {exc.detail}"
        spec.objective = objective_layer(arch, run, None, w, trace)
        spec.collisions = [{"constraint": exc.binding, "detail": exc.detail}]
        if with_alternatives:
            spec.alternatives = alternatives(
                w, arch, spec, catalog, lambda v, c: compile_training(v, c, with_alternatives=False), None)
        spec.assumptions, spec.provenance = trace.assumptions, trace.provenance
        return spec
    plan = search(arch, setup, hw, gpus, w.compute.parallelism, top_k=5,
                  published_mfu=best_published_mfu(hw.accelerator_id, run.precision))
    spec.search = SearchSummary(evaluated=plan.evaluated, seconds=plan.seconds, rejected=plan.rejected,
                                alternatives=[layout.to_dict() for layout in plan.layouts[1:]])
    best = plan.best
    spec.objective = objective_layer(arch, run, best, w, trace)
    if best is None:
        binding, detail = plan.infeasible or ("memory", "no layout fits")
        spec.feasible, spec.binding_constraint = False, f"{binding}: {detail}"
        spec.collisions = [{"constraint": binding, "detail": detail}]
    else:
        basis = "fp8 dense peak" if run.precision in ("fp8", "mxfp8") else (
            "fp4 dense peak" if run.precision == "nvfp4" else "bf16 dense peak")
        spec.compute = compute_layer(best, hw, w, gpus, trace, list(plan.warnings), basis)
        add_infrastructure(spec, w, arch, hw, catalog, best, run, trace)
        spec.collisions = find_collisions(spec, w, needed)
        if spec.collisions and with_alternatives:
            spec.alternatives = alternatives(
                w, arch, spec, catalog,
                lambda v, c: compile_training(v, c, with_alternatives=False), needed)
    spec.assumptions, spec.provenance = trace.assumptions, trace.provenance
    return spec
