"""Steady-state continuous batching: the operating point of a replica at a decode batch.

In steady state every step finishes decode_seqs / OSL requests and admits as many new ones, so a
step runs the decode tokens of `decode_seqs` sequences plus decode_seqs * ISL / OSL prefill
tokens (chunked prefill spreads each prompt over the steps; TensorRT-LLM's trtllm-bench sizes
max_num_tokens exactly so: batch * (1 + ISL/OSL), bench/build/tuning.py). The mean cached
context of a decoding sequence is ISL + OSL/2. Then (Little's law):

    TPOT                = step time
    output tokens/s     = decode_seqs / step time            (per replica)
    requests/s          = decode_seqs / (OSL * step time)
    tokens/s per user   = 1 / TPOT

Offline (max throughput): the batch is as large as the KV cache holds sequences of ISL + OSL
tokens (the scheduler reserves a request's whole length: TensorRT-LLM GUARANTEED_NO_EVICT), capped
by the engine's batch and step-token limits; that is what the TensorRT-LLM tables measure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..perf.layout import FloatArray
from .layout import ServingLayout
from .memory import MemoryPlan, max_sequences
from .model import ServedModel
from .performance import Device, StepTime, step_time


@dataclass(frozen=True, kw_only=True)
class OperatingPoint:
    decode_seqs: FloatArray
    step: StepTime
    output_tokens_per_s: FloatArray            # one replica
    output_tokens_per_s_per_gpu: FloatArray
    tokens_per_s_per_user: FloatArray
    requests_per_s: FloatArray                 # one replica

    @property
    def tpot_s(self) -> FloatArray:
        return self.step.total_s


def steady_state(m: ServedModel, dev: Device, lay: ServingLayout, decode_seqs: Any,
                 isl: Any, osl: Any) -> OperatingPoint:
    """Operating point with `decode_seqs` sequences decoding (formulas in the module docstring)."""
    b = np.maximum(np.asarray(decode_seqs, dtype=np.float64), 1e-9)
    isl_f, osl_f = np.asarray(isl, dtype=np.float64), np.asarray(osl, dtype=np.float64)
    st = step_time(m, dev, lay, decode_seqs=b, prefill_tokens=b * isl_f / osl_f,
                   decode_context=isl_f + osl_f / 2.0, prefill_context=isl_f)
    tput = b / st.total_s
    return OperatingPoint(decode_seqs=b, step=st, output_tokens_per_s=np.asarray(tput),
                          output_tokens_per_s_per_gpu=np.asarray(tput / lay.gpus),
                          tokens_per_s_per_user=np.asarray(1.0 / st.total_s),
                          requests_per_s=np.asarray(tput / osl_f))


def offline_decode_seqs(m: ServedModel, plan: MemoryPlan, lay: ServingLayout, isl: Any, osl: Any, *,
                        max_batch: Any, max_num_tokens: Any, block_tokens: int) -> FloatArray:
    """Decoding sequences at max throughput: KV-limited batch of ISL+OSL-token sequences, capped
    by the batch limit; of those, OSL/(OSL+1) decode while one step's worth prefill; and the
    step-token budget caps decode * (1 + ISL/OSL)."""
    isl_f, osl_f = np.asarray(isl, dtype=np.float64), np.asarray(osl, dtype=np.float64)
    held = np.minimum(max_sequences(m, plan, lay, isl_f + osl_f, block_tokens), max_batch)
    decoding = held * osl_f / (osl_f + 1.0)
    by_tokens = np.asarray(max_num_tokens, dtype=np.float64) / (1.0 + isl_f / osl_f)
    return np.asarray(np.minimum(decoding, by_tokens))


def offline_point(m: ServedModel, dev: Device, lay: ServingLayout, plan: MemoryPlan, isl: Any, osl: Any, *,
                  max_batch: Any, max_num_tokens: Any, block_tokens: int) -> OperatingPoint:
    b = offline_decode_seqs(m, plan, lay, isl, osl, max_batch=max_batch, max_num_tokens=max_num_tokens,
                            block_tokens=block_tokens)
    return steady_state(m, dev, lay, b, isl, osl)
