"""A small training run compiled the way several tests need it: Llama 3.1 8B on 8 H100, the layout
pinned (tp 1, pp 1, dp 8, micro-batch 1), FP8, 32 sequences of 4,096 tokens; a test adds the one
training key it is about (LoRA, packed documents, ...)."""

from __future__ import annotations

from typing import Any

from workload_compiler import compile_workload


def llama8b_on_8_h100(**training: Any) -> Any:
    """The compiled spec, with `training` merged over the run's training section (None values left out)."""
    run: dict[str, Any] = {"tokens": "10M", "seq_len": 4096, "global_batch_size": 32, "precision": "fp8"}
    run |= {k: v for k, v in training.items() if v is not None}
    return compile_workload({"kind": "training", "model": {"preset": "llama3.1-8b"}, "training": run,
                             "compute": {"accelerator": "h100-sxm", "gpus": 8,
                                         "parallelism": {"tp": 1, "pp": 1, "dp": 8, "micro_batch_size": 1}}})
