"""compile_inference: an inference workload -> result sections (objective, compute, inference,
search, storage), every number's provenance in the trace. Pure: no file or terminal I/O.

Infeasible is an answer: the sections come back with feasible = False and the binding
constraint named (memory, TTFT or TPOT below the hardware floor, the GPU cap).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..arch.counts import param_counts
from ..arch.resolve import resolve_model
from ..catalog.loader import Catalog
from ..errors import Infeasible, InputError
from ..intake.inference import InferenceWorkload
from ..provenance import Trace
from ..units import format_bytes, format_duration
from .device import serving_device
from .device_trace import trace_ceilings, trace_host_cost, trace_moe_kernel, with_host_cost
from .disagg import DisaggChoice
from .disagg_report import disagg_sections, disagg_summary, mode_reason
from .engines import Engine, engine
from .fitted import SLOT_CEILING
from .memory import context_sequences
from .model import ServedModel, served_model
from .online import Traffic
from .performance import STEP_PARTS, Device
from .resolve import DEFAULT_CANDIDATES, PERCENTILES, ServingSettings, resolve_serving
from .search import Candidate, Choice, Requirement, SearchResult, search
from .storage_section import storage_section

STEP_FORMULA = "inference step model (inference/performance.py) at the steady-state batch"
QUEUE_FORMULA = "M/D/c slot wait + M/D/1 prefill wait + chunked prefill (inference/online.py)"
MEMORY_FORMULA = "engine KV sizing rule (inference/memory.py)"


def _devices(w: InferenceWorkload, catalog: Catalog, s: ServingSettings, trace: Trace) -> dict[str, Device]:
    c = w.compute
    if c.accelerator is not None or c.system is not None:
        if c.accelerator:
            acc = catalog.accelerator(c.accelerator)
            trace.given("compute.accelerator", acc.id)
        else:
            acc = catalog.accelerator(catalog.system(str(c.system)).accelerator)
            trace.derived("compute.accelerator", acc.id, "the accelerator of the given system")
        choice = serving_device(catalog, acc.id, c.system, s.weights, s.kv_dtype)
        if choice.note:
            trace.assumed("compute.gemm_precision", choice.device.gemm_precision, choice.note)
        trace_ceilings(trace, acc.id, choice.device)
        return {acc.id: choice.device}
    devices: dict[str, Device] = {}
    for acc_id in DEFAULT_CANDIDATES:
        try:
            devices[acc_id] = serving_device(catalog, acc_id, None, s.weights, s.kv_dtype).device
        except InputError:
            continue
    trace.assumed("compute.accelerator", sorted(devices), "not given: searched across these candidates")
    return devices


def _requirement(w: InferenceWorkload, s: ServingSettings, m: ServedModel) -> Requirement:
    p = w.compute.parallelism
    if p.ep is not None and p.ep > 1 and not m.arch.is_moe:
        raise InputError("compute.parallelism.ep", p.ep,
                         "1 for a dense model (expert parallelism needs experts)")
    traffic = Traffic(isl=s.isl, osl=s.osl, reserve_tokens=s.isl_tail + s.osl_tail,
                      ttft_quantile=PERCENTILES[s.ttft[0]] if s.ttft else 0.99,
                      tpot_quantile=PERCENTILES[s.tpot[0]] if s.tpot else 0.99, isl_tail=s.isl_tail)
    return Requirement(traffic=traffic, scenario=s.scenario, ttft_target_s=s.ttft[1] if s.ttft else None,
                       tpot_target_s=s.tpot[1] if s.tpot else None, request_rate=s.request_rate,
                       concurrency=s.concurrency, utilization_ceiling=s.utilization_ceiling,
                       spare_replicas=s.spare_replicas, max_gpus=w.compute.max_gpus, gpus=w.compute.gpus,
                       tp=p.tp, pp=p.pp, ep=p.ep, memory_fraction=s.memory_fraction, mode=s.mode)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ResolvedServing:
    """An inference intake resolved: what the search runs on (validation re-evaluates from it)."""

    model: ServedModel
    settings: ServingSettings
    engine: Engine
    devices: dict[str, Device]
    requirement: Requirement


def resolve_inference(w: InferenceWorkload, catalog: Catalog, trace: Trace) -> ResolvedServing:
    """Model, serving settings, engine (with the intake's memory fraction and caps), candidate
    devices, requirement."""
    arch = resolve_model(w.model, trace, "model")
    if not arch.attention_layers:
        raise InputError("model", arch.name, "a model with attention layers: serving a pure state-space model "
                         "is not modelled (missing feature: a cache without KV)")
    s = resolve_serving(w, arch, trace)
    m = served_model(arch, s.weights, s.kv_dtype, s.ssm_state_dtype)
    base = engine(s.engine)
    eng = dataclasses.replace(
        base, memory_fraction=base.memory_fraction if s.memory_fraction is None else s.memory_fraction,
        max_batch_size=s.max_batch_size or base.max_batch_size, max_num_tokens=s.max_num_tokens or base.max_num_tokens,
        runtime_reserve_bytes=(base.runtime_reserve_bytes if s.runtime_reserve_bytes is None
                               else s.runtime_reserve_bytes))
    devices = _devices(w, catalog, s, trace)
    devices = {acc_id: with_host_cost(catalog, dev, eng) for acc_id, dev in devices.items()}
    return ResolvedServing(model=m, settings=s, engine=eng, devices=devices, requirement=_requirement(w, s, m))


def compile_inference(w: InferenceWorkload, catalog: Catalog, trace: Trace) -> dict[str, Any]:
    """Resolve, search, and write the sections; raises InputError on bad input only."""
    r = resolve_inference(w, catalog, trace)
    m, s, eng, devices, req = r.model, r.settings, r.engine, r.devices, r.requirement
    arch = m.arch
    if s.scenario == "online" and s.ttft is None:
        trace.assumed("serving.slot_utilization_ceiling", SLOT_CEILING,
                      "no TTFT target: KV slots at most 95% busy, so the request queue stays finite")
    out: dict[str, Any] = {"kind": "inference", "name": w.name or arch.name, "feasible": True,
                           "binding_constraint": None, "objective": _objective(m, s)}
    try:
        result = search(m, devices, eng, req)
    except Infeasible as exc:
        out.update(feasible=False, binding_constraint=f"{exc.binding}: {exc.detail}")
        return out
    out["search"] = _search_section(result, s)
    if result.best is None:
        binding, detail = _why_infeasible(result, req, m, devices)
        out.update(feasible=False, binding_constraint=f"{binding}: {detail}")
        out["inference"] = {"pareto_front": result.pareto, "hardware_floor_s": result.floors}
        return out
    best = result.best
    if isinstance(best, DisaggChoice):
        out["compute"], out["inference"] = disagg_sections(best, result, m, s, req, catalog, devices, eng, trace)
    else:
        out["compute"] = _compute_section(best, devices, catalog, eng, s, m, trace)
        out["inference"] = _inference_section(best, result, m, s, req, trace)
    if w.cost is not None:
        inf = out["inference"]
        inf.update(_cost(w, catalog, devices[best.accelerator], best.gpus, inf["request_rate_per_s"] * s.osl,
                         inf["output_tokens_per_s"], trace))
    out["storage"] = storage_section(w.storage, checkpoint_bytes=m.weight_bytes, compute=out["compute"],
                                     inference=out["inference"], trace=trace)
    return out


def _objective(m: ServedModel, s: ServingSettings) -> dict[str, Any]:
    c = param_counts(m.arch)
    return {"model": m.arch.name, "params": c.total, "active_params": c.active, "scenario": s.scenario,
            "input_tokens": s.isl, "output_tokens": s.osl, "context_window": s.context_window,
            "request_rate_per_s": s.request_rate, "concurrency": s.concurrency,
            "ttft_target_s": s.ttft[1] if s.ttft else None, "tpot_target_s": s.tpot[1] if s.tpot else None,
            "weights": s.weights, "kv_cache_dtype": s.kv_dtype, "weight_bytes": m.weight_bytes}


def _why_infeasible(result: SearchResult, req: Requirement, m: ServedModel,
                    devices: dict[str, Device]) -> tuple[str, str]:
    r, floors = result.rejected, result.floors
    if r["memory"] >= result.evaluated:
        caps = ", ".join(f"{a} ({format_bytes(d.hw.hbm_bytes)})" for a, d in devices.items())
        within = (f"no replica of at most {req.gpu_cap:,} GPUs (the GPU cap)" if req.gpu_cap < 10**9
                  else "no layout allowed")
        return "memory", (f"the weights ({format_bytes(m.weight_bytes)}) plus the KV cache of one "
                          f"{req.traffic.reserve_tokens:,.0f}-token request fit in {within} on {caps}")
    if req.tpot_target_s is not None and floors.get("tpot_s", 0.0) > req.tpot_target_s:
        return "tpot", (f"target {format_duration(req.tpot_target_s)} is below the hardware floor "
                        f"{format_duration(floors['tpot_s'])} (batch 1, the fastest layout that fits: one "
                        "step streams the weights each GPU holds)")
    if req.ttft_target_s is not None and floors.get("ttft_s", 0.0) > req.ttft_target_s:
        return "ttft", (f"target {format_duration(req.ttft_target_s)} is below the hardware floor "
                        f"{format_duration(floors['ttft_s'])} "
                        f"(one {req.traffic.isl:g}-token prompt, no queue)")
    if r["gpus"]:
        return "gpus", (f"meeting the targets at the requested load needs more than "
                        f"{req.gpu_cap} GPUs")
    return "ttft+tpot", "no batch meets both latency targets together"


def _search_section(result: SearchResult, s: ServingSettings) -> dict[str, Any]:
    return {"evaluated": result.evaluated, "seconds": result.seconds, "rejected": result.rejected,
            "alternatives": [_choice_summary(c, s) for c in result.alternatives]}


def _choice_summary(c: Candidate, s: ServingSettings) -> dict[str, Any]:
    if isinstance(c, DisaggChoice):
        return disagg_summary(c)
    return {"mode": "aggregated", "accelerator": c.accelerator, "tp": c.layout_value("tp"), "pp": c.layout_value("pp"),
            "ep": c.layout_value("ep"), "replicas": c.replicas + c.spares, "gpus": c.gpus,
            "batch_size": c.at("decode_seqs"),
            "output_tokens_per_s_per_gpu": c.at("tokens_per_s_per_gpu", capacity=True),
            "ttft_s": _ttft(c, s), "tpot_s": c.at("tpot_s"), "binding": c.binding}


def _compute_section(best: Choice, devices: dict[str, Device], catalog: Catalog, eng: Engine,
                     s: ServingSettings, m: ServedModel, trace: Trace) -> dict[str, Any]:
    acc = catalog.accelerator(best.accelerator)
    system = catalog.system(devices[best.accelerator].hw.system_id)
    plan = best.evaluation.plan
    breakdown = {"weights": best.value(plan.weights_bytes), "kv_cache": max(best.value(plan.kv_cache_bytes), 0.0),
                 "activations": best.value(plan.activation_bytes), "runtime_reserve": plan.reserve_bytes}
    gpus = best.gpus
    trace.derived("compute.gpus", gpus, "replicas x GPUs per replica (inference/search.py)")
    trace_moe_kernel(trace, m, devices[best.accelerator], best.layout_value("tp"), best.layout_value("ep"))
    trace_host_cost(trace, catalog, devices[best.accelerator], eng)
    trace.derived("compute.parallelism.tp", best.layout_value("tp"), "search optimum")
    trace.derived("compute.memory_per_gpu_bytes", sum(breakdown.values()), MEMORY_FORMULA)
    return {"accelerator": acc.id, "accelerator_name": acc.name, "system": system.id, "gpus": gpus,
            "gpus_per_node": system.gpus_per_node, "nodes": math.ceil(gpus / system.gpus_per_node),
            "parallelism": {"tp": best.layout_value("tp"), "pp": best.layout_value("pp"),
                            "ep": best.layout_value("ep"), "dp": best.replicas + best.spares},
            "memory_per_gpu_bytes": sum(breakdown.values()), "memory_breakdown_bytes": breakdown,
            "hbm_bytes": acc.memory_bytes, "device_visible_bytes": plan.device_bytes,
            "engine": eng.id, "memory_fraction": s.memory_fraction or eng.memory_fraction,
            "gemm_precision": devices[best.accelerator].gemm_precision}


def _inference_section(best: Choice, result: SearchResult, m: ServedModel, s: ServingSettings,
                       req: Requirement, trace: Trace) -> dict[str, Any]:
    plan = best.evaluation.plan
    kv_per_gpu = best.value(plan.kv_bytes_per_token_gpu)
    capacity = best.at("slots")
    kv_tokens = best.value(plan.kv_capacity_tokens)
    seqs_at_window = context_sequences(kv_tokens, kv_per_gpu, best.value(plan.ssm_state_bytes_gpu), s.context_window)
    tps_gpu = best.at("tokens_per_s_per_gpu", capacity=True)
    fleet_tps = tps_gpu * best.gpus_per_replica * best.replicas
    capacity_rate = best.at("requests_per_s", capacity=True) * best.replicas
    served_rate = s.request_rate if s.request_rate is not None else capacity_rate
    utilization = served_rate / max(capacity_rate, 1e-12)
    out: dict[str, Any] = {
        "mode": "aggregated", "scenario": s.scenario, "engine": s.engine, "weights": s.weights,
        "kv_cache_dtype": s.kv_dtype, **_ssm_state(m),
        "replicas": best.replicas + best.spares, "active_replicas": best.replicas,
        "spare_replicas": best.spares,
        "gpus_per_replica": best.gpus_per_replica, "batch_size": best.at("decode_seqs"),
        "served_output_tokens_per_s_per_gpu": best.at("tokens_per_s_per_gpu"),
        "max_batch_size": capacity, "kv_bytes_per_token": m.kv_bytes_per_token,
        "kv_bytes_per_token_per_gpu": kv_per_gpu, "kv_capacity_tokens": kv_tokens,
        "kv_capacity_sequences": seqs_at_window, "output_tokens_per_s_per_gpu": tps_gpu,
        "output_tokens_per_s": fleet_tps, "tokens_per_s_per_user": best.at("tokens_per_s_per_user"),
        "ttft_s": _ttft(best, s), "ttft_percentile": _ttft_percentile(s),
        "ttft_prefill_s": best.at("ttft_prefill_s"), "tpot_s": best.at("tpot_s"),
        "tpot_percentile": s.tpot[0] if s.tpot else "p99", "tpot_mean_s": best.at("tpot_mean_s"),
        "requests_per_s_per_replica": best.at("requests_per_s", capacity=True),
        "request_rate_per_s": served_rate, "batch_size_at_capacity": best.at("decode_seqs", capacity=True),
        "utilization": utilization, "binding": _binding_text(best, req),
        "step_breakdown_s": _step_breakdown(best), "pareto_front": result.pareto[:24],
        "hardware_floor_s": result.floors,
    }
    for key, formula in (("ttft_s", QUEUE_FORMULA), ("tpot_s", STEP_FORMULA),
                         ("output_tokens_per_s_per_gpu", STEP_FORMULA),
                         ("kv_capacity_tokens", MEMORY_FORMULA),
                         ("batch_size", "operating batch at the served load (inference/search.py)")):
        trace.derived(f"inference.{key}", out[key], formula)
    out["explanation"] = _explain(best, result, req, out)
    return out


def _ssm_state(m: ServedModel) -> dict[str, Any]:
    """A hybrid's Mamba-2 state per sequence (absent for a transformer)."""
    if not m.ssm_state_bytes:
        return {}
    return {"ssm_state_dtype": m.ssm_state_dtype, "ssm_state_bytes_per_sequence": m.ssm_state_bytes}


def _ttft(best: Choice, s: ServingSettings) -> float:
    """Online: at the percentile, queueing included. Offline every request is queued at once, so
    TTFT is the queue; reported without it (one mean step + the request's own prefill)."""
    if s.scenario == "offline":
        return best.at("ttft_prefill_s") + best.at("tpot_mean_s")
    return best.at("ttft_s")


def _ttft_percentile(s: ServingSettings) -> str:
    if s.scenario == "offline":
        return "offline: no queue (all requests queued at once)"
    return s.ttft[0] if s.ttft else "p99"


def _step_breakdown(best: Choice) -> dict[str, float]:
    st = best.evaluation.step
    return {k: best.value(getattr(st, f"{k}_s")) for k in STEP_PARTS}


def _binding_text(best: Choice, req: Requirement) -> dict[str, str]:
    what = {"memory": "the KV cache holds no more sequences (memory)",
            "batch_limit": "the engine's batch limit (max_batch_size / max_num_seqs; serving.max_batch_size)",
            "ttft": "a larger batch misses the TTFT target", "tpot": "a larger batch misses the TPOT target"}
    replicas = ("request rate" if req.request_rate is not None else
                "concurrency" if req.concurrency is not None else "one replica (no rate given)")
    return {"batch": what.get(best.binding, best.binding), "replicas": replicas}


def _cost(w: InferenceWorkload, catalog: Catalog, dev: Device, gpus: int, served_tokens_per_s: float,
          capacity_tps: float, trace: Trace) -> dict[str, Any]:
    """Fleet $/hour (all GPUs, spares and both pools included) and $ per million output tokens,
    served and at capacity (`capacity_tps`: the active replicas at their capacity batch), from the
    shared cost layer (cost/prices.py). Before the facility layer exists the energy is the GPUs'
    TDP x the given PUE (1 without one); the spine replaces these keys with the cost section's,
    which prices the facility layer's IT power."""
    from ..cost.prices import Fleet, fleet_price, per_million
    from ..cost.section import prices_for
    c = w.cost
    assert c is not None
    acc = catalog.accelerator(dev.hw.accelerator_id)
    assert acc.tdp_w is not None   # serving_device -> catalog.hardware() rejects an accelerator without it
    system = catalog.system(dev.hw.system_id)
    for key, value in c.model_dump(exclude_none=True).items():
        trace.given(f"cost.{key}", value)
    if not c.rented and c.power_usd_per_kwh is not None and c.pue is None:
        trace.assumed("cost.pue", 1.0, "not given: facility overhead not included")
    fleet = Fleet(accelerator=acc.id, system=system.id, gpus=gpus, nodes=-(-gpus // system.gpus_per_node),
                  units=-(-gpus // system.gpus_per_node), it_power_w=gpus * acc.tdp_w, pue=c.pue or 1.0)
    prices, source = prices_for(c, fleet)
    price = fleet_price(fleet, prices)
    if price.usd_per_hour is None:
        return {"cost_basis": price.missing}
    per_hour = price.usd_per_hour
    out = {"cost_usd_per_gpu_hour": price.usd_per_gpu_hour, "cost_usd_per_hour": per_hour,
           "cost_per_million_tokens": per_million(per_hour, served_tokens_per_s),
           "cost_per_million_tokens_at_capacity": per_million(per_hour, capacity_tps),
           "cost_basis": f"output tokens; {price.basis} ({source})"}
    trace.derived("inference.cost_per_million_tokens", out["cost_per_million_tokens"],
                  "$/hour of all GPUs (spares included) / output tokens per hour served x 1e6")
    return out


def _explain(best: Choice, result: SearchResult, req: Requirement, out: dict[str, Any]) -> list[str]:
    tp, pp, ep = best.layout_value("tp"), best.layout_value("pp"), best.layout_value("ep")
    lines = [mode_reason(result, req),
             f"{best.replicas + best.spares} x {best.accelerator} TP{tp}"
             + (f" PP{pp}" if pp > 1 else "") + (f" EP{ep}" if ep > 1 else "")
             + f" ({best.gpus} GPUs): the fewest GPUs of {result.evaluated} evaluated points "
             "meeting the targets",
             f"batch {out['batch_size']:.0f} per replica at {out['request_rate_per_s']:.3g} req/s; at most "
             f"{out['batch_size_at_capacity']:.0f}: {out['binding']['batch']}",
             f"TTFT {out['ttft_percentile']} {format_duration(out['ttft_s'])} (prefill alone "
             f"{format_duration(out['ttft_prefill_s'])}"
             + (f"; the rest is queueing at {out['utilization']:.0%} load)"
                if req.scenario == "online" else ")")
             + f", TPOT {out['tpot_percentile']} {format_duration(out['tpot_s'])}"]
    if best.spares:
        lines.append(f"+{best.spares} spare replica(s) for availability (N+{best.spares})")
    r = result.rejected
    lines.append(f"rejected points: memory {r['memory']}, TTFT {r['ttft']}, TPOT {r['tpot']}, "
                 f"GPU cap {r['gpus']}")
    return lines
