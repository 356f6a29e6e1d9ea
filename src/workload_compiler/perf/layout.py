"""The inputs of the one performance model, scalar or grid.

`Layout` holds NumPy arrays that broadcast together: shape () for the one layout `compile`
evaluates, shape (n,) for the millions the planner evaluates. The memory and step-time functions
take a `Layout` and return arrays of the broadcast shape, so both callers run the same code.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from ..arch.lora import LoraSpec
from .framework import GENERIC, FrameworkProfile

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# selective = Megatron's attention-core recompute (Korthikanti et al. 2022); op_selective = PyTorch
# per-op selective checkpointing as torchtitan configures it (every second matmul recomputed).
# modules = Megatron-Core's module-level selective recompute (--recompute-modules layernorm moe_act):
# the norms' outputs and the activation functions' outputs are recomputed, no GEMM runs again.
RECOMPUTE_CODES: dict[str, int] = {"none": 0, "selective": 1, "full": 2, "op_selective": 3, "modules": 4,
                                   "mla_up_proj": 5}
RECOMPUTE_NAMES: dict[int, str] = {v: k for k, v in RECOMPUTE_CODES.items()}


def recompute_modes_for(is_mla: bool, modes: tuple[int, ...]) -> tuple[int, ...]:
    """The framework's recompute codes that mean something for this model: mla_up_proj recomputes
    multi-latent attention's up-projections, so without MLA it would be `none` again."""
    return tuple(c for c in modes if is_mla or c != RECOMPUTE_CODES["mla_up_proj"])
STAGE_FIELDS = ("first_layers", "mid_layers", "last_layers", "mid_mtp", "first_lead", "mid_lead", "last_lead")
# Layout fields `Layout.of` may leave out, with their defaults: the even stage split and no offload.
_OPTIONAL: dict[str, int] = {name: 0 if name == "mid_mtp" else -1 for name in STAGE_FIELDS} | {"offload": 0}
# Training precisions -> the tensor-core peak their GEMMs run at. fp8 is per-tensor scaling (delayed
# or current); fp8_blockwise is DeepSeek-V3's 1x128 activation / 128x128 weight blocks
# (arXiv:2412.19437 §3.3.2; Megatron-Core --fp8-recipe blockwise); mxfp8 the OCP MX format (32-element
# blocks, E8M0 scales) Blackwell runs natively; nvfp4 NVIDIA's 4-bit format (16-element blocks).
PEAK_CLASS: dict[str, str] = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "fp8_blockwise": "fp8",
                              "mxfp8": "fp8", "nvfp4": "fp4"}


@dataclass(frozen=True, kw_only=True)
class Layout:
    """Parallel layout(s). Degrees multiply to the GPU count: tp * pp * cp * dp = gpus.

    ep (expert parallel) and etp (expert tensor parallel) re-partition the same GPUs inside the
    MoE layers: ep * etp must divide tp * cp * dp (Megatron-Core's "MoE parallel folding").
    zero: 0 = plain DP, 1 = optimizer sharded (Megatron distributed optimizer), 2 = + gradients,
    3 = + parameters (FSDP / ZeRO-3). recompute: 0 none, 1 selective (attention core), 2 full, 3 op_selective.
    """

    tp: IntArray
    pp: IntArray
    dp: IntArray
    cp: IntArray
    ep: IntArray
    etp: IntArray
    vp: IntArray
    mbs: IntArray
    recompute: IntArray
    sp: npt.NDArray[np.bool_]
    zero: IntArray
    # Decoder layers on pipeline rank 0, on the busiest middle rank and on the last rank
    # (perf/stages.py); first_layers = -1: the even split, ceil(L / (pp vp)) per model chunk.
    first_layers: IntArray = dataclasses.field(default_factory=lambda: np.asarray(-1))
    mid_layers: IntArray = dataclasses.field(default_factory=lambda: np.asarray(-1))
    last_layers: IntArray = dataclasses.field(default_factory=lambda: np.asarray(-1))
    mid_mtp: IntArray = dataclasses.field(default_factory=lambda: np.asarray(0))  # MTP modules on a middle rank
    # Decoder layers in chunk 0 of those ranks (perf/schedule_peak.py: chunk 0 has the most micro-batches
    # in flight); -1: the rank's layers spread evenly over its vp chunks.
    first_lead: IntArray = dataclasses.field(default_factory=lambda: np.asarray(-1))
    mid_lead: IntArray = dataclasses.field(default_factory=lambda: np.asarray(-1))
    last_lead: IntArray = dataclasses.field(default_factory=lambda: np.asarray(-1))
    # Decoder layers whose stored activations go to host memory during the step (Megatron-Core
    # cpu_offloading_num_layers; pipeline-parallel size 1 and no recompute only): perf/offload.py.
    offload: IntArray = dataclasses.field(default_factory=lambda: np.asarray(0))

    @classmethod
    def of(cls, **values: Any) -> Layout:
        """Build from scalars or sequences; every field must be given except the stage split
        (first_layers, mid_layers, last_layers, mid_mtp and the chunk-0 leads: the even split by
        default) and the offloaded layers (none)."""
        arrays: dict[str, Any] = {}
        for f in fields(cls):
            v = values.get(f.name, _OPTIONAL[f.name]) if f.name in _OPTIONAL else values[f.name]
            arrays[f.name] = np.asarray(v, dtype=np.bool_ if f.name == "sp" else np.int64)
        return cls(**arrays)

    @property
    def gpus(self) -> IntArray:
        return self.tp * self.pp * self.cp * self.dp

    def take(self, index: Any) -> Layout:
        """One layout (or a subset) of a grid."""
        shape = self.shape     # a property over every field: computed once, not once per field
        return Layout(**{f.name: np.broadcast_to(getattr(self, f.name), shape)[index] for f in fields(self)})

    @property
    def shape(self) -> tuple[int, ...]:
        return np.broadcast_shapes(*(np.shape(getattr(self, f.name)) for f in fields(self)))


@dataclass(frozen=True, kw_only=True)
class TrainingSetup:
    """What a step processes: scalars, the same for every layout of a grid."""

    seq_len: int
    global_batch_size: int      # sequences per optimizer step
    # Packed documents with attention kept within each (varlen FlashAttention): the mean document
    # length, the span of the fused attention core; None: one document fills each sequence.
    document_tokens: int | None = None
    precision: str              # bf16 | fp16 | fp8 | mxfp8 | nvfp4
    # Fused (FlashAttention-style) attention core. False = the pre-2022 unfused path: QK^T and AV as
    # batched GEMMs plus a memory-bound softmax/dropout over the s x s scores (Megatron-LM 2021-22).
    flash_attention: bool = True
    # Speed of the fused attention kernel relative to FlashAttention-2-class kernels (FA2, FA3, cuDNN
    # fused attention): 0.5 for FlashAttention-1-era kernels (perf/step_time.py FA1_RELATIVE_SPEED).
    attention_relative_speed: float = 1.0
    grad_reduce_bytes: float = 4.0      # bytes per gradient element in the data-parallel reduction
    # MoE routing: dropless (Megatron-Core's default: token counts go to the host every layer to size
    # the grouped GEMMs) or a capacity factor (fixed shapes); the load of the busiest expert rank
    # over the mean (1.0 = the force-balanced routing of benchmark tables).
    moe_dropless: bool = True
    moe_load_imbalance: float = 1.0
    # What the training framework keeps in memory (master weights, gradient dtype, loss, FP8 copies,
    # offload, allocator); the default is the generic profile, the largest term of the known ones.
    framework: FrameworkProfile = GENERIC
    # Tensor-parallel collectives split into chunks and run under the GEMMs they feed (Megatron-Core
    # --tp-comm-overlap with Transformer Engine userbuffers; torchtitan AsyncTP); False: in series.
    tp_comm_overlap: bool = False
    # MoE: the expert-parallel all-to-all of one micro-batch runs under another's compute (Megatron-Core
    # --overlap-moe-expert-parallel-comm: 1F1B merges a forward and a backward layer by layer).
    ep_comm_overlap: bool = False
    # MoE dispatch: Megatron-Core's all-to-all (every token copy to its expert's GPU), or a
    # node-deduplicated one (DeepEP / HybridEP: once per remote node over the NICs, NVLink inside).
    ep_dispatch_dedup: bool = False
    # LoRA fine-tuning (arch/lora.py): the base weights frozen, adapters trained; None = every weight
    lora: LoraSpec | None = None


@dataclass(frozen=True, kw_only=True)
class MeasuredRates:
    """Rates measured on this accelerator / node type (`wkc calibrate`, an intake's `measured` block;
    measure/apply.py fills them for the machine they were measured on only). Each replaces the
    fitted constant it names; empty / None = not measured, the fitted constants apply."""

    gemm: tuple[tuple[str, float, float], ...] = ()   # (GEMM precision, e_max, kernel_overhead_s)
    hbm_bytes_per_s: float | None = None              # sustained (stream) HBM bandwidth
    busbw: tuple[tuple[str, float], ...] = ()         # ("scale_up.all_reduce", NCCL bus bandwidth B/s), ...

    def gemm_constants(self, precision: str, e_max: float, kernel_overhead_s: float) -> tuple[float, float]:
        """(e_max, t0) measured at this GEMM precision, else the fitted pair given."""
        for p, e, t0 in self.gemm:
            if p == precision:
                return e, t0
        return e_max, kernel_overhead_s

    def bus_bandwidth(self, tier: str, collective: str) -> float | None:
        """Measured NCCL bus bandwidth of `collective` on `tier` (scale_up | scale_out), or None."""
        return dict(self.busbw).get(f"{tier}.{collective}")


@dataclass(frozen=True, kw_only=True)
class Hardware:
    """The machine as the performance model sees it; every number from the catalog."""

    accelerator_id: str
    system_id: str
    peak_flops_bf16: float               # dense FLOP/s
    peak_flops_fp8: float | None         # dense FLOP/s; None when the accelerator has no FP8
    peak_flops_fp4: float | None
    hbm_bytes: float                     # what a process can allocate (catalog process_memory_bytes)
    hbm_bandwidth_bytes_per_s: float
    scale_up_bandwidth_bytes_per_s: float   # per GPU, per direction
    scale_up_domain_gpus: int
    gpus_per_node: int
    scale_out_bandwidth_bytes_per_s: float  # per GPU, per direction (NIC line rate / 8 x NICs/GPU)
    tdp_w: float
    # GPU <-> host memory, per direction (PCIe or NVLink-C2C); None: not in the catalog (no offload)
    host_link_bytes_per_s: float | None = None
    # dense BF16 tensor FLOPs per softmax exponential, per SM and clock (catalog); None: not known
    tensor_flops_per_exp: float | None = None
    measured: MeasuredRates = MeasuredRates()   # rates measured on this machine (none: fitted constants)
