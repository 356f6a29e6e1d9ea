"""Result sections of a disaggregated answer (same keys as the aggregated one, plus the two pools),
and why the chosen mode won. Pure: builds dicts, records provenance in the trace."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..catalog.loader import Catalog
from ..provenance import Trace
from ..units import format_duration
from .device_trace import trace_host_cost, trace_moe_kernel
from .disagg import DisaggChoice
from .engines import Engine
from .fitted import SLOT_CEILING
from .memory import context_sequences
from .model import ServedModel
from .performance import Device
from .resolve import ServingSettings
from .search import active_gpus, capacity_tokens_per_s_per_gpu

if TYPE_CHECKING:
    from .search import Requirement, SearchResult

TTFT_FORMULA = ("M/D/1 prompt wait at the prefill pool + prefill + KV transfer + M/D/c decode-slot wait "
                "(inference/disagg.py)")
TPOT_FORMULA = "decode-only step (no prefill chunks) at the TPOT tail of the busy slots (inference/disagg.py)"
BATCH_TEXT = {"memory": "the KV cache holds no more sequences (memory)",
              "batch_limit": "the engine's batch limit (max_batch_size / max_num_seqs; serving.max_batch_size)",
              "ttft": "a larger batch misses the TTFT target (decode-slot wait)",
              "tpot": "a larger batch misses the TPOT target",
              "load": "the load needs no larger batch with these pools"}


def _batch(c: Any) -> float:
    return c.batch_size_at_capacity if isinstance(c, DisaggChoice) else c.at("decode_seqs", capacity=True)


def _fleet(c: Any) -> float:
    return capacity_tokens_per_s_per_gpu(c) * active_gpus(c)


def _why_none(other: str, counts: dict[str, int], req: Requirement) -> str:
    cap = req.gpu_cap
    if counts.get("gpus"):
        return f"every {other} configuration meeting the latency targets needs more than {cap} GPUs"
    if other == "aggregated" and counts.get("tpot", 0) >= counts.get("ttft", 0) and counts.get("tpot"):
        return ("TPOT target unreachable with prefill chunks interleaved in the decode steps at this load "
                f"({counts['tpot']} aggregated points missed TPOT, {counts.get('ttft', 0)} TTFT)")
    if other == "aggregated" and counts.get("ttft"):
        return ("TTFT target unreachable with prompts queued behind the decode batch "
                f"({counts['ttft']} aggregated points missed TTFT)")
    if other == "disaggregated" and counts.get("ttft"):
        return ("no disaggregated pool pair meets TTFT (prefill + KV transfer + queueing; "
                f"{counts['ttft']} points missed it)")
    return f"no {other} configuration meets the targets"


def mode_reason(result: SearchResult, req: Requirement) -> str:
    """One line: why the chosen mode (aggregated or disaggregated) won."""
    best = result.best
    assert best is not None   # called for a feasible answer only
    mode = best.mode
    if req.scenario == "offline":
        return "aggregated: offline maximum throughput (disaggregated pools are sized for a rate and targets)"
    if req.mode != "auto":
        return f"{mode}: pinned by serving.mode"
    other_name = "aggregated" if mode == "disaggregated" else "disaggregated"
    other = result.best_by_mode.get(other_name)
    if other is None:
        return f"{mode}: " + _why_none(other_name, result.rejected_by_mode.get(other_name, {}), req)
    if req.gpus is not None:
        return (f"{mode}: more output tokens/s on the pinned {req.gpus} GPUs at capacity "
                f"({_fleet(best):.0f} vs {_fleet(other):.0f} {other_name})")
    if best.gpus < other.gpus:
        detail = (f"; decode steps without prefill chunks hold batch {_batch(best):.0f} within TPOT vs "
                  f"{_batch(other):.0f} aggregated" if mode == "disaggregated" else
                  "; one pool serves prefill and decode without a KV transfer")
        return f"{mode}: fewer GPUs ({best.gpus} vs {other.gpus} {other_name}){detail}"
    tps, other_tps = capacity_tokens_per_s_per_gpu(best), capacity_tokens_per_s_per_gpu(other)
    return (f"{mode}: same GPUs ({best.gpus}), more output tokens/s per GPU ({tps:.0f} vs "
            f"{other_tps:.0f} {other_name})")


def disagg_summary(c: DisaggChoice) -> dict[str, Any]:
    """One alternative, in the keys of the aggregated summary plus the pools."""
    return {"mode": "disaggregated", "accelerator": c.accelerator, "tp": c.decode.tp, "pp": c.decode.pp,
            "ep": c.decode.ep, "replicas": c.prefill.replicas + c.prefill.spares + c.decode.replicas
            + c.decode.spares, "gpus": c.gpus, "batch_size": c.batch_size,
            "output_tokens_per_s_per_gpu": c.output_tokens_per_s_per_gpu, "ttft_s": c.ttft_s, "tpot_s": c.tpot_s,
            "binding": c.binding, "prefill_pool": c.prefill.as_dict(), "decode_pool": c.decode.as_dict()}


def _compute(best: DisaggChoice, devices: dict[str, Device], catalog: Catalog, eng: Engine,
             s: ServingSettings, m: ServedModel, trace: Trace) -> dict[str, Any]:
    acc = catalog.accelerator(best.accelerator)
    dev = devices[best.accelerator]
    system = catalog.system(dev.hw.system_id)
    keys = ("weights", "kv_cache", "activations", "runtime_reserve")
    breakdown = {k: best.decode_memory[k] for k in keys}
    d, p = best.decode, best.prefill
    trace_moe_kernel(trace, m, dev, d.tp, d.ep)
    trace_moe_kernel(trace, m, dev, p.tp, p.ep, key="compute.prefill_moe_kernel")
    trace_host_cost(trace, catalog, dev, eng)
    trace.derived("compute.gpus", best.gpus, "prefill pool + decode pool GPUs, spares included "
                  "(inference/disagg_search.py)")
    trace.derived("compute.parallelism.tp", d.tp, "search optimum (decode pool)")
    trace.derived("compute.memory_per_gpu_bytes", sum(breakdown.values()), "engine KV sizing rule (decode pool)")
    return {"accelerator": acc.id, "accelerator_name": acc.name, "system": system.id, "gpus": best.gpus,
            "gpus_per_node": system.gpus_per_node, "nodes": math.ceil(best.gpus / system.gpus_per_node),
            "parallelism": {"tp": d.tp, "pp": d.pp, "ep": d.ep, "dp": d.replicas + d.spares},
            "prefill_parallelism": {"tp": p.tp, "pp": p.pp, "ep": p.ep, "dp": p.replicas + p.spares},
            "memory_per_gpu_bytes": sum(breakdown.values()), "memory_breakdown_bytes": breakdown,
            "prefill_memory_per_gpu_bytes": sum(best.prefill_memory[k] for k in keys),
            "hbm_bytes": acc.memory_bytes, "device_visible_bytes": best.decode_memory["device_bytes"],
            "engine": eng.id, "memory_fraction": s.memory_fraction or eng.memory_fraction,
            "gemm_precision": dev.gemm_precision}


def disagg_sections(best: DisaggChoice, result: SearchResult, m: ServedModel, s: ServingSettings,
                    req: Requirement, catalog: Catalog, devices: dict[str, Device], eng: Engine,
                    trace: Trace) -> tuple[dict[str, Any], dict[str, Any]]:
    """(compute, inference) sections of a disaggregated answer; cost is added by the caller."""
    compute = _compute(best, devices, catalog, eng, s, m, trace)
    d, p = best.decode, best.prefill
    active = p.replicas + d.replicas
    capacity_rate = best.requests_per_s
    served_rate = s.request_rate if s.request_rate is not None else best.served_requests_per_s
    kv_tokens = best.decode_memory["kv_capacity_tokens"]
    link = "NVLink (one prefill and one decode replica share a scale-up domain)" if best.kv_link == "nvlink" \
        else "the scale-out NIC of each GPU (the pair of replicas spans more than a scale-up domain)"
    if s.ttft is None:
        trace.assumed("serving.prefill_utilization_ceiling", SLOT_CEILING,
                      "no TTFT target: prefill replicas at most 95% busy, so the prompt queue stays finite")
    trace.assumed("inference.kv_transfer_link", best.kv_link, f"KV cache moves over {link}, not overlapped "
                  "with the prefill (layer-wise streaming would hide part of it)")
    out: dict[str, Any] = {
        "mode": "disaggregated", "scenario": s.scenario, "engine": s.engine, "weights": s.weights,
        "kv_cache_dtype": s.kv_dtype, "replicas": active + p.spares + d.spares, "active_replicas": active,
        "spare_replicas": p.spares + d.spares, "gpus_per_replica": d.gpus_per_replica,
        "prefill_pool": p.as_dict(), "decode_pool": d.as_dict(), "batch_size": best.batch_size,
        "served_output_tokens_per_s_per_gpu": served_rate * s.osl / best.active_gpus,
        "max_batch_size": best.max_batch_size, "kv_bytes_per_token": m.kv_bytes_per_token,
        "kv_bytes_per_token_per_gpu": best.decode_memory["kv_bytes_per_token_gpu"], "kv_capacity_tokens": kv_tokens,
        "kv_capacity_sequences": context_sequences(kv_tokens, best.decode_memory["kv_bytes_per_token_gpu"],
                                                   best.decode_memory["ssm_state_bytes_gpu"], s.context_window),
        "output_tokens_per_s_per_gpu": best.output_tokens_per_s_per_gpu,
        "output_tokens_per_s": best.output_tokens_per_s_per_gpu * best.active_gpus,
        "tokens_per_s_per_user": best.tokens_per_s_per_user, "ttft_s": best.ttft_s,
        "ttft_percentile": s.ttft[0] if s.ttft else "p99", "ttft_prefill_s": best.prefill_latency_s,
        "prefill_wait_s": best.prefill_wait_s, "kv_transfer_s": best.kv_transfer_s, "kv_transfer_link": best.kv_link,
        "kv_transfer_bytes": float(m.kv_bytes_per_sequence(s.isl)) + m.ssm_state_bytes,
        "decode_slot_wait_s": best.slot_wait_s,
        "tpot_s": best.tpot_s, "tpot_percentile": s.tpot[0] if s.tpot else "p99", "tpot_mean_s": best.tpot_mean_s,
        "requests_per_s_per_replica": capacity_rate / active, "request_rate_per_s": served_rate,
        "batch_size_at_capacity": best.batch_size_at_capacity,
        "utilization": served_rate / max(capacity_rate, 1e-12),
        "prefill_utilization": served_rate / max(best.prefill_requests_per_s, 1e-12),
        "decode_utilization": served_rate / max(best.decode_requests_per_s, 1e-12),
        "binding": {"batch": BATCH_TEXT.get(best.binding, best.binding),
                    "replicas": "request rate" if req.request_rate is not None else
                    "concurrency" if req.concurrency is not None else "one decode replica (no rate given)"},
        "step_breakdown_s": best.step_breakdown_s, "pareto_front": result.pareto[:24],
        "hardware_floor_s": result.floors,
    }
    for key, formula in (("ttft_s", TTFT_FORMULA), ("tpot_s", TPOT_FORMULA),
                         ("output_tokens_per_s_per_gpu", "min(prefill, decode pool capacity) x OSL / their GPUs"),
                         ("kv_transfer_s", "KV(ISL) shard per GPU / link bandwidth + latency (inference/disagg.py)"),
                         ("batch_size", "decode batch at the served load (inference/disagg_search.py)")):
        trace.derived(f"inference.{key}", out[key], formula)
    out["explanation"] = _explain(best, result, req, out)
    return compute, out


def _explain(best: DisaggChoice, result: SearchResult, req: Requirement, out: dict[str, Any]) -> list[str]:
    p, d = best.prefill, best.decode

    def pool(x: Any, name: str) -> str:
        return (f"{x.replicas + x.spares} x TP{x.tp}" + (f" PP{x.pp}" if x.pp > 1 else "")
                + (f" EP{x.ep}" if x.ep > 1 else "") + f" {name}")
    r = result.rejected
    lines = [mode_reason(result, req),
             f"{pool(p, 'prefill')} + {pool(d, 'decode')} on {best.accelerator} ({best.gpus} GPUs): the fewest "
             f"GPUs of {result.evaluated} evaluated points meeting the targets",
             f"decode batch {best.batch_size:.0f} per replica at {out['request_rate_per_s']:.3g} req/s; at most "
             f"{best.batch_size_at_capacity:.0f}: {out['binding']['batch']}",
             f"TTFT {out['ttft_percentile']} {format_duration(best.ttft_s)} = prefill "
             f"{format_duration(best.prefill_latency_s)} + queue {format_duration(best.prefill_wait_s)} at "
             f"{out['prefill_utilization']:.0%} prefill load + KV transfer {format_duration(best.kv_transfer_s)} "
             f"({best.kv_link}) + decode-slot wait {format_duration(best.slot_wait_s)}; TPOT {out['tpot_percentile']} "
             f"{format_duration(best.tpot_s)} (decode only)"]
    if p.spares or d.spares:
        lines.append(f"+{p.spares} spare prefill and +{d.spares} spare decode replica(s) for availability")
    lines.append(f"rejected points: memory {r['memory']}, TTFT {r['ttft']}, TPOT {r['tpot']}, GPU cap {r['gpus']}")
    return lines
