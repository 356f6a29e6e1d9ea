"""The typed sections of an inference result: objective, compute, the serving layer, the search.

inference/compile.py and inference/disagg_report.py build these as mappings; spine/serving.py
validates them into these models, so every key has its unit and description here. Every field is
optional (an infeasible answer holds only the Pareto front and the hardware floor; an aggregated
answer has no pools). `extra="allow"`: a key added upstream still reaches the document, and
tests/unit/test_result_types.py fails until its unit is declared here.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, SerializerFunctionWrapHandler, model_serializer

from ..quantity import info, quantity
from .doc import Doc


class Open(Doc):
    """A section built from a mapping: it dumps the keys that were set (a key the pass did not
    write is not in the document, rather than null), and lets an undeclared key through."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    @model_serializer(mode="wrap")
    def _keys_set(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        data = handler(self)
        keep = self.model_fields_set | set(self.model_extra or {})
        return {k: v for k, v in data.items() if k in keep} if isinstance(data, dict) else data


class PlacedCompute(Open):
    """Where a generic or HPC workload runs: the accelerator, the system and the GPU count."""

    accelerator: str | None = info("catalog accelerator id", default=None)
    accelerator_name: str | None = info("the accelerator", default=None, headline=True)
    system: str | None = info("catalog system id", default=None)
    gpus: int | None = quantity("count", "GPUs", default=None, headline=True)
    nodes: int | None = quantity("count", "nodes", default=None, headline=True)
    gpus_per_node: int | None = quantity("count", "GPUs per node", default=None)


class InferenceObjective(Open):
    """Layer 1 (inference): the model, the traffic and the latency targets."""

    model: str | None = info("the model served", default=None, headline=True)
    params: float | None = quantity("count", "parameters", default=None, headline=True)
    active_params: float | None = quantity("count", "parameters active per token (MoE)", default=None)
    scenario: str | None = info("online (a request rate or concurrency) | offline (throughput)", default=None,
                                headline=True)
    input_tokens: float | None = quantity("tokens", "mean prompt tokens per request", default=None, headline=True)
    output_tokens: float | None = quantity("tokens", "mean generated tokens per request", default=None,
                                           headline=True)
    context_window: float | None = quantity("tokens", "most tokens one request holds (prompt + output)",
                                            default=None)
    request_rate_per_s: float | None = quantity("requests/s", "requests per second to serve", default=None,
                                                headline=True)
    concurrency: float | None = quantity("count", "concurrent requests (closed loop)", default=None)
    ttft_target_s: float | None = quantity("s", "time-to-first-token target", default=None, headline=True)
    tpot_target_s: float | None = quantity("s", "time-per-output-token target", default=None, headline=True)
    weights: str | None = info("weight format", default=None)
    kv_cache_dtype: str | None = info("KV cache format", default=None)
    ssm_state_dtype: str | None = info("a hybrid's linear-mixer (Mamba-2, Gated DeltaNet) state format", default=None)
    ssm_state_bytes_per_sequence: float | None = quantity("B", "a hybrid's linear-mixer state per sequence, whole "
                                                          "model (fixed, whatever the length)", default=None)
    weight_bytes: float | None = quantity("B", "weights in memory", default=None)


class ServingParallelism(Open):
    tp: int | None = quantity("count", "tensor parallel", default=None)
    pp: int | None = quantity("count", "pipeline parallel", default=None)
    ep: int | None = quantity("count", "expert parallel", default=None)
    dp: int | None = quantity("count", "replicas, spares included", default=None)


class InferenceCompute(Open):
    """Layer 2 (inference): the accelerator, its count and the memory of one GPU."""

    accelerator: str | None = info("catalog accelerator id", default=None)
    accelerator_name: str | None = info("the accelerator", default=None, headline=True)
    system: str | None = info("catalog system id", default=None)
    gpus: int | None = quantity("count", "GPUs, spares included", default=None, headline=True)
    gpus_per_node: int | None = quantity("count", "GPUs per node", default=None)
    nodes: int | None = quantity("count", "nodes", default=None, headline=True)
    parallelism: ServingParallelism | None = info("layout of the (decode) replicas", default=None, headline=True)
    prefill_parallelism: ServingParallelism | None = info("layout of the prefill replicas (disaggregated)",
                                                          default=None)
    memory_per_gpu_bytes: float | None = quantity("B", "memory one GPU uses", default=None, headline=True)
    memory_breakdown_bytes: dict[str, float] | None = quantity("B", "memory per GPU by term", default=None)
    prefill_memory_per_gpu_bytes: float | None = quantity("B", "memory one prefill GPU uses", default=None)
    hbm_bytes: float | None = quantity("B", "HBM of one GPU", default=None)
    device_visible_bytes: float | None = quantity("B", "HBM the engine may use", default=None)
    engine: str | None = info("serving engine", default=None)
    memory_fraction: float | None = quantity("fraction", "share of HBM the engine allocates", default=None)
    gemm_precision: str | None = info("precision the matrix multiplies run in", default=None)


class Pool(Open):
    replicas: int | None = quantity("count", "replicas, spares included", default=None)
    active_replicas: int | None = quantity("count", "replicas serving", default=None)
    spare_replicas: int | None = quantity("count", "spare replicas (N+k)", default=None)
    tp: int | None = quantity("count", "tensor parallel", default=None)
    pp: int | None = quantity("count", "pipeline parallel", default=None)
    ep: int | None = quantity("count", "expert parallel", default=None)
    gpus_per_replica: int | None = quantity("count", "GPUs per replica", default=None)
    gpus: int | None = quantity("count", "GPUs of the pool", default=None)


class ParetoPoint(Open):
    mode: str | None = info("aggregated | disaggregated", default=None)
    accelerator: str | None = info("catalog accelerator id", default=None)
    tp: int | None = quantity("count", "tensor parallel (decode)", default=None)
    pp: int | None = quantity("count", "pipeline parallel (decode)", default=None)
    ep: int | None = quantity("count", "expert parallel (decode)", default=None)
    prefill_tp: int | None = quantity("count", "tensor parallel (prefill pool)", default=None)
    prefill_pp: int | None = quantity("count", "pipeline parallel (prefill pool)", default=None)
    prefill_ep: int | None = quantity("count", "expert parallel (prefill pool)", default=None)
    batch_size: float | None = quantity("count", "mean decode batch", default=None)
    tokens_per_s_per_gpu: float | None = quantity("tokens/s", "output tokens per second per GPU", default=None)
    tokens_per_s_per_user: float | None = quantity("tokens/s", "output tokens per second per request",
                                                   default=None)
    ttft_s: float | None = quantity("s", "time to first token at the percentile", default=None)
    tpot_s: float | None = quantity("s", "time per output token at the percentile", default=None)


class ServingBinding(Open):
    batch: str | None = info("what stops the batch from growing", default=None)
    replicas: str | None = info("what sets the replica count", default=None)


class InferenceLayer(Open):
    """Layer 2b: how the model is served: replicas, batch, latency, throughput, KV cache, cost."""

    mode: str | None = info("aggregated | disaggregated (separate prefill and decode pools)", default=None,
                            headline=True)
    scenario: str | None = info("online | offline", default=None)
    engine: str | None = info("serving engine", default=None, headline=True)
    weights: str | None = info("weight format", default=None)
    kv_cache_dtype: str | None = info("KV cache format", default=None)
    ssm_state_dtype: str | None = info("a hybrid's linear-mixer (Mamba-2, Gated DeltaNet) state format", default=None)
    ssm_state_bytes_per_sequence: float | None = quantity("B", "a hybrid's linear-mixer state per sequence, whole "
                                                          "model (fixed, whatever the length)", default=None)
    replicas: int | None = quantity("count", "replicas, spares included", default=None, headline=True)
    active_replicas: int | None = quantity("count", "replicas serving the load", default=None)
    spare_replicas: int | None = quantity("count", "spare replicas (N+k)", default=None, headline=True)
    gpus_per_replica: int | None = quantity("count", "GPUs per (decode) replica", default=None, headline=True)
    prefill_pool: Pool | None = info("the prefill pool (disaggregated)", default=None, headline=True)
    decode_pool: Pool | None = info("the decode pool (disaggregated)", default=None, headline=True)
    batch_size: float | None = quantity("count", "mean decode batch per replica at the served load", default=None,
                                        headline=True)
    served_output_tokens_per_s_per_gpu: float | None = quantity("tokens/s", "output tokens/s per serving GPU "
                                                                "(spare replicas' GPUs excluded) at the served load",
                                                                default=None)
    max_batch_size: float | None = quantity("count", "most sequences one replica's KV cache and engine hold",
                                            default=None)
    kv_bytes_per_token: float | None = quantity("B/token", "KV cache per token, whole model", default=None)
    kv_bytes_per_token_per_gpu: float | None = quantity("B/token", "KV cache per token on one GPU", default=None)
    kv_capacity_tokens: float | None = quantity("tokens", "tokens one replica's KV cache holds", default=None)
    kv_capacity_sequences: float | None = quantity("count", "full-context sequences one replica holds",
                                                   default=None)
    output_tokens_per_s_per_gpu: float | None = quantity("tokens/s", "output tokens/s per serving GPU "
                                                         "(spare replicas' GPUs excluded) at capacity",
                                                         default=None, headline=True)
    output_tokens_per_s: float | None = quantity("tokens/s", "output tokens/s of the fleet at capacity",
                                                 default=None, headline=True)
    tokens_per_s_per_user: float | None = quantity("tokens/s", "output tokens/s one request sees", default=None)
    ttft_s: float | None = quantity("s", "time to first token at the percentile", default=None, headline=True)
    ttft_percentile: str | None = info("the TTFT percentile reported", default=None)
    ttft_prefill_s: float | None = quantity("s", "the prefill part of TTFT (no queueing)", default=None)
    prefill_wait_s: float | None = quantity("s", "prompt queue wait at the prefill pool", default=None)
    kv_transfer_s: float | None = quantity("s", "KV cache transfer, prefill to decode", default=None)
    kv_transfer_link: str | None = info("the link the KV cache moves over", default=None)
    kv_transfer_bytes: float | None = quantity("B", "KV cache moved per request", default=None)
    decode_slot_wait_s: float | None = quantity("s", "wait for a decode slot", default=None)
    tpot_s: float | None = quantity("s", "time per output token at the percentile", default=None, headline=True)
    tpot_percentile: str | None = info("the TPOT percentile reported", default=None)
    tpot_mean_s: float | None = quantity("s", "mean time per output token", default=None)
    requests_per_s_per_replica: float | None = quantity("requests/s", "requests one replica serves at capacity",
                                                        default=None)
    request_rate_per_s: float | None = quantity("requests/s", "requests served per second", default=None)
    batch_size_at_capacity: float | None = quantity("count", "largest batch meeting the targets", default=None)
    utilization: float | None = quantity("fraction", "served load / capacity", default=None)
    prefill_utilization: float | None = quantity("fraction", "load of the prefill pool", default=None)
    decode_utilization: float | None = quantity("fraction", "load of the decode pool", default=None)
    binding: ServingBinding | None = info("what sets the batch and the replicas", default=None)
    step_breakdown_s: dict[str, float] | None = quantity("s", "one decode step by term", default=None)
    pareto_front: list[ParetoPoint] | None = info("tokens/s per GPU against tokens/s per user, non-dominated",
                                                  default=None)
    hardware_floor_s: dict[str, float] | None = quantity("s", "best TTFT and TPOT any layout reaches (batch 1)",
                                                         default=None)
    cost_usd_per_gpu_hour: float | None = quantity("USD/h", "price of one GPU-hour", default=None)
    cost_usd_per_hour: float | None = quantity("USD/h", "the fleet per hour, spares included", default=None,
                                               headline=True)
    cost_per_million_tokens: float | None = quantity("USD/Mtoken", "per million output tokens served",
                                                     default=None, headline=True)
    cost_per_million_tokens_at_capacity: float | None = quantity("USD/Mtoken", "per million output tokens at "
                                                                 "capacity", default=None)
    cost_basis: str | None = info("what the cost counts", default=None)
    explanation: list[str] | None = info("why this configuration", default=None)


class ServingChoice(Open):
    """One ranked serving configuration of the search."""

    mode: str | None = info("aggregated | disaggregated", default=None)
    accelerator: str | None = info("catalog accelerator id", default=None)
    tp: int | None = quantity("count", "tensor parallel (decode)", default=None)
    pp: int | None = quantity("count", "pipeline parallel (decode)", default=None)
    ep: int | None = quantity("count", "expert parallel (decode)", default=None)
    replicas: int | None = quantity("count", "replicas, spares included", default=None)
    gpus: int | None = quantity("count", "GPUs", default=None)
    batch_size: float | None = quantity("count", "mean decode batch", default=None)
    output_tokens_per_s_per_gpu: float | None = quantity("tokens/s", "output tokens/s per GPU at capacity",
                                                         default=None)
    ttft_s: float | None = quantity("s", "time to first token", default=None)
    tpot_s: float | None = quantity("s", "time per output token", default=None)
    binding: str | None = info("what stops the batch", default=None)
    prefill_pool: Pool | None = info("the prefill pool (disaggregated)", default=None, headline=True)
    decode_pool: Pool | None = info("the decode pool (disaggregated)", default=None, headline=True)


class InferenceSearch(Open):
    """How the serving search went."""

    evaluated: int | None = quantity("count", "configurations evaluated", default=None, headline=True)
    seconds: float | None = quantity("s", "search time", default=None)
    rejected: dict[str, int] | None = quantity("count", "configurations rejected, by reason", default=None)
    alternatives: list[ServingChoice] | None = info("the next best configurations", default=None)


class ServingStorage(Open):
    """Layer 4 (inference): the served checkpoint on disk and how fast replicas load it cold (storage/serving.py)."""

    checkpoint_bytes: float | None = quantity("B", "the served checkpoint: one replica's weights in the served "
                                              "format", default=None, headline=True)
    retained_checkpoints: int | None = quantity("count", "checkpoint versions kept on disk", default=None)
    capacity_bytes: float | None = quantity("B", "storage capacity: retained versions / fill fraction", default=None,
                                            headline=True)
    tier: str | None = info("storage tier of the reference architecture: good | better | best", default=None,
                            headline=True)
    gds: bool | None = info("GPUDirect Storage", default=None)
    node_read_bytes_per_s: float | None = quantity("B/s", "read bandwidth one node loads the checkpoint at",
                                                   default=None)
    node_read_binding: str | None = info("what limits a node's load: storage tier | host bounce path", default=None)
    replica_load_s: float | None = quantity("s", "cold load of one replica's checkpoint", default=None, headline=True)
    replica_load_by_tier_s: dict[str, float] | None = quantity("s", "cold load of one replica on each tier",
                                                               default=None)
    fleet_read_bytes_per_s: float | None = quantity("B/s", "read bandwidth when every replica loads at once",
                                                    default=None)
    fleet_load_s: float | None = quantity("s", "every replica loading at once (a fleet restart)", default=None,
                                          headline=True)
    fleet_read_binding: str | None = info("what limits the fleet's load: storage tier | nodes", default=None)


SECTIONS: dict[str, Any] = {"objective": InferenceObjective, "compute": InferenceCompute,
                            "inference": InferenceLayer, "search": InferenceSearch, "storage": ServingStorage}

__all__ = ["SECTIONS", "InferenceCompute", "InferenceLayer", "InferenceObjective", "InferenceSearch",
           "ParetoPoint", "Pool", "ServingChoice", "ServingStorage"]
