"""Inference intake -> resolved serving settings; every fill is traced (given, derived, assumed).

Precedence: what the user wrote (`given`) > what follows from other inputs (`derived`) > a named
default (`assumed`, with why). Bad combinations are InputErrors naming the field and the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arch.model import ModelArch
from ..errors import InputError
from ..intake.inference import InferenceWorkload, LengthDistribution
from ..provenance import Trace

DEFAULT_INPUT_TOKENS = 2048.0
DEFAULT_OUTPUT_TOKENS = 512.0
DEFAULT_ENGINE = "vllm"
DEFAULT_CANDIDATES = ("h100-sxm", "h200-sxm", "b200")
PERCENTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "mean": 0.5}


@dataclass(frozen=True, kw_only=True)
class ServingSettings:
    weights: str
    kv_dtype: str
    engine: str
    isl: float
    osl: float
    isl_tail: float
    osl_tail: float
    context_window: float
    scenario: str
    request_rate: float | None
    concurrency: float | None
    ttft: tuple[str, float] | None         # (percentile name, seconds)
    tpot: tuple[str, float] | None
    spare_replicas: int
    utilization_ceiling: float
    memory_fraction: float | None
    max_batch_size: int | None
    max_num_tokens: int | None
    runtime_reserve_bytes: float | None
    mode: str = "auto"                     # auto | aggregated | disaggregated
    ssm_state_dtype: str = "bf16"          # a hybrid's Mamba-2 state


def _tokens(value: float | LengthDistribution | None, default: float, name: str,
            trace: Trace) -> tuple[float, float]:
    path = f"serving.{name}"
    if value is None:
        trace.assumed(path, default, f"not given: {int(default)} tokens, a chat-style request")
        return default, default
    if isinstance(value, LengthDistribution):
        trace.given(path, value.mean)
        trace.derived(f"{path}_tail", value.tail, "largest percentile given: sizes the KV reservation")
        return value.mean, value.tail
    trace.given(path, value)
    return float(value), float(value)


def _weights(w: InferenceWorkload, arch: ModelArch, trace: Trace) -> str:
    if w.serving.weights is not None:
        return str(trace.given("serving.weights", w.serving.weights))
    if arch.weight_format is not None:
        return str(trace.derived("serving.weights", arch.weight_format,
                                 f"the checkpoint's own format ({arch.weight_format_scope})"))
    return str(trace.assumed("serving.weights", "bf16", "not given: the 16-bit checkpoint as published"))


def _availability(w: InferenceWorkload, trace: Trace) -> tuple[int, float]:
    a = w.serving.availability
    if a is None:
        trace.assumed("serving.availability", "none",
                      "not given: no spare replica (N+0); production fleets usually add N+1")
        return 0, 1.0
    trace.given("serving.availability", a)
    if isinstance(a, float):
        return 0, a
    return (0, 1.0) if a == "none" else (int(a[2:]), 1.0)


def resolve_serving(w: InferenceWorkload, arch: ModelArch, trace: Trace) -> ServingSettings:
    s = w.serving
    weights = _weights(w, arch, trace)
    if s.kv_cache_dtype is not None:
        kv = str(trace.given("serving.kv_cache_dtype", s.kv_cache_dtype))
    else:
        kv = str(trace.assumed("serving.kv_cache_dtype", "bf16",
                               "not given: the engines' 'auto' keeps the KV cache in the model's "
                               "16-bit dtype"))
    ssm = _ssm_state_dtype(w, arch, trace)
    if s.engine is not None:
        engine = str(trace.given("serving.engine", s.engine))
    else:
        engine = str(trace.assumed("serving.engine", DEFAULT_ENGINE,
                                   "not given: vLLM, whose memory-utilization default (0.90) "
                                   "sizes the KV cache"))
    isl, isl_tail = _tokens(s.input_tokens, DEFAULT_INPUT_TOKENS, "input_tokens", trace)
    osl, osl_tail = _tokens(s.output_tokens, DEFAULT_OUTPUT_TOKENS, "output_tokens", trace)
    if s.context_window is not None:
        window = float(trace.given("serving.context_window", s.context_window))
        if isl_tail + osl_tail > window:
            raise InputError("serving.input_tokens", f"{isl_tail:g} + {osl_tail:g} output tokens",
                             f"input + output tokens within serving.context_window ({window:g})")
    else:
        window = float(trace.derived("serving.context_window", isl_tail + osl_tail,
                                     "input + output tokens of the longest request"))
    if s.scenario is not None:
        scenario = str(trace.given("serving.scenario", s.scenario))
    else:
        online = any(v is not None for v in (s.request_rate, s.concurrency, s.ttft, s.tpot))
        scenario = str(trace.assumed("serving.scenario", "online" if online else "offline",
                                     "online: a rate, concurrency or latency target is given" if online
                                     else "no rate, concurrency or latency target: maximum throughput"))
    if scenario == "offline" and s.ttft is not None:
        raise InputError("serving.ttft", "given",
                         "no TTFT target in the offline scenario (all requests queued at once: TTFT "
                         "is the queue, not a service level); use scenario: online")
    spares, ceiling = _availability(w, trace)
    mode = _mode(w, scenario, trace)
    return ServingSettings(
        weights=weights, kv_dtype=kv, engine=engine, isl=isl, osl=osl, isl_tail=isl_tail, osl_tail=osl_tail,
        context_window=window, scenario=scenario,
        request_rate=_given_float(s.request_rate, "serving.request_rate", trace),
        concurrency=_given_float(s.concurrency, "serving.concurrency", trace),
        ttft=None if s.ttft is None else _target(s.ttft.binding(), "serving.ttft", trace),
        tpot=None if s.tpot is None else _target(s.tpot.binding(), "serving.tpot", trace),
        spare_replicas=spares, utilization_ceiling=ceiling, memory_fraction=s.memory_utilization,
        max_batch_size=_given_int(s.max_batch_size, "serving.max_batch_size", trace),
        max_num_tokens=_given_int(s.max_num_tokens, "serving.max_num_tokens", trace),
        runtime_reserve_bytes=_given_float(s.runtime_reserve, "serving.runtime_reserve", trace), mode=mode,
        ssm_state_dtype=ssm)


def _ssm_state_dtype(w: InferenceWorkload, arch: ModelArch, trace: Trace) -> str:
    given = w.serving.ssm_state_dtype
    if not arch.mamba_layers:
        if given is not None:
            raise InputError("serving.ssm_state_dtype", given,
                             "unset: the model has no Mamba-2 or Gated DeltaNet layer (no state)")
        return "bf16"
    if given is not None:
        return str(trace.given("serving.ssm_state_dtype", given))
    return str(trace.assumed("serving.ssm_state_dtype", "bf16",
                             "not given: vLLM's 'auto' keeps the Mamba state in the model's 16-bit dtype "
                             "(NVIDIA's Nemotron-H model cards recommend fp32 for accuracy: twice the state)"))


def _mode(w: InferenceWorkload, scenario: str, trace: Trace) -> str:
    mode = w.serving.mode
    if mode is None:
        why = ("not given: search aggregated and disaggregated (prefill/decode pools) serving"
               if scenario == "online" else "not given: offline maximum throughput is served aggregated")
        return str(trace.assumed("serving.mode", "auto" if scenario == "online" else "aggregated", why))
    if mode == "disaggregated" and scenario == "offline":
        raise InputError("serving.mode", mode, "aggregated or auto in the offline scenario (disaggregated "
                         "pools are sized for a request rate and latency targets); use scenario: online")
    return str(trace.given("serving.mode", mode))


def _given_float(value: float | None, path: str, trace: Trace) -> float | None:
    return None if value is None else float(trace.given(path, value))


def _given_int(value: int | None, path: str, trace: Trace) -> int | None:
    return None if value is None else int(trace.given(path, value))


def _target(binding: tuple[str, float], path: str, trace: Trace) -> tuple[str, float]:
    trace.given(f"{path}.{binding[0]}", binding[1])
    return binding
