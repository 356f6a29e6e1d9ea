"""`compile_generic`: a `kind: generic` intake -> objective, compute, pipeline, storage and
reliability sections. Pure: no file or terminal I/O.

GPU count: given; else the fewest that meet `target.time_to_result` (the pipeline rate per GPU
is nearly constant, so a few fixed-point passes on g = g x time / target reach it); else one node
(an assumption). The pipeline rate is the slowest stage (generic/pipeline.py); checkpoints and
failures take their share through the reliability layer's goodput (training mode).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..catalog.loader import Catalog
from ..errors import Infeasible, InputError
from ..intake.generic import GenericWorkload
from ..perf.collectives import group_all_reduce_s, reach_without_nics
from ..provenance import Trace
from ..spine.infrastructure import layer_dict
from ..storage.dataset import sample_demand
from ..storage.plan import plan_storage_and_reliability
from ..storage.tiers import required_tier, tier_bandwidth
from .pipeline import PipelineInputs, PipelineSection, Stage, gpu_step, stages, unbind, verdict
from .resolve import GRADIENT_BYTES, GenericResolved, resolve_generic

GPU_COUNT_PASSES = 6
LOWER_STEPS = 16   # the estimate rounds up: try a few counts below it
MAX_GPUS = 65536


@dataclass(frozen=True, kw_only=True)
class _Evaluation:
    gpus: int
    stages: list[Stage]
    pipeline_rate: float | None
    lower_bound: bool
    goodput: float
    storage: Any
    reliability: Any
    step: tuple[float | None, float | None, float | None]
    allreduce_s: float


def _allreduce_s(w: GenericWorkload, r: GenericResolved, catalog: Catalog, gpus: int) -> float:
    """Ring/hierarchical all-reduce of the gradients per step (perf/collectives.py)."""
    if not r.training or gpus == 1 or w.model.params is None:
        return 0.0
    hw = catalog.hardware(r.accelerator.id, r.system.id)
    reach = reach_without_nics(hw)
    if reach is not None and gpus > reach:
        raise Infeasible("fabric", f"{hw.system_id} has no scale-out NIC: the gradient all-reduce cannot span "
                                   f"more than the {reach} GPUs of one scale-up domain")
    size = w.model.params * GRADIENT_BYTES[r.precision]
    return float(group_all_reduce_s(size, gpus, 1, hw))


def _inputs(w: GenericWorkload, r: GenericResolved, gpus: int, allreduce: float, read: float | None,
            node_read: float | None, write: float | None) -> PipelineInputs:
    return PipelineInputs(
        gpus=gpus, gpus_per_node=r.system.gpus_per_node, sample_bytes=w.data.sample_size,
        device_bytes_per_sample=r.device_bytes_per_sample, output_bytes_per_sample=w.outputs.bytes_per_sample,
        cores_per_gpu=r.cores_per_gpu, decode_rate_per_core=r.decode_rate_per_core,
        pcie_bytes_per_s=r.accelerator.pcie_bandwidth_bytes_per_s, h2d_efficiency=r.h2d_efficiency,
        gpu_samples_per_s=r.gpu_samples_per_s, batch_size_per_gpu=r.batch_size_per_gpu, allreduce_s=allreduce,
        backward_share=r.backward_share, training=r.training, storage_read_bytes_per_s=read,
        storage_node_read_bytes_per_s=node_read, storage_write_bytes_per_s=write)


def _min_rate(all_stages: list[Stage], skip: tuple[str, ...] = ()) -> float | None:
    known = [s.samples_per_s for s in all_stages if s.samples_per_s is not None and s.name not in skip]
    return min(known) if known else None


def _evaluate(w: GenericWorkload, r: GenericResolved, catalog: Catalog, gpus: int, total: float) -> _Evaluation:
    """The pipeline at `gpus`: stages without storage first (the demand), then the storage tier
    that demand needs (or the pinned one), then the storage stage and the goodput."""
    allreduce = _allreduce_s(w, r, catalog, gpus)
    gpn = r.system.gpus_per_node
    first = stages(_inputs(w, r, gpus, allreduce, None, None, None))
    # The read demand is what the GPUs consume; while their rate is open, what the loader could feed.
    gpu_rate = next(s.samples_per_s for s in first if s.name == "gpu_compute")
    demand = gpu_rate if gpu_rate is not None else (_min_rate(first, skip=("storage_read", "output_write")) or 0.0)
    samples = w.storage.dataset_samples or w.data.samples
    size = w.storage.sample_size or w.data.sample_size
    storage = reliability = None
    goodput = 1.0
    if r.training:
        if w.model.params is None:
            raise InputError("model.params", None, "the parameter count, in training mode (checkpoint size and "
                             "the gradient all-reduce)")
        s, rel = w.storage, w.reliability
        storage, reliability = plan_storage_and_reliability(
            gpus=gpus, gpus_per_node=gpn, params=w.model.params, tp=1, pp=1, dp=gpus, zero=0,
            dataset_samples=samples, sample_bytes=size, samples_per_s=demand, tier=s.tier,
            write_bytes_per_s=s.write_bandwidth, checkpoint_mode=s.checkpoint_mode, gds=s.gpudirect_storage,
            retained_checkpoints=s.retained_checkpoints, restart_s=rel.restart_time,
            failure_rate=rel.failure_rate, per_gpu_day=rel.failures_per_gpu_day,
            per_node_day=rel.failures_per_node_day, checkpoint_interval_s=rel.checkpoint_interval,
            time_to_train_s=total / demand if demand > 0 else None)
        tier_name = storage.tier
        goodput = reliability.goodput
    else:
        need = sample_demand(samples=samples, sample_bytes=size, samples_per_s=demand, gpus=gpus)
        found = tier_bandwidth(w.storage.tier, gpus=gpus, gpus_per_node=gpn) if w.storage.tier else (
            required_tier(need.read_bytes_per_s, gpus=gpus, gpus_per_node=gpn))
        tier_name = found.tier if found else "best"
    bw = tier_bandwidth(tier_name if tier_name in ("good", "better", "best") else "best", gpus=gpus, gpus_per_node=gpn)
    write = w.storage.write_bandwidth or bw.write_bytes_per_s
    final = stages(_inputs(w, r, gpus, allreduce, bw.read_bytes_per_s, bw.node_read_bytes_per_s, write))
    rate = _min_rate(final)
    lower = any(s.samples_per_s is None for s in final)
    return _Evaluation(gpus=gpus, stages=final, pipeline_rate=rate, lower_bound=lower, goodput=goodput,
                       storage=storage, reliability=reliability,
                       step=gpu_step(_inputs(w, r, gpus, allreduce, None, None, None)), allreduce_s=allreduce)


def _time(ev: _Evaluation, total: float) -> float | None:
    return None if not ev.pipeline_rate else total / (ev.pipeline_rate * ev.goodput)


def _choose(w: GenericWorkload, r: GenericResolved, catalog: Catalog, total: float,
            trace: Trace) -> tuple[_Evaluation, str | None]:
    """The evaluation at the chosen GPU count, and the binding constraint if the target is missed."""
    c, target = w.compute, w.target.time_to_result
    gpn = r.system.gpus_per_node
    if c.gpus is not None:
        trace.given("compute.gpus", c.gpus)
        return _evaluate(w, r, catalog, c.gpus, total), None
    cap = c.max_gpus or MAX_GPUS
    if target is None:
        gpus = min(gpn, cap)
        trace.assumed("compute.gpus", gpus, "no GPU count and no target: one node of the system")
        return _evaluate(w, r, catalog, gpus, total), None
    # estimate from one node's rate per GPU, raise until the target is met, then lower while it holds
    ev = _evaluate(w, r, catalog, min(gpn, cap), total)
    t = _time(ev, total)
    gpus = ev.gpus if t is None else min(cap, max(1, math.ceil(ev.gpus * t / target)))
    ev = _evaluate(w, r, catalog, gpus, total)
    for _ in range(GPU_COUNT_PASSES):
        t = _time(ev, total)
        if t is None or t <= target or gpus >= cap:
            break
        gpus = min(cap, max(gpus + 1, math.ceil(gpus * t / target * 1.001)))
        ev = _evaluate(w, r, catalog, gpus, total)
    for _ in range(LOWER_STEPS):
        if gpus <= 1:
            break
        fewer = _evaluate(w, r, catalog, gpus - 1, total)
        t_fewer = _time(fewer, total)
        if t_fewer is None or t_fewer > target:
            break
        gpus, ev = gpus - 1, fewer
    trace.derived("compute.gpus", ev.gpus, "fewest GPUs whose pipeline rate x goodput meets target.time_to_result")
    t = _time(ev, total)
    if t is not None and t > target:
        return ev, (f"deadline: {ev.gpus} GPUs (the cap) take {t / 3600:.1f} h against a target of "
                    f"{target / 3600:.1f} h")
    return ev, None


def _pipeline_section(ev: _Evaluation, r: GenericResolved, w: GenericWorkload, total: float,
                      trace: Trace) -> PipelineSection:
    binding, sentence, input_bound = verdict(ev.stages)
    step, exposed, _ = ev.step
    effective = None if ev.pipeline_rate is None else ev.pipeline_rate * ev.goodput
    time = total / effective if effective else None    # a zero rate (a node with no NIC) never finishes
    trace.derived("pipeline.pipeline_samples_per_s", ev.pipeline_rate, "min over the stages of the data path")
    trace.derived("pipeline.effective_samples_per_s", effective, "pipeline rate x reliability.goodput")
    trace.derived("pipeline.time_to_result_s", time, "samples x epochs / effective rate")
    return PipelineSection(
        stages=ev.stages, binding_stage=binding, verdict=sentence, input_bound=input_bound,
        unbind=unbind(binding, ev.stages, _inputs(w, r, ev.gpus, ev.allreduce_s, None, None, None)),
        pipeline_samples_per_s=ev.pipeline_rate, effective_samples_per_s=effective, total_samples=total,
        time_to_result_s=time, time_to_result_is_lower_bound=ev.lower_bound and time is not None,
        step_time_s=step if r.training else None, allreduce_s=ev.allreduce_s if r.training else None,
        exposed_allreduce_s=exposed if r.training else None)


def _target_verdict(pipeline: PipelineSection, target: float | None) -> dict[str, Any]:
    """meets_target, and why it is open: a time that is a lower bound (a stage left open, to be
    measured) proves a miss when it already exceeds the target, and nothing when it is under it."""
    time = pipeline.time_to_result_s
    if target is None or time is None:
        return {"meets_target": None}
    if pipeline.time_to_result_is_lower_bound and time <= target:
        return {"meets_target": None, "target_open": f"the time to result is a lower bound: {pipeline.verdict}"}
    return {"meets_target": bool(time <= target)}


def compile_generic(w: GenericWorkload, catalog: Catalog, trace: Trace) -> dict[str, Any]:
    """Result sections keyed like SystemSpec fields."""
    r = resolve_generic(w, catalog, trace)
    total = w.data.samples * w.data.epochs
    trace.derived("pipeline.total_samples", total, "data.samples x data.epochs")
    ev, missed = _choose(w, r, catalog, total, trace)
    pipeline = _pipeline_section(ev, r, w, total, trace)
    target = w.target.time_to_result
    objective = {
        "model": w.model.name or "generic model", "mode": w.model.mode, "flops_per_sample": r.flops_per_sample,
        "params": w.model.params,
        "samples": w.data.samples, "epochs": w.data.epochs, "sample_bytes": w.data.sample_size,
        "dataset_bytes": w.data.samples * w.data.sample_size, "total_samples": total,
        "total_flops": total * r.flops_per_sample, "time_to_result_s": pipeline.time_to_result_s,
        "time_to_result_target_s": target, **_target_verdict(pipeline, target)}
    gpus = ev.gpus
    compute = {
        "accelerator": r.accelerator.id, "accelerator_name": r.accelerator.name, "system": r.system.id,
        "gpus": gpus, "nodes": math.ceil(gpus / r.system.gpus_per_node), "gpus_per_node": r.system.gpus_per_node,
        "parallelism": {"tp": 1, "pp": 1, "dp": gpus, "ep": 1}, "precision": r.precision,
        "peak_flops_per_s": r.peak_flops, "gpu_efficiency": r.gpu_efficiency,
        "gpu_samples_per_s_per_gpu": r.gpu_samples_per_s, "cpu_cores_per_gpu": r.cores_per_gpu,
        "decode_rate_per_core": r.decode_rate_per_core,
        "batch_size_per_gpu": r.batch_size_per_gpu, "bottleneck": pipeline.binding_stage or "open",
        "host_cpu": r.host_cpu}
    trace.derived("compute.nodes", compute["nodes"], "ceil(gpus / gpus_per_node)")
    sections: dict[str, Any] = {"objective": objective, "compute": compute, "pipeline": pipeline}
    if ev.storage is not None:
        sections["storage"] = layer_dict(ev.storage)
        sections["reliability"] = layer_dict(ev.reliability)
        for layer in (ev.storage, ev.reliability):
            for a in layer.assumptions:
                trace.assumed(a.field, a.value, a.why, a.unit)
            for path, formula in layer.formulas.items():
                trace.derived(path, None, formula)
    if missed:
        sections.update(feasible=False, binding_constraint=missed,
                        collisions=[{"constraint": "deadline", "detail": missed}])
    elif target is not None and pipeline.time_to_result_s is not None and pipeline.time_to_result_s > target:
        detail = (f"{gpus} GPUs take {pipeline.time_to_result_s / 3600:.1f} h against a target of "
                  f"{target / 3600:.1f} h ({pipeline.verdict})")
        sections["collisions"] = [{"constraint": "deadline", "detail": detail}]
    return sections


__all__ = ["compile_generic"]
