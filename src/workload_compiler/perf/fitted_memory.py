"""Constants of the training memory model that were fitted, not derived (see perf/memory.py).

runtime bytes per GPU = RUNTIME_FIXED_BYTES + RUNTIME_FRACTION * (modeled bytes of the stage)

What it stands for: allocator fragmentation and rounding (reserved minus allocated), the
communication buffers of FSDP/TP/PP (all-gather outputs, reduce-scatter inputs, p2p buffers on
their own streams), cuBLAS/NCCL workspaces taken through the allocator, and the op-level
temporaries the tensor-level model omits. The GPU's memory it is compared with is what the driver
exposes to a process (catalog `memory_visible_bytes`: an "80 GB" H100 shows 79.11 GiB).

Fitted (tools/fit_memory.py, validation/memory_fit.py; re-run by tests/unit/test_memory_calibration.py)
on ../shared/calibration only, with every framework profile and the rest of the model fixed:
- the 18 measured peaks of training_public.yaml (`measured.memory_gib_per_gpu`: torchtitan_2412
  Tables 1-6, Llama 3.1 8B/70B/405B, FSDP2, TP, PP, CP on H100 96 GB; torchtitan logs
  `torch.cuda.max_memory_reserved`, the caching allocator's peak),
- as upper bounds, the 216 records of training_public.yaml and training_added.yaml that state a
  layout and a micro-batch and compile through the user's path (validation/record_layout.py; every
  one ran, so modeled + reserve <= the GPU's memory), among them llm-foundry's 77 FSDP rows tuned
  to the memory limit;
on a 0.25 GiB x 0.25 % grid: the pair that minimizes the largest relative error on the peaks,
ties by the mean one, among the pairs under which every run that ran fits. One more run
(nemo2407_h100_fp8_sft_llama2_70b) is listed as not expressible (validation/data/
training_sources.yaml): at dp = 1 nothing is sharded and Megatron-Core's model states alone exceed
the GPU, and the record does not say which optimizer state layout its fine-tuning ran.
Fitted on 2026-12 (the calibration set of that date):
- in sample: peaks MAPE 4.28 %, max 9.19 %; all 216 runs that ran fit.
- leave one torchtitan table out (the peaks are one source family, so its tables are held out in
  turn): held-out MAPE 4.28 %, max 9.19 % (the runs that ran bind the fit, not the held-out table).
- leave one source family out (the runs that ran): every family's runs fit under a fit without
  them except llm-foundry's ('mpt': 75 of 77, worst 101.2 % of HBM, with 8.75 GiB + 1.25 %, the
  peaks-only fit; 74 of 77 before FP8 GEMM inputs were kept at 1 byte, 2026-12-02).
The peaks alone cannot separate a fixed part from a proportional one (all are 62-85 GiB on 96 GB
parts; least squares gives about the same total); the runs that ran bound the total from above, so
the fit sits at the largest reserve they allow, and the split stays weakly determined.
Only the PyTorch caching allocator is fitted: no XLA (MaxText) peak is in the calibration set, so
the same reserve is assumed for it (`runtime_constants`).
"""

from __future__ import annotations

from ..units import GIB

RUNTIME_FIXED_BYTES = 8.5 * GIB
RUNTIME_FRACTION = 0.0025


def runtime_constants(allocator: str) -> tuple[float, float]:
    """(fixed bytes, fraction of the modeled bytes) of the runtime reserve for an allocator
    ('pytorch' fitted; 'xla' assumed equal, see the module docstring)."""
    return RUNTIME_FIXED_BYTES, RUNTIME_FRACTION


def modeled_bytes(total_bytes: float, allocator: str) -> float:
    """The modeled tensors of a total: total = fixed + (1 + fraction) x modeled (inverts the reserve)."""
    fixed, fraction = runtime_constants(allocator)
    return (total_bytes - fixed) / (1.0 + fraction)
