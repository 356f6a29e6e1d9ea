"""Named rules that fill what a training intake leaves out. Each fill is an assumption with its why.

Precedence (HABITS 3): the user's value > a value derived from other given values > a named rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arch.counts import param_counts
from ..arch.lora import DEFAULT_RANK, LoraSpec
from ..arch.model import ModelArch
from ..catalog.frameworks import framework_names, framework_profile
from ..intake.training import TrainingWorkload
from ..perf.framework import GENERIC, FrameworkProfile
from ..provenance import Trace

DEFAULT_PRECISION = "bf16"
DEFAULT_SEQ_LEN = 4096
# Tokens per optimizer step: Llama 3 405B started at 4M tokens (arXiv:2407.21783 §3.4.1);
# GPT-3 175B used 3.2M (Brown et al. 2020, Table 2.1). 4M (2^22) is the rule.
DEFAULT_BATCH_TOKENS = 2**22
# Compute-optimal tokens per parameter (Hoffmann et al. 2022, "Chinchilla", arXiv:2203.15556).
CHINCHILLA_TOKENS_PER_PARAM = 20.0
DEFAULT_ACCELERATOR = "h100-sxm"


@dataclass(frozen=True, kw_only=True)
class TrainingRunResolved:
    tokens: float
    seq_len: int
    global_batch_size: int
    precision: str
    framework: FrameworkProfile = GENERIC
    lora: LoraSpec | None = None          # LoRA fine-tuning (arch/lora.py); None: every weight trained


def resolve_run(w: TrainingWorkload, arch: ModelArch, trace: Trace) -> TrainingRunResolved:
    t = w.training
    if t.precision is not None:
        precision = trace.given("objective.precision", t.precision)
    else:
        precision = trace.assumed("objective.precision", DEFAULT_PRECISION,
                                  "bf16 mixed precision: the default of Megatron-LM, NeMo and torchtitan")
    if t.seq_len is not None:
        seq_len = trace.given("objective.seq_len", t.seq_len)
    else:
        seq_len = trace.assumed("objective.seq_len", DEFAULT_SEQ_LEN,
                                "4,096-token pre-training context (Llama 2/3 pre-training stage)")
    if t.global_batch_size is not None:
        gbs = trace.given("objective.global_batch_size", t.global_batch_size)
    else:
        gbs = trace.assumed("objective.global_batch_size", max(1, round(DEFAULT_BATCH_TOKENS / seq_len)),
                            "≈4M tokens per step (Llama 3: 4M at start, arXiv:2407.21783 §3.4.1; GPT-3: 3.2M)")
    if t.tokens is not None:
        tokens = trace.given("objective.tokens", t.tokens)
    else:
        n = param_counts(arch).total
        tokens = trace.assumed("objective.tokens", CHINCHILLA_TOKENS_PER_PARAM * n,
                               "20 tokens per parameter, compute-optimal (Hoffmann et al. 2022)")
    return TrainingRunResolved(tokens=float(tokens), seq_len=int(seq_len), global_batch_size=int(gbs),
                               precision=str(precision), framework=resolve_framework(w, trace),
                               lora=resolve_lora(w, trace))


def resolve_lora(w: TrainingWorkload, trace: Trace) -> LoraSpec | None:
    """training.lora -> the adapters; what it leaves unset is Megatron-Bridge's default, assumed."""
    lo = w.training.lora
    if lo is None:
        return None
    stated = lo.model_fields_set
    rank = trace.given("training.lora.rank", lo.rank) if "rank" in stated else trace.assumed(
        "training.lora.rank", lo.rank,
        f"rank {DEFAULT_RANK}: Megatron-Bridge's and NeMo's LoRA default (peft/lora.py dim)")
    targets = trace.given("training.lora.targets", lo.targets) if "targets" in stated else trace.assumed(
        "training.lora.targets", lo.targets, "adapters on linear_qkv, linear_proj, linear_fc1 and linear_fc2: "
        "Megatron-Bridge's and NeMo's LoRA default")
    return LoraSpec(rank=int(rank), targets=tuple(dict.fromkeys(targets)))


def resolve_framework(w: TrainingWorkload, trace: Trace) -> FrameworkProfile:
    """training.framework -> its profile; unset -> the generic profile, listed as an assumption."""
    name = w.training.framework
    if name is not None:
        profile = framework_profile(name, "training.framework")
        trace.given("compute.framework", profile.id)
        return profile
    profile = framework_profile("generic")
    trace.assumed("compute.framework", profile.id,
                  "training.framework not given: the generic memory profile (Megatron-Core's model states "
                  "and FP8 weight copies, PyTorch's native fp32 loss); name the framework (one of "
                  f"{', '.join(n for n in framework_names() if n != 'generic')}) for its own profile")
    return profile

