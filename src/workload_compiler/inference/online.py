"""Latency and throughput of a replica under load, over a grid of layouts x decode batches.

Parameterized by the mean number of decoding sequences B (inference/serving.py): the step time
t(B) is the mean TPOT, the replica serves lambda = B / (OSL t(B)) requests/s, and

  TTFT_q = t(B)                              a request arrives mid-step
         + ceil(ISL / chunk) * t(B, chunk)   its own prefill, chunked beside the decode batch
         + W_q(prefill queue, M/D/1)         prompts ahead of it in the step-token budget
         + W_q(slot queue, M/D/c)            waiting for a KV/batch slot (c = slots)
  TPOT_q = t(B_q),  B_q = B + z sqrt(B)      busy slots fluctuate as Poisson (M/G/inf)

chunk = max_num_tokens - B (the engine's step budget left after the decodes; TensorRT-LLM,
vLLM V1 and SGLang all schedule decodes first). The queueing formulas are in queueing.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..perf.layout import FloatArray
from .engines import Engine
from .layout import ServingLayout
from .memory import MemoryPlan, max_sequences, memory_plan
from .model import ServedModel
from .performance import Device, StepTime, step_time
from .queueing import busy_quantile, md1_wait_quantile, mdc_wait_quantile
from .serving import steady_state


@dataclass(frozen=True, kw_only=True)
class Traffic:
    """What one request looks like and which percentiles the targets are at."""

    isl: float                  # mean input tokens
    osl: float                  # mean output tokens
    reserve_tokens: float       # KV a request may hold at its tail (tail ISL + tail OSL)
    ttft_quantile: float = 0.99
    tpot_quantile: float = 0.99
    isl_tail: float = 0.0       # longest prompt (a disaggregated prefill replica holds it whole)


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """Every field broadcasts to (layouts, batches)."""

    layout: ServingLayout
    plan: MemoryPlan
    kv_slots: FloatArray                # sequences the KV cache holds (before the batch limit)
    slots: FloatArray                   # sequences a replica holds at once
    decode_seqs: FloatArray
    step: StepTime                      # at the mean batch
    tpot_mean_s: FloatArray
    tpot_s: FloatArray                  # at the TPOT percentile
    ttft_prefill_s: FloatArray          # own prefill only, no queueing
    ttft_s: FloatArray                  # at the TTFT percentile, queueing included
    requests_per_s: FloatArray          # one replica
    tokens_per_s_per_gpu: FloatArray
    tokens_per_s_per_user: FloatArray

    @property
    def fits(self) -> npt.NDArray[np.bool_]:
        return np.asarray((self.slots >= 1) & (self.decode_seqs <= self.slots), dtype=np.bool_)


def replica_memory(m: ServedModel, dev: Device, lay: ServingLayout, eng: Engine,
                   memory_fraction: float | None,
                   traffic: Traffic) -> tuple[MemoryPlan, FloatArray, FloatArray]:
    """The memory plan, the sequences of reserve_tokens the KV cache holds, and the slots: those
    capped by the engine's batch limit per scheduler (one per attention-DP group)."""
    plan = memory_plan(m, lay, dev.hw.hbm_bytes, eng, memory_fraction=memory_fraction)
    held = max_sequences(m, plan, lay, traffic.reserve_tokens, eng.block_size_tokens)
    return plan, held, np.asarray(np.minimum(held, eng.max_batch_size * lay.dp_attn))


def evaluate(m: ServedModel, dev: Device, lay: ServingLayout, eng: Engine, traffic: Traffic,
             decode_seqs: Any, *, memory_fraction: float | None = None,
             memory: tuple[MemoryPlan, FloatArray, FloatArray] | None = None) -> Evaluation:
    """Latency and throughput at mean decode batch `decode_seqs` (broadcast against the layout).
    `memory`: replica_memory(...) of this layout and traffic when the caller already has it."""
    plan, kv_slots, slots = memory or replica_memory(m, dev, lay, eng, memory_fraction, traffic)
    b = np.asarray(decode_seqs, dtype=np.float64)
    isl, osl = traffic.isl, traffic.osl
    mean = steady_state(m, dev, lay, b, isl, osl)
    t = mean.step.total_s
    lam = mean.requests_per_s
    groups = lay.dp_attn.astype(np.float64)
    chunk = np.maximum(eng.max_num_tokens - b / groups, 1.0)
    own = np.minimum(isl, chunk)
    # One prompt passes every stage whole: pp x groups copies make each stage's share the prompt.
    st_chunk = step_time(m, dev, lay, decode_seqs=b, prefill_tokens=own * groups * lay.pp,
                         decode_context=isl + osl / 2.0, prefill_context=isl)
    ttft0 = np.ceil(isl / own) * st_chunk.total_s
    service_prefill = isl / chunk * st_chunk.total_s
    residence = ttft0 + osl * t
    q_ttft = traffic.ttft_quantile
    wait_prefill = md1_wait_quantile(lam / groups, service_prefill, q_ttft)
    wait_slot = mdc_wait_quantile(lam, residence, slots, q_ttft)
    ttft = t + ttft0 + wait_prefill + wait_slot
    b_tail = busy_quantile(b, np.maximum(slots, 1.0), traffic.tpot_quantile)
    tail = steady_state(m, dev, lay, np.maximum(b_tail, b), isl, osl)
    return Evaluation(layout=lay, plan=plan, kv_slots=kv_slots, slots=slots, decode_seqs=np.asarray(b),
                      step=mean.step,
                      tpot_mean_s=t, tpot_s=tail.step.total_s, ttft_prefill_s=np.asarray(ttft0),
                      ttft_s=np.asarray(ttft), requests_per_s=lam,
                      tokens_per_s_per_gpu=mean.output_tokens_per_s_per_gpu,
                      tokens_per_s_per_user=mean.tokens_per_s_per_user)
