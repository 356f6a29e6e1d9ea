"""The run settings of a training intake that the performance model reads (`TrainingSetup`): the
attention kernel, MoE routing and dispatch, the gradient-reduce dtype, TP and EP communication
overlap. Each is the user's value, the named framework's (catalog/data/frameworks.yaml), or a
named rule; traced.
"""

from __future__ import annotations

from ..arch.model import ModelArch
from ..errors import InputError
from ..intake.training import TrainingWorkload
from ..perf.attention_rate import unmeasured_kernels
from ..perf.layout import RECOMPUTE_NAMES, Hardware, TrainingSetup, recompute_modes_for
from ..perf.step_time import FA1_RELATIVE_SPEED
from ..provenance import Trace
from .training_defaults import TrainingRunResolved


def _moe_only(w: TrainingWorkload, arch: ModelArch) -> None:
    """The routing and dispatch keys of a mixture of experts given for a dense model would be
    ignored without a word: an error naming the key instead."""
    given = {"training.moe_capacity_factor": w.training.moe_capacity_factor,
             "training.moe_load_imbalance": w.training.moe_load_imbalance,
             "compute.parallelism.ep_comm_overlap": w.compute.parallelism.ep_comm_overlap,
             "compute.parallelism.ep_dispatcher": w.compute.parallelism.ep_dispatcher}
    for key, value in given.items():
        if value is not None and not arch.is_moe:
            raise InputError(key, value, f"left unset: it applies to mixture-of-experts models, and {arch.name} "
                                         "is dense (no routed experts)")


def _mla_only(w: TrainingWorkload, arch: ModelArch) -> None:
    """Megatron-Core's mla_up_proj recompute exists for multi-latent attention only."""
    if w.compute.parallelism.recompute == "mla_up_proj" and not arch.is_mla:
        allowed = ", ".join(RECOMPUTE_NAMES[c] for c in recompute_modes_for(False, tuple(RECOMPUTE_NAMES)))
        raise InputError("compute.parallelism.recompute", "mla_up_proj",
                         f"another mode: mla_up_proj recomputes multi-latent attention's up-projections, and "
                         f"{arch.name} has no MLA (allowed: {allowed})")


def _offload_rules(w: TrainingWorkload, arch: ModelArch, run: TrainingRunResolved) -> None:
    """Megatron-Core's activation offload: fewer layers than the model's, pp 1, no recompute
    (transformer_config.py __post_init__), in a framework that offloads layers (perf/offload.py)."""
    p = w.compute.parallelism
    n = p.activation_offload_layers
    if not n:
        return
    key = "compute.parallelism.activation_offload_layers"
    if not run.framework.layer_offload:
        raise InputError(key, n, f"0 or unset: the {run.framework.id} framework profile offloads no whole layers "
                                 "(megatron and nemo do: cpu_offloading_num_layers)")
    if n >= arch.layers:
        raise InputError(key, n, f"fewer than the model's {arch.layers} layers (Megatron-Core's rule)")
    if p.recompute not in (None, "none"):
        raise InputError(key, n, f"0 or unset with recompute {p.recompute}: Megatron-Core refuses activation "
                                 "offload beside recompute")
    if p.pp not in (None, 1):
        raise InputError(key, n, f"0 or unset with pp {p.pp}: Megatron-Core offloads with pp 1 only")


def check_host_link(offload_layers: int | None, hw: Hardware) -> None:
    """Pinned activation offload needs the GPU's host link (catalog pcie_bandwidth_bytes_per_s or
    host_link_bytes_per_s) to cost the copies."""
    if offload_layers and not hw.host_link_bytes_per_s:
        raise InputError("compute.parallelism.activation_offload_layers", offload_layers,
                         f"0 or unset: the catalog has no host link bandwidth for {hw.accelerator_id} "
                         "(pcie_bandwidth_bytes_per_s or host_link_bytes_per_s), so the copies cannot be costed")


def resolve_setup(w: TrainingWorkload, arch: ModelArch, run: TrainingRunResolved, trace: Trace) -> TrainingSetup:
    _moe_only(w, arch)
    _mla_only(w, arch)
    _offload_rules(w, arch, run)
    if w.training.attention_kernel is not None:
        kernel = trace.given("training.attention_kernel", w.training.attention_kernel)
    else:
        kernel = trace.assumed("training.attention_kernel", "flash" if run.framework.flash_attention else "unfused",
                               f"the {run.framework.id} profile's attention kernel: a fused FlashAttention-2-class "
                               "kernel (FA2/FA3, cuDNN, SDPA), the default of Megatron-Core, NeMo, torchtitan")
    dropless, imbalance, ep_overlap, dedup = True, 1.0, False, False
    if arch.is_moe:
        t = w.training
        if t.moe_capacity_factor is not None:
            dropless = not trace.given("training.moe_capacity_factor", t.moe_capacity_factor)
        else:
            trace.assumed("training.moe_capacity_factor", None,
                          "dropless routing (Megatron-Core's default: no capacity factor, no dropped tokens)")
        if t.moe_load_imbalance is not None:
            imbalance = trace.given("training.moe_load_imbalance", t.moe_load_imbalance)
        else:
            imbalance = trace.assumed(
                "training.moe_load_imbalance", 1.0,
                "expert load perfectly balanced, as benchmark tables force it; a learned router's busiest expert "
                "rank carries more than the mean: give your router's measured max/mean load")
        if w.compute.parallelism.ep_comm_overlap is not None:
            ep_overlap = trace.given("compute.parallelism.ep_comm_overlap", w.compute.parallelism.ep_comm_overlap)
        else:
            ep_overlap = trace.assumed("compute.parallelism.ep_comm_overlap", False,
                                       "expert-parallel all-to-all in series with the experts (Megatron-Core's "
                                       "default; its --overlap-moe-expert-parallel-comm hides it under another "
                                       "micro-batch's compute)")
        if w.compute.parallelism.ep_dispatcher is not None:
            dedup = trace.given("compute.parallelism.ep_dispatcher", w.compute.parallelism.ep_dispatcher) != "alltoall"
        else:
            trace.assumed("compute.parallelism.ep_dispatcher", "alltoall",
                          "every token copy sent to its expert's GPU (Megatron-Core's default dispatcher; DeepEP "
                          "and HybridEP send a token once per remote node)")
    if w.training.grad_reduce_dtype is not None:
        grad_dtype = trace.given("training.grad_reduce_dtype", w.training.grad_reduce_dtype)
    elif w.training.framework is not None:        # the named framework's gradient reduction
        grad_dtype = trace.derived("training.grad_reduce_dtype",
                                   "fp32" if run.framework.grad_reduce_bytes >= 4 else "bf16",
                                   f"the {run.framework.id} profile's grad_reduce_bytes (catalog/data/frameworks.yaml)")
    else:
        grad_dtype = trace.assumed("training.grad_reduce_dtype", "fp32",
                                   "gradients reduced in fp32 (NeMo grad_reduce_in_fp32, torchtitan reduce_dtype "
                                   "float32): the safer, slower choice")
    overlap = w.compute.parallelism.tp_comm_overlap
    if overlap is not None:
        trace.given("compute.parallelism.tp_comm_overlap", overlap)
    else:
        overlap = trace.assumed("compute.parallelism.tp_comm_overlap", True,
                                "NeMo / Megatron-Bridge performance recipes overlap TP communication with the GEMMs "
                                "(Transformer Engine userbuffers) whenever tp > 1")
    documents = w.training.document_tokens
    if documents is not None:
        trace.given("training.document_tokens", documents)
        if documents > run.seq_len:
            raise InputError("training.document_tokens", documents,
                             f"at most training.seq_len ({run.seq_len:,}): documents are packed into a sequence")
    setup = TrainingSetup(seq_len=run.seq_len, global_batch_size=run.global_batch_size, precision=run.precision,
                          document_tokens=documents,
                          flash_attention=kernel != "unfused",
                          attention_relative_speed=FA1_RELATIVE_SPEED if kernel == "flash_v1" else 1.0,
                          moe_dropless=dropless,
                          moe_load_imbalance=float(imbalance), tp_comm_overlap=bool(overlap),
                          ep_comm_overlap=bool(ep_overlap), ep_dispatch_dedup=bool(dedup),
                          grad_reduce_bytes=4.0 if grad_dtype == "fp32" else 2.0,
                          framework=run.framework, lora=run.lora)
    return setup


def note_unmeasured_kernels(hw: Hardware, setup: TrainingSetup, trace: Trace) -> None:
    """The step model carries each GPU's measured GEMM and attention kernel ceilings as ratios to the
    median GPU's (perf/gemm_precision.py, perf/attention_rate.py); a GPU without a measurement runs
    at the median's: an assumption, listed."""
    missing = unmeasured_kernels(hw, setup)
    if missing:
        trace.assumed("compute.kernel_efficiency", "median measured GPU",
                      f"{hw.accelerator_id} has no measured {' or '.join(missing)} kernel ceiling (catalog/data/"
                      "kernel_ceilings.yaml): timed at the median measured GPU's share of its datasheet peak")
