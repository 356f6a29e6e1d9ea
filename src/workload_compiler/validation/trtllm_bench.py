"""trtllm-bench's batch limits: the max_batch_size and max_num_tokens it picks for an offline run.

TensorRT-LLM's throughput benchmark does not run the engine's defaults: it sizes both caps from the
KV capacity it estimates (tensorrt_llm/bench/build/tuning.py, calc_engine_setting +
finetune_setting). The published perf-overview tables ran it, so their intakes carry these caps.
"""

from __future__ import annotations

import math

from ..inference.model import KV_DTYPE_BYTES, ServedModel

# tensorrt_llm/bench/build/tuning.py BYTES_PER_ELEM: what trtllm-bench counts per parameter when
# it estimates the engine size (NVFP4 0.5: the scales are not counted).
TUNING_BYTES_PER_PARAM = {"fp8": 1.0, "nvfp4": 0.5}
# calc_engine_setting(kv_cache_gpu_mem_fraction=0.95): the share of (GPU memory - engine size) its
# batch and token heuristic fills with KV.
TUNING_KV_FRACTION = 0.95


def _ceil_to(x: float, step: int) -> int:
    return step * math.ceil(x / step)


def trtllm_bench_caps(m: ServedModel, tp: int, pp: int, isl: int, osl: int,
                      visible_bytes: float) -> tuple[int, int]:
    """(max_batch_size, max_num_tokens) as trtllm-bench sets them: requests that fit 0.95 x (GPU
    memory - engine size) at ISL+OSL each, capped at 4096 and rounded up; tokens = batch x
    (1 + ISL/OSL) capped at 32768 and rounded up (minimum 2048)."""
    a = m.arch
    kv_heads = max(tp, a.kv_heads)   # tuning.py sizes the KV of TP-replicated heads (GQA models only)
    kv_per_token = 2 * a.layers * kv_heads * a.head_dim * KV_DTYPE_BYTES[m.kv_dtype]
    per_param = TUNING_BYTES_PER_PARAM.get(m.weights, m.linear_bytes_per_param)
    engine_bytes = m.total_params * per_param   # tuning.py: params x BYTES_PER_ELEM
    free = visible_bytes * tp * pp - engine_bytes
    requests = TUNING_KV_FRACTION * free / (kv_per_token * (isl + osl))
    raw_bs = min(requests, 4096) / pp
    max_bs = max(64, _ceil_to(raw_bs, 32)) if raw_bs < 256 else _ceil_to(raw_bs, 128 if raw_bs < 1024 else 256)
    raw_tokens = min(raw_bs * (1 + isl / osl), 32768)
    tokens = (max(2048, _ceil_to(raw_tokens, 256)) if raw_tokens < 4096
              else _ceil_to(raw_tokens, 512 if raw_tokens < 8192 else 1024))
    return max_bs, tokens
