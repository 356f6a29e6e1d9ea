"""The inference intake (`kind: inference`): a model to serve, its traffic, its latency targets.

    kind: inference
    model: {preset: llama3.3-70b}
    serving:
      weights: fp8                # bf16 | fp16 | fp8 | int8 | int4 | nvfp4 | mxfp4
      kv_cache_dtype: fp8         # bf16 | fp16 | fp8 | int8
      ssm_state_dtype: fp32       # hybrids (Nemotron-H, Qwen3-Next): bf16 | fp16 | fp32
      context_window: 8192
      input_tokens: 2048          # or {mean: 2048, p90: 4096} or a list of samples
      output_tokens: 512
      scenario: online            # online | offline
      request_rate: 20/s          # or concurrency: 64
      ttft: {p99: 2s}
      tpot: {p99: 50ms}
      availability: n+1           # n+1 | n+2 | none, or a utilization ceiling such as 0.8
      engine: vllm                # vllm | trtllm | sglang
      mode: auto                  # aggregated | disaggregated (prefill and decode pools) | auto
    compute: {accelerator: h200-sxm, max_gpus: 8, parallelism: {tp: 4}}
    cost: {gpu_hour_usd: 3.50}    # the shared cost section (intake/cost.py): rate card or ownership
"""

from __future__ import annotations

import statistics
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from ..errors import InputError
from ..units import Bytes, Count, PerSecond, Seconds
from . import limits as L
from .common import ComputeIntake, ModelIntake, Strict
from .cost import CostIntake
from .infrastructure import FAILURE_KEYS, InfrastructureIntake, reject_unread
from .limits import limited, text

# The storage keys a serving fleet reads (storage/serving.py); the others describe training data and writes.
SERVING_STORAGE_KEYS = ("tier", "gpudirect_storage", "retained_checkpoints")
# The layout keys the serving search reads (inference/search.py); the rest describe a training step.
SERVING_LAYOUT_KEYS = ("tp", "pp", "ep")

# the weight formats of arch/weight_formats.py a served checkpoint can hold
WeightsName = Literal["bf16", "fp16", "fp8", "fp8-block128", "mxfp8", "int8", "int4", "nvfp4", "mxfp4"]
KvDtype = Literal["bf16", "fp16", "fp8", "int8"]
SsmStateDtype = Literal["bf16", "fp16", "fp32"]
EngineName = Literal["vllm", "vllm-v0", "trtllm", "sglang"]   # catalog/data/serving_engines.yaml


MAX_SAMPLES = 100_000   # token-length samples in one list: enough for any percentile
TokenCount = Annotated[Count, Field(ge=1, le=L.MAX_SEQ)]


class LengthDistribution(Strict):
    """Token counts as a distribution: the mean sizes throughput, the tail sizes memory."""

    mean: float = limited(ge=1, le=L.MAX_SEQ, why=L.SEQ)
    p90: float | None = limited(None, ge=1, le=L.MAX_SEQ, why=L.SEQ)
    p99: float | None = limited(None, ge=1, le=L.MAX_SEQ, why=L.SEQ)
    max: float | None = limited(None, ge=1, le=L.MAX_SEQ, why=L.SEQ)

    @model_validator(mode="after")
    def _ordered(self) -> LengthDistribution:
        tail = [v for v in (self.p90, self.p99, self.max) if v is not None]
        if any(v < self.mean for v in tail) or tail != sorted(tail):
            raise ValueError("need mean <= p90 <= p99 <= max")
        return self

    @property
    def tail(self) -> float:
        """The largest value given: what one request may need in KV cache."""
        return max(v for v in (self.mean, self.p90, self.p99, self.max) if v is not None)


def _as_distribution(value: Any) -> Any:
    """A bare number stays a number; a list of samples becomes {mean, p90, p99, max}."""
    if isinstance(value, list):
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) and 1 <= v <= L.MAX_SEQ for v in value)
        if not value or not numbers or len(value) > MAX_SAMPLES:
            raise ValueError(f"a list of 1 to {MAX_SAMPLES:,} token counts, each from 1 to {L.MAX_SEQ:,}")
        xs = sorted(float(v) for v in value)

        def q(p: float) -> float:
            return xs[min(len(xs) - 1, int(p * (len(xs) - 1) + 0.5))]
        return {"mean": statistics.fmean(xs), "p90": max(q(0.9), statistics.fmean(xs)),
                "p99": max(q(0.99), q(0.9), statistics.fmean(xs)), "max": xs[-1]}
    return value


class LatencyTarget(Strict):
    """A latency objective at a percentile ('2s', '50ms'); the tightest one given is used."""

    p50: Seconds | None = limited(None, gt=0, le=L.MAX_LATENCY, why=L.LATENCY)
    p90: Seconds | None = limited(None, gt=0, le=L.MAX_LATENCY, why=L.LATENCY)
    p99: Seconds | None = limited(None, gt=0, le=L.MAX_LATENCY, why=L.LATENCY)
    mean: Seconds | None = limited(None, gt=0, le=L.MAX_LATENCY, why=L.LATENCY)

    @model_validator(mode="after")
    def _one(self) -> LatencyTarget:
        if all(v is None for v in (self.p50, self.p90, self.p99, self.mean)):
            raise ValueError("give at least one of p50, p90, p99, mean")
        return self

    def binding(self) -> tuple[str, float]:
        """The percentile checked: p99 if given, else p90, p50, mean (the tail is the harder)."""
        for name in ("p99", "p90", "p50", "mean"):
            v = getattr(self, name)
            if v is not None:
                return name, float(v)
        raise AssertionError("validated: one target is set")


class ServingIntake(Strict):
    weights: WeightsName | None = Field(
        default=None, description="the weights' precision (the checkpoint's format)",
        json_schema_extra={"also_called": ["precision", "dtype", "quantization"]})
    kv_cache_dtype: KvDtype | None = None
    ssm_state_dtype: SsmStateDtype | None = Field(
        default=None,
        description="a hybrid's Mamba-2 or Gated DeltaNet state (vLLM --mamba-ssm-cache-dtype); unset: the "
        "model's 16-bit dtype")
    context_window: Count | None = limited(None, ge=1, le=L.MAX_SEQ, why=L.SEQ,
                                           description="max tokens per request (ISL + OSL)")
    input_tokens: TokenCount | LengthDistribution | None = limited(
        None, why=L.SEQ, description="prompt tokens per request: a number, {mean, p90, p99, max} or samples")
    output_tokens: TokenCount | LengthDistribution | None = limited(
        None, why=L.SEQ, description="generated tokens per request: a number, {mean, p90, p99, max} or samples")
    scenario: Literal["online", "offline"] | None = None
    request_rate: PerSecond | None = limited(None, ge=1e-6, le=L.MAX_RATE,
                                             why={"ge": "one request in 11 days", "le": L.RATE},
                                             description="requests per second, e.g. 20/s")
    concurrency: int | None = limited(None, gt=0, le=L.MAX_CONCURRENCY, why=L.CONCURRENCY,
                                      description="concurrent requests (closed loop)")
    ttft: LatencyTarget | None = None
    tpot: LatencyTarget | None = None
    availability: str | float | None = Field(
        default=None, description="n+1, n+2, none; or a utilization ceiling in (0, 1]")
    engine: EngineName | None = None
    memory_utilization: float | None = Field(default=None, gt=0, le=1,
                                             description="override the engine's KV memory fraction")
    max_batch_size: int | None = limited(None, gt=0, le=L.MAX_CONCURRENCY, why=L.CONCURRENCY)
    max_num_tokens: int | None = limited(
        None, gt=0, le=L.MAX_SEQ, why=L.SEQ, description="the engine's token budget of one scheduler step "
        "(TensorRT-LLM max_num_tokens, vLLM max_num_batched_tokens, SGLang chunked_prefill_size)")
    runtime_reserve: Bytes | None = limited(
        None, ge=0, le=L.MAX_BYTES, why=L.BYTES, description="device memory outside the engine's tensors (CUDA "
        "context, NCCL, CUDA graphs), e.g. as a start-up log reports it; default: the engine's assumption")
    max_replicas: int | None = limited(None, gt=0, le=L.MAX_GPUS, why=L.GPUS,
                                       description="a limit: replicas (spares included)")
    mode: Literal["aggregated", "disaggregated", "auto"] | None = Field(
        default=None, description="aggregated, disaggregated (separate prefill and decode pools) or auto "
                                  "(search both)")

    _dist = field_validator("input_tokens", "output_tokens", mode="before")(_as_distribution)

    @field_validator("availability")
    @classmethod
    def _availability(cls, v: str | float | None) -> str | float | None:
        if v is None:
            return v
        if isinstance(v, str):
            s = v.strip().lower().replace(" ", "")
            if s in ("none", "n", "n+0"):
                return "none"
            if s.startswith("n+") and s[2:].isdigit() and int(s[2:]) <= 8:
                return s
            try:
                v = float(s.rstrip("%")) / (100.0 if s.endswith("%") else 1.0)
            except ValueError:
                raise ValueError("use n+1, n+2, none, or a utilization ceiling such as 0.8") from None
        if not 0 < float(v) <= 1:
            raise ValueError("a utilization ceiling is a fraction in (0, 1]")
        return float(v)

    @model_validator(mode="after")
    def _rate_or_concurrency(self) -> ServingIntake:
        if self.request_rate is not None and self.concurrency is not None:
            raise ValueError("give request_rate or concurrency, not both")
        return self


class InferenceWorkload(InfrastructureIntake):
    kind: Literal["inference"]
    name: str | None = text()
    model: ModelIntake
    serving: ServingIntake = Field(default_factory=ServingIntake)
    compute: ComputeIntake = Field(default_factory=ComputeIntake)
    cost: CostIntake | None = None

    @model_validator(mode="after")
    def _keys_it_reads(self) -> InferenceWorkload:
        """Serving loads its checkpoint (storage/serving.py): no dataset, no checkpoint writes, no
        training restarts; a key for those would be dropped unread."""
        reject_unread("storage", self.storage, SERVING_STORAGE_KEYS,
                      "not read by a serving fleet, which only loads its model checkpoint; the serving storage keys: "
                      + ", ".join(SERVING_STORAGE_KEYS))
        reject_unread("reliability", self.reliability, FAILURE_KEYS,
                      "a training run's restart and checkpoint cadence, not read for serving; the reliability keys "
                      "of a serving fleet: " + ", ".join(FAILURE_KEYS))
        if self.storage.retained_checkpoints == 0:
            raise InputError("storage.retained_checkpoints", 0, "at least 1 for serving: a fleet keeps the "
                             "checkpoint it serves (its replicas reload it after every restart)")
        reject_unread("compute.parallelism", self.compute.parallelism, SERVING_LAYOUT_KEYS,
                      "a training layout's, not read for serving: a replica's layout is tp, pp and ep; the replica "
                      "count follows from the load (bound it with compute.gpus, compute.max_gpus or "
                      "serving.max_replicas)")
        return self
