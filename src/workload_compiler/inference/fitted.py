"""Every fitted (and every assumed, not-fitted) constant of the inference model, in one place.

FITTED by tools/fit_inference.py on ../shared/calibration `entries` of inference_public.yaml
and inference_added.yaml: 107 NVIDIA TensorRT-LLM perf-overview rows (v1.0-era, trtllm-bench
offline max throughput, FP8 KV): 77 on H100 SXM / H200 SXM with FP8 checkpoints (Llama 3.1 8B,
Llama 3.3 70B, Llama 3.1 405B, Qwen3-235B-A22B; TP1/TP2/TP8) and 30 on B200 with NVFP4
checkpoints (Llama 3.3 70B TP1, Llama 3.1 405B TP4, Qwen3-235B-A22B TP8); ISL/OSL 128/128 to
20000/2000. Objective: mean |log(pred / measured)| of output tokens/s per GPU. Shared across
models, GPUs and precisions; never per model, GPU or row. The GPU- and precision-specific part
is measured, not fitted: the kernel ceilings of catalog/data/kernel_ceilings.yaml (the share of
the datasheet peak TensorRT-LLM's GEMM and attention kernels sustain on each GPU, from kernel
micro-benchmarks), so HBM_EFFICIENCY and GEMM_EFFICIENCY are multipliers on those, not on
the datasheet. The routed experts of an MoE run at TensorRT-LLM's measured MoE op where
AIConfigurator measured that GPU, weight format, expert shape and degrees (catalog/moe_latency.py,
inference/performance.py measured_experts_s), so these constants no longer stand in for it there.
Re-run `python tools/fit_inference.py` to reproduce them (it prints this block).

Result of the fit, output tokens/s per GPU (MAPE, max |error|), 2026-12-05:
                               in sample        leave-one-GPU-out (refit without that GPU)
    all 107 rows               6.2%  (26.8%)    6.5%  (27.7%)
    dense, all (80)            5.1%  (19.6%)    5.5%  (22.0%)
    MoE, all (27)              9.5%  (26.8%)    9.5%  (27.7%)
    Hopper FP8 dense (60)      5.1%  (19.6%)    5.4%  (22.0%)
    Hopper FP8 MoE (17)        10.2% (26.8%)    10.3% (27.7%)
    Blackwell NVFP4, all (30)  6.1%  (17.8%)    6.6%  (16.6%)  B200 held out: fitted on Hopper only
      dense (20)               5.1%  (17.8%)    5.9%  (16.6%)
      MoE (10)                 8.2%  (15.7%)    8.2%  (15.6%)
Leave-one-precision-out: FP4 held out 6.6% (= B200 held out), FP8 held out 7.5%. Leave-one-model-
out: 4.6-7.2% for the Llama models, 9.5% for Qwen3-235B-A22B (the only MoE). On the 114 held-out
perf-overview rows no constant was fitted on (tools/holdout_inference.py: GB200, RTX PRO 6000, Qwen3-
30B-A3B, Llama 4 Maverick): 34.8% with the experts as modelled GEMMs (constants of 2026-12-01),
27.9% with the measured op (Qwen3-30B-A3B on B200 +63.5 -> +29.3% mean, on GB200 +112.7 -> +67.2%,
Maverick on H200 +2.9 -> +7.1%, on B200 -11.4 -> -14.4%), 25.7% with the engine's host work measured
on Grace as a floor under the step (engines.py host_cost; Qwen3-30B-A3B on GB200 +67.2 -> +43.6%;
no calibration row runs on a Grace host, so the fit is unchanged by it). The fit before (2026-12-01, every expert a
modelled GEMM): in sample 6.2%, leave-one-GPU-out 6.8% (MoE 10.3%), FP8 held out 7.1%.
Before the kernel ceilings (datasheet peaks times one efficiency fitted on Hopper),
the B200 NVFP4 rows scored 31.7% (dense 37.6%, MoE 20.0%): an NVFP4 GEMM on a B200 sustains 0.39
of its 9 PFLOP/s dense peak where an FP8 GEMM on an H100 sustains 0.62 of 1,979 TFLOP/s.

Leave-one-GPU-out signed error (predicted / published - 1) per kind of case, the basis of the
uncertainty bands (tools/fit_inference.py prints it, 2026-12-05; the band is the published value
within `factor` of the prediction either way: exp of the 80th percentile of |ln(1 + e)|):
    kind                  n   MAPE    p10     p90    factor
    Blackwell dense fp4   20   5.9%  -10.0%   +7.6%   1.112
    Blackwell moe fp4     10   8.2%  -14.6%   +4.5%   1.148
    Hopper dense fp8      60   5.4%   -8.4%   +8.7%   1.092
    Hopper moe fp8        17  10.3%   -8.7%  +22.7%   1.197
No Ampere, BF16 or Blackwell FP8 row was ever validated: no band for those kinds.
"""

from __future__ import annotations

# --- fitted (tools/fit_inference.py) -------------------------------------------------------
# Multiplier on the measured streaming ceilings (kernel_ceilings gemm_stream, kv_stream) when a
# step streams weights and KV cache. Above 1: the ceilings are medians over many shapes (down to
# 200 MB), a served step streams the largest ones; H100 FP8: 1.203 x 0.767 = 0.92 of 3.35 TB/s,
# BabelStream reaches 0.89 (reference/hpc.md).
HBM_EFFICIENCY = 1.203
# Multiplier on the measured FLOP-bound GEMM ceiling (kernel_ceilings gemm_compute) of a large
# GEMM (and of the measured fused-attention rate, attention_compute): the engine's kernels run as
# the benchmark's.
GEMM_EFFICIENCY = 0.998
# Smooth roofline t = (t_mem^k + t_compute^k)^(1/k): k -> inf is max(), k = 1 is the sum (the fit
# sits on that bound: streaming and math of one step overlap little at these batch sizes).
ROOFLINE_EXPONENT = 1.0
# GEMM efficiency falls as the smallest weight dimension a GPU holds after sharding shrinks:
# eff = GEMM_EFFICIENCY * d / (d + GEMM_HALF_DIM) (tile quantization, short K loops).
GEMM_HALF_DIM = 966.3
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
