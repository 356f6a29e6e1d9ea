"""LoRA adapters: which linear layers carry one, and their parameters.

LoRA (Hu et al. 2021, arXiv:2106.09685 §4.1) freezes the pretrained weights W (in x out) and trains a
rank-r pair beside each targeted layer, A (in x r) and B (r x out), so the adapter adds r (in + out)
parameters. Megatron-Bridge's and NeMo 2.0's `LoRA` (peft/lora.py) target linear_qkv, linear_proj,
linear_fc1 and linear_fc2 with dim 32 by default; their names here are qkv, proj, fc1, fc2. On a hybrid
model a layer holds its shares of attention and MLP blocks (arch.model), and so of their adapters; the
routed experts of a MoE layer carry none here: fc1 and fc2 adapters sit on the dense MLPs only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from .counts import layer_shapes
from .model import ModelArch

LoraTarget = Literal["qkv", "proj", "fc1", "fc2"]
LORA_TARGETS: tuple[LoraTarget, ...] = get_args(LoraTarget)
DEFAULT_RANK = 32         # Megatron-Bridge / NeMo 2.0 peft/lora.py LoRA dim


@dataclass(frozen=True)
class LoraSpec:
    """The adapters of a LoRA fine-tune: their rank and the linear layers that carry one."""

    rank: int
    targets: tuple[str, ...] = LORA_TARGETS


def target_widths(a: ModelArch) -> dict[str, tuple[float, float]]:
    """(input, output) width of each targetable linear layer of one layer, before tensor parallelism,
    weighted by the layer's share of the block that holds it."""
    h, s = float(a.hidden_size), layer_shapes(a)
    ffn = float(a.ffn_hidden_size or a.moe_ffn_hidden_size)
    att, mlp = a.attention_share, a.mlp_blocks / a.layers    # the layers' share with a dense MLP
    return {"qkv": (att * h, att * s.qkv_out), "proj": (att * s.o_in, att * h),
            "fc1": (mlp * h, mlp * s.up * ffn), "fc2": (mlp * ffn, mlp * h)}


def adapter_params_per_layer(a: ModelArch, spec: LoraSpec) -> float:
    """r x (in + out) summed over the targeted layers of one layer."""
    widths = target_widths(a)
    return float(spec.rank * sum(widths[t][0] + widths[t][1] for t in spec.targets))


def adapter_traffic_elements(a: ModelArch, spec: LoraSpec) -> float:
    """Activation elements per token an adapter pass moves through HBM, one layer: it reads its
    layer's input and adds into its output (in + out), and writes then reads the rank-r product."""
    widths = target_widths(a)
    return float(sum(widths[t][0] + widths[t][1] + 2 * spec.rank for t in spec.targets))


def lora_adapter_params(a: ModelArch, spec: LoraSpec | None) -> float | None:
    """The adapters' parameters over the whole model; None without LoRA (every weight trained)."""
    return None if spec is None else a.layers * adapter_params_per_layer(a, spec)
