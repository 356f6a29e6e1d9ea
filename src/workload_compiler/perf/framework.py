"""What a training framework keeps in memory: the perf model's view of a framework profile.

The numbers live in `catalog/data/frameworks.yaml`, each with its source (the framework's code or
docs); `catalog/frameworks.py` reads them into this frozen dataclass, which `TrainingSetup.framework`
carries into the memory and step-time models. The defaults here are the `generic` profile, what
the memory model computed before frameworks were profiles: Megatron-Core's 18 B/param of model
states with a separate fp32 master and Transformer Engine's two FP8 weight copies (the heavier
choices of the known frameworks), with PyTorch's native fp32 cross-entropy. An unknown framework
is assumed to be this, and the assumption is listed.

Model states, bytes per parameter before ZeRO sharding (bf16/FP8/FP4 training):
    param_bytes      the persistent parameter copy (2: bf16 weights beside an fp32 master, as
                     Megatron-Core and DeepSpeed keep; 4: FSDP/FSDP2/MaxText keep the fp32 param
                     itself as the master and cast it to bf16 when gathering)
    grad_bytes       the gradient held until the optimizer step
    optimizer_bytes  the fp32 master copy (when separate) + Adam's two fp32 moments
    gathered_param_bytes  the unsharded working copy a ZeRO-3 / FSDP all-gather materializes
fp16 training keeps fp16 gradients and an fp32 copy of them in the optimizer where the framework
has a separate master (Megatron-Core docs: 4 + 16/d with the distributed optimizer): the
`fp16_*` fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Allocator = Literal["pytorch", "xla"]


@dataclass(frozen=True, kw_only=True)
class FrameworkProfile:
    """A training framework's memory behaviour; every number sourced in catalog/data/frameworks.yaml."""

    id: str = "generic"
    name: str = "unknown framework (Megatron-Core's model states and FP8 copies with PyTorch's native fp32 loss)"
    # ---- model states, bytes per parameter
    param_bytes: float = 2.0
    grad_bytes: float = 4.0
    optimizer_bytes: float = 12.0
    gathered_param_bytes: float = 2.0
    fp16_grad_bytes: float = 2.0
    fp16_optimizer_bytes: float = 16.0
    # An fp32 copy of the gradient shard made for the optimizer step (Megatron-Core's distributed
    # optimizer over bf16 gradients, DeepSpeed's fp32 gradient partition), sharded like the
    # optimizer; it lives after the backward pass, when the activations are gone.
    step_grad_copy_bytes: float = 0.0
    # True: the parameter itself is the fp32 master, stored sharded whenever gradients are (PyTorch
    # FSDP SHARD_GRAD_OP / FULL_SHARD, FSDP2, MaxText); ZeRO-2 then keeps the gathered bf16 copy of
    # every layer from forward to backward. False: bf16 parameters replicated up to ZeRO-2 beside a
    # sharded fp32 master (Megatron-Core distributed optimizer, DeepSpeed ZeRO-1/2).
    fsdp_param_storage: bool = False
    # ZeRO-3 gathers and ZeRO-2 reduce-scatters in buckets of at most this many parameters
    # (DeepSpeed stage3_max_live_parameters, reduce_bucket_size); 0 = whole layers (FSDP units).
    zero3_live_params: float = 0.0
    grad_bucket_params: float = 0.0
    # The 16-bit parameter of each GEMM weight is replaced by its low-precision copy under FP8/FP4
    # training (Megatron-Core --fp8-param-gather: parameters stored and gathered in FP8).
    lowp_primary_weights: bool = False
    # Persistent low-precision copies of each GEMM weight under FP8/MXFP8/NVFP4 (Transformer Engine
    # caches the weight and its transpose across micro-batches: 2; torchao casts per use: 0).
    lowp_weight_copies: float = 2.0
    # Under FP8/FP4 training the input each GEMM keeps for its weight gradient is the quantized copy
    # (Transformer Engine modules), not the 16-bit activation (torchao Float8Linear keeps the
    # high-precision input and casts again in backward): perf/activations.py gemm_input_bytes.
    lowp_saved_gemm_inputs: bool = False
    # ---- the loss: peak bytes per logit of one micro-batch (logits = tokens x vocab / tp)
    loss_bytes_per_logit: float = 12.0
    loss_bytes_per_logit_tp: float = 16.0
    # ---- activations
    dropout: bool = False                 # dropout masks saved (1 B per element)
    flash_attention: bool = True          # fused attention: no s x s scores kept
    activation_offload_fraction: float = 0.0   # of the stored layer activations, moved to host
    optimizer_offload_fraction: float = 0.0    # of the optimizer states (and fp32 master), on host
    layer_offload: bool = False           # offloads whole layers' activations on request (perf/offload.py)
    moe_probs_in_activation: bool = False  # MoE routing probs weigh act(fc1) inside the experts: no expert output kept
    # ---- runtime: which allocator's fitted reserve applies (perf/fitted_memory.py)
    allocator: Allocator = "pytorch"
    # ---- for the step-time model: bytes per element on the wire
    grad_reduce_bytes: float = 4.0        # gradient reduce-scatter / all-reduce dtype
    param_gather_bytes: float = 2.0       # ZeRO-3 / FSDP parameter all-gather dtype
    # ---- layout defaults and what the framework can run (for intake resolution and the planner)
    default_zero_stage: int = 1
    zero_stages: tuple[int, ...] = (0, 1, 2, 3)
    default_recompute: int = 0
    recompute_modes: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
    sequence_parallel: bool = True        # TP implies sequence parallelism
    source: str = "perf/framework.py defaults (the generic profile)"
    aliases: tuple[str, ...] = field(default_factory=tuple)

    def state_bytes(self, precision: str) -> tuple[float, float, float]:
        """(weights, gradients, optimizer) bytes per parameter before sharding, for a precision."""
        if precision == "fp16":
            return self.param_bytes, self.fp16_grad_bytes, self.fp16_optimizer_bytes
        return self.param_bytes, self.grad_bytes, self.optimizer_bytes


GENERIC = FrameworkProfile()

__all__ = ["GENERIC", "Allocator", "FrameworkProfile"]
