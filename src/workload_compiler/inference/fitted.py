"""Every fitted (and every assumed, not-fitted) constant of the inference model, in one place.

FITTED by tools/fit_inference.py on /work/shared/calibration/inference_public.yaml `entries`: the
77 NVIDIA TensorRT-LLM perf-overview rows (v1.0-era, trtllm-bench offline max throughput, FP8
checkpoints, FP8 KV) of Llama 3.1 8B, Llama 3.3 70B, Llama 3.1 405B and Qwen3-235B-A22B on H100
SXM and H200 SXM, TP1/TP2/TP8, ISL/OSL from 128/128 to 20000/2000. Objective: mean |log(pred /
measured)| of output tokens/s per GPU. Shared across models and GPUs; never per model or row.
Re-run `python tools/fit_inference.py` to reproduce them (it prints the block below).

Result of the fit: MAPE 6.3% over the 77 rows (dense 5.3%, max 17.3%; MoE 9.9%, max 25.5%).
Held out: leave-one-GPU-out MAPE 8.3% (H100) / 8.1% (H200); leave-one-model-out 5.1-7.6% for
the Llama models and 11.2% for Qwen3-235B-A22B (the only MoE: its rows shape the MoE terms).
"""

from __future__ import annotations

# --- fitted (tools/fit_inference.py) -------------------------------------------------------
# Achieved fraction of the HBM datasheet bandwidth when a step streams weights and KV cache.
HBM_EFFICIENCY = 0.8886
# Achieved fraction of the dense datasheet peak of a large GEMM (and of attention prefill).
GEMM_EFFICIENCY = 0.606
# Smooth roofline t = (t_mem^k + t_compute^k)^(1/k): k -> inf is max(), k = 1 is the sum.
ROOFLINE_EXPONENT = 1.108
# GEMM efficiency falls as the smallest weight dimension a GPU holds after sharding shrinks:
# eff = GEMM_EFFICIENCY * d / (d + GEMM_HALF_DIM) (tile quantization, short K loops).
GEMM_HALF_DIM = 1149.0
# --- end fitted ------------------------------------------------------------------------------

# --- assumed, not fitted (the calibration rows cannot identify them) --------------------------
# Fixed cost of one engine step (scheduling, sampling, launch gaps not hidden by CUDA graphs).
# Max-throughput steps last 20 ms to 3 s, so the TRT-LLM rows do not constrain it; 1 ms is the
# order of the per-iteration host overhead engines report with overlap scheduling.
STEP_OVERHEAD_S = 1.0e-3
# Bytes per vocabulary entry per logit row at the peak of a step: 16-bit logits + an FP32 copy +
# FP32 probabilities (2 + 4 + 4). Physics of the sampler, checked against the vLLM start-up log of
# calibration record vllm-issue-12330 (9.37 GiB activation peak at 8,192 tokens, Llama-3-8B).
LOGIT_BYTES_PER_ENTRY = 10.0
# Ceiling on the busy share of a queue's servers when no TTFT target bounds the wait: KV slots
# (aggregated and decode pools) and prefill replicas at most 95% busy. A queue at 100% of its
# capacity never drains (M/D/c and M/D/1 waits diverge as rho -> 1, queueing.py); 0.95 keeps the
# p99 wait finite. A policy choice, recorded as an assumption wherever it applies.
SLOT_CEILING = 0.95
