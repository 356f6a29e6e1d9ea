"""`compile_hpc`: a `kind: hpc` intake -> result sections (objective, compute, hpc, storage).

Pure: no file or terminal I/O. Picks the GPU count (given; the fewest meeting the target; or the
fewest that hold the problem), evaluates the step there, and tables strong and weak scaling. A
target no count can meet comes back with `feasible: False` and the binding constraint named.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ..catalog.loader import Catalog
from ..errors import CatalogGap
from ..intake.hpc import HpcWorkload
from ..intake.limits import MAX_GPUS
from ..perf.collectives import reach_without_nics
from ..provenance import Trace
from ..spine.gaps import binding_of
from ..spine.result import NotSized
from .classes import SIZED_FOR_TARGET, Profile
from .comm import COMM_FORMULA
from .device import Device
from .host import HOST_FORMULA, host_sizing
from .io import IO_FORMULA, MD_OUTPUT_BYTES_PER_NODE_DAY, IoLoad, scratch_plan
from .resolve import (
    SECONDS_PER_YEAR,
    profile_for,
    resolve_device,
    resolve_io,
    resolve_profile,
    resolve_steps,
    resolve_units,
    step_target_s,
)
from .roofline import ROOFLINE_FORMULA, compute_rate, memory_rate, peak_flops, vendor_fraction
from .scaling import (
    STEP_FORMULA,
    USABLE_HBM_FRACTION,
    TargetResult,
    gpus_for_step_target,
    memory_per_gpu_bytes,
    min_gpus_for_memory,
    scaling_counts,
    step_times,
    strong_scaling,
    weak_scaling,
)


def compile_hpc(workload: HpcWorkload, catalog: Catalog, trace: Trace,
                scale_out_bytes_per_s: float | None = None) -> dict[str, Any]:
    """Result sections keyed like SystemSpec fields: objective, compute, hpc, storage, feasible,
    binding_constraint. Raises InputError for bad input (unknown class or unit ...). A number the
    catalog lacks (a peak, a scale-up bandwidth) leaves compute and the layers below "not sized",
    the objective intact (spine/gaps.py). `scale_out_bytes_per_s` replaces the catalog's per-GPU
    NIC bandwidth (the fabric pins, spine/fabric_pins.py)."""
    w = workload
    cls = trace.given("hpc.solver_class", w.application.solver_class)
    units = resolve_units(w, trace)
    profile, precision = resolve_profile(w, units, trace)
    steps, timestep = resolve_steps(w, trace)
    step_target = step_target_s(w, steps, timestep)
    objective = {
        "solver_class": cls, "code": w.application.code, "problem_size": units, "unit": profile.unit,
        "precision": precision, "steps": steps, "timestep_s": timestep,
        "total_flops": profile.flops_per_unit_step * units * steps,
        "total_bytes": profile.bytes_per_unit_step * units * steps,
        "time_to_solution_target_s": w.target.time_to_solution,
        "time_per_step_target_s": step_target, "meets_target": None}
    try:
        return _sized(w, catalog, trace, cls, units, profile, precision, steps, timestep, objective,
                      scale_out_bytes_per_s)
    except CatalogGap as gap:
        below = NotSized(not_sized=f"not sized: needs the compute layer, which is not sized "
                                   f"({', '.join(gap.missing)} unknown)", missing=list(gap.missing)).model_dump()
        return {"feasible": False, "binding_constraint": binding_of(gap), "objective": objective,
                "compute": NotSized.from_gap(gap).model_dump(), "hpc": below, "storage": below,
                "fabric": below, "software": below, "facility": below}


def _sized(w: HpcWorkload, catalog: Catalog, trace: Trace, cls: str, units: float, profile: Profile,
           precision: str, steps: float, timestep: float | None, objective: dict[str, Any],
           scale_out_bytes_per_s: float | None = None) -> dict[str, Any]:
    device = resolve_device(w, catalog, trace)
    if scale_out_bytes_per_s is not None:   # the fabric pins' effective bandwidth (spine/fabric_pins.py)
        device = replace(device, scale_out_bandwidth_bytes_per_s=scale_out_bytes_per_s)
    warnings = _check_peaks(profile, device)
    step_target = objective["time_per_step_target_s"]
    io = resolve_io(w, profile, units, device, trace)

    hi = w.compute.max_gpus or MAX_GPUS
    g_mem = min_gpus_for_memory(profile, device, units)
    no_scale_up = device.scale_up_bandwidth_bytes_per_s is None and device.scale_up_domain_gpus > 1
    if no_scale_up and not w.compute.gpus and g_mem == 1:   # more GPUs would raise (comm.py), naming it
        hi = 1
        warnings.append(f"{device.accelerator_id}: the catalog has no scale-up (GPU-to-GPU) bandwidth, so "
                        "only one GPU was considered; add it in a user catalog to scale out")
    reach = reach_without_nics(device)
    no_nic = reach is not None and (w.compute.gpus or 0) <= reach < hi
    if no_nic and reach is not None:
        hi = reach   # a node without NICs (a user catalog's): no count or table crosses it
    gpus, feasible, binding, detail, target_info = _choose_gpus(w, profile, device, units, io, g_mem, hi,
                                                                step_target, trace)
    if no_nic and binding in ("compute.max_gpus", "memory"):
        binding, detail = "fabric", (f"{device.system_id} has no scale-out NIC: the run stays within one node "
                                     f"of {reach} GPUs; {detail}")
    b = step_times(profile, device, units, gpus, io)
    t_step = float(b.total_s[0])
    nodes = math.ceil(gpus / device.gpus_per_node)
    trace.derived("hpc.time_per_step_s", t_step, STEP_FORMULA)
    trace.derived("hpc.time_to_solution_s", t_step * steps, "steps x time per step")
    trace.derived("hpc.communication_s", {k: float(v[0]) for k, v in b.comm_by_pattern_s.items()}, COMM_FORMULA)
    trace.derived("hpc.scaling.strong", None, "same problem on more GPUs: efficiency = t(g0) g0 / (t(g) g)")
    trace.derived("hpc.scaling.weak", None, "memory per GPU held: efficiency = work per GPU-second / first row's")
    mem_gpu = float(memory_per_gpu_bytes(profile, units, gpus))
    trace.derived("compute.memory_per_gpu_bytes", mem_gpu, "memory_per_unit_bytes x units / gpus")
    trace.derived("compute.min_gpus_for_memory", g_mem, f"ceil(memory / (HBM x {USABLE_HBM_FRACTION:g} usable))")
    host = host_sizing(device, cls, mem_gpu)
    trace.derived("compute.cpu_cores_per_gpu", host.cpu_cores_per_gpu, HOST_FORMULA)
    trace.derived("compute.host_memory_per_gpu_bytes", host.host_memory_per_gpu_bytes, HOST_FORMULA)
    scratch = _scratch(w, io, cls, t_step, steps, nodes, trace)
    g_table = min(g_mem, max(hi, gpus))   # a problem no count can hold: tables from the cap, not 10^20 GPUs
    g_counts = scaling_counts(device, g_table, gpus, hi)
    weak_counts = sorted(g for g in {1, device.gpus_per_node, *g_counts} if g <= hi and (g >= gpus or g <= 8))
    return {
        "feasible": feasible,
        "binding_constraint": binding,
        "objective": {**objective,
                      "meets_target": None if step_target is None else t_step <= step_target * (1 + 1e-9)},
        "compute": {
            "accelerator": device.accelerator_id, "accelerator_name": device.accelerator_name,
            "system": device.system_id, "gpus": gpus, "nodes": nodes, "gpus_per_node": device.gpus_per_node,
            "min_gpus_for_memory": g_mem, "memory_per_gpu_bytes": mem_gpu, "hbm_bytes": device.memory_bytes,
            "memory_headroom_bytes": device.memory_bytes - mem_gpu,
            "cpu_cores_per_gpu": host.cpu_cores_per_gpu,
            "cpu_cores_per_gpu_needed": host.cpu_cores_per_gpu_needed,
            "host_memory_per_gpu_bytes": host.host_memory_per_gpu_bytes,
            "host_memory_per_gpu_needed_bytes": host.host_memory_per_gpu_needed_bytes,
            "unified_memory": host.unified_memory, "warnings": warnings,
        },
        "hpc": {
            "solver_class": cls,
            "time_per_step_s": t_step,
            "bound": b.bound(),
            "time_to_solution_s": t_step * steps,
            "step_breakdown_s": {"compute": float(b.compute_s[0]), "memory": float(b.memory_s[0]),
                                 "launch": float(b.launch_s[0]), "network": float(b.network_s[0]),
                                 "io": float(b.io_s[0])},
            "communication_s": {k: float(v[0]) for k, v in b.comm_by_pattern_s.items()},
            "flops_per_unit_step": profile.flops_per_unit_step,
            "bytes_per_unit_step": profile.bytes_per_unit_step,
            "memory_per_unit_bytes": profile.memory_per_unit_bytes,
            "roofline": _roofline(profile, device),
            "rates": _rates(cls, units, t_step, timestep),
            "target": target_info,
            "target_detail": detail,
            "scaling": {
                "strong": strong_scaling(profile, device, units, g_table, g_counts),
                "weak": weak_scaling(lambda u: profile_for(w, precision, u), device, units, gpus,
                                     profile.memory_exponent, weak_counts),
            },
            "host": host.__dict__,
        },
        "storage": scratch,
    }


def _check_peaks(profile: Profile, device: Device) -> list[str]:
    """Every kernel's peak must exist (InputError names it); warn where FP64 was cut."""
    for k in profile.kernels:
        peak_flops(device, profile.arithmetic, k.compute)
    warnings = []
    fp64, fp32 = device.peak_fp64, device.peak_fp32
    if profile.arithmetic == "fp64" and fp64 and fp32 and fp64 < 0.1 * fp32:
        warnings.append(f"{device.accelerator_id}: FP64 peak {fp64 / 1e12:.3g} TFLOP/s is "
                        f"{fp64 / fp32:.1%} of its FP32 peak (FP64 cut in this "
                        "generation); an FP64 code runs far below its FP32 rate")
    return warnings


def _choose_gpus(w: HpcWorkload, p: Profile, d: Device, units: float, io: IoLoad, g_mem: int, hi: int,
                 step_target: float | None, trace: Trace,
                 ) -> tuple[int, bool, str | None, str | None, dict[str, Any]]:
    info: dict[str, Any] = {"time_per_step_target_s": step_target, "gpus_needed": None,
                            "saturation_gpus": None, "best_time_per_step_s": None}
    if w.compute.gpus is not None:
        g = trace.given("compute.gpus", w.compute.gpus)
        if g < g_mem:
            return g, False, "memory", (f"the problem needs {g_mem} GPUs' memory; {g} given"), info
        if step_target is not None:
            t = float(step_times(p, d, units, g, io).total_s[0])
            if t > step_target * (1 + 1e-9):
                res = gpus_for_step_target(p, d, units, step_target, g_mem, hi, io)
                _note(info, res)
                need = f"{res.gpus} GPUs meet it" if res.gpus else res.detail
                return g, False, "compute.gpus", (f"{g} GPUs take {t:.3g} s per step > target "
                                                  f"{step_target:.3g} s; {need}"), info
        return g, True, None, None, info
    if g_mem > hi:
        g = trace.derived("compute.gpus", hi, "the GPU cap")
        return g, False, "memory", f"the problem needs {g_mem} GPUs' memory; the cap is {hi}", info
    if step_target is None:
        g = trace.assumed("compute.gpus", g_mem, "no time target: the fewest GPUs that hold the problem")
        return g, True, None, None, info
    res = gpus_for_step_target(p, d, units, step_target, g_mem, hi, io)
    _note(info, res)
    if res.gpus is not None:
        g = trace.derived("compute.gpus", res.gpus, SIZED_FOR_TARGET)
        return g, True, None, None, info
    g = trace.derived("compute.gpus", res.best_gpus, "where strong scaling saturates (target unreachable)")
    return g, False, res.binding, res.detail, info


def _note(info: dict[str, Any], res: TargetResult) -> None:
    info.update(gpus_needed=res.gpus, saturation_gpus=res.best_gpus, best_time_per_step_s=res.best_step_s)


def _roofline(p: Profile, d: Device) -> dict[str, Any]:
    k = max(p.kernels, key=lambda k: k.flops_per_unit + k.bytes_per_unit)
    peak, basis = peak_flops(d, p.arithmetic, k.compute)
    sustained_flops = compute_rate(d, k, p.arithmetic)
    sustained_bw = memory_rate(d, k.access, k.code)
    return {"formula": ROOFLINE_FORMULA, "peak_flops": peak, "peak_basis": basis,
            "sustained_flops_per_s": sustained_flops,
            "memory_bandwidth_bytes_per_s": d.memory_bandwidth_bytes_per_s,
            "sustained_memory_bandwidth_bytes_per_s": sustained_bw,
            "arithmetic_intensity_flop_per_byte": (p.flops_per_unit_step / p.bytes_per_unit_step
                                                   if p.bytes_per_unit_step else None),
            "ridge_flop_per_byte": sustained_flops / sustained_bw,
            "fitted_constants": "hpc/fitted.py (fitted on calibration/hpc_public.yaml)",
            "amd_kernel_fraction": vendor_fraction(d, k.code) if d.is_amd else None}


def _rates(cls: str, units: float, t_step: float, timestep: float | None) -> dict[str, float]:
    rates = {"unit_steps_per_s": units / t_step, "steps_per_s": 1.0 / t_step}
    if cls in ("cfd_lbm", "cfd_fv"):
        rates["mlups"] = units / t_step / 1e6
    if timestep is not None and cls == "molecular_dynamics":
        rates["ns_per_day"] = timestep / t_step * 86400 / 1e-9
    if timestep is not None and cls == "weather_climate":
        rates["simulated_years_per_day"] = timestep / t_step * 86400 / SECONDS_PER_YEAR
    return rates


def _scratch(w: HpcWorkload, io: IoLoad, cls: str, t_step: float, steps: float, nodes: int,
             trace: Trace) -> dict[str, Any]:
    load = io
    if w.io.output_bytes_per_step is None and w.io.output_bytes_per_unit is None:
        if cls == "molecular_dynamics":
            out = MD_OUTPUT_BYTES_PER_NODE_DAY * nodes / 86400.0 * t_step
            trace.assumed("storage.output_bytes_per_step", out,
                          "MD trajectory output ~10 GB per node per day (arXiv 2506.15585)")
            load = replace(io, output_bytes_per_step=out)
        else:
            trace.assumed("storage.output_bytes_per_step", 0.0, "no output given: only checkpoints counted")
    plan = scratch_plan(load, t_step, steps, nodes)
    trace.derived("storage.scratch_write_bandwidth_bytes_per_s", plan.write_bandwidth_bytes_per_s, IO_FORMULA)
    trace.derived("storage.scratch_capacity_bytes", plan.capacity_bytes, IO_FORMULA)
    return {"scratch_write_bandwidth_bytes_per_s": plan.write_bandwidth_bytes_per_s,
            "scratch_write_bandwidth_per_node_bytes_per_s": plan.write_bandwidth_per_node_bytes_per_s,
            "scratch_capacity_bytes": plan.capacity_bytes, "checkpoint_bytes": plan.checkpoint_bytes,
            "checkpoint_interval_s": plan.checkpoint_interval_s, "checkpoints": plan.checkpoints,
            "output_bytes_per_step": plan.output_bytes_per_step,
            "output_total_bytes": plan.output_total_bytes,
            "scratch_write_bandwidth_pinned_per_node_bytes_per_s": io.write_bandwidth_per_node_bytes_per_s}
