"""LoRA adapters: which linear layers carry one, and their parameters.

LoRA (Hu et al. 2021, arXiv:2106.09685 §4.1) freezes the pretrained weights W (in x out) and trains a
rank-r pair beside each targeted layer, A (in x r) and B (r x out), so the adapter adds r (in + out)
parameters. Megatron-Bridge's and NeMo 2.0's `LoRA` (peft/lora.py) target linear_qkv, linear_proj,
linear_fc1 and linear_fc2 with dim 32 by default; their names here are qkv, proj, fc1, fc2. On a hybrid
model a layer holds its shares of attention and MLP blocks (arch.model), and so of their adapters; the
routed experts of a MoE layer carry none here (their fc1/fc2 are the dense MLP's widths).
"""

from __future__ import annotations

from dataclasses import dataclass

from .counts import attention_params
from .model import ModelArch

LORA_TARGETS: tuple[str, ...] = ("qkv", "proj", "fc1", "fc2")
DEFAULT_RANK = 32


@dataclass(frozen=True)
class LoraSpec:
    """The adapters of a LoRA fine-tune: their rank and the linear layers that carry one."""

    rank: int
    targets: tuple[str, ...] = LORA_TARGETS


def target_widths(a: ModelArch) -> dict[str, tuple[float, float]]:
    """(input, output) width of each targetable linear layer of one layer, before tensor parallelism,
    weighted by the layer's share of the block that holds it."""
    h = float(a.hidden_size)
    d_v = a.mla_v_head_dim if a.is_mla else a.head_dim
    o_in = float(a.attention_heads * d_v)
    qkv_out = (attention_params(a) - o_in * h) / h
    ffn = float(a.ffn_hidden_size or a.moe_ffn_hidden_size)
    up = 2.0 if a.gated else 1.0
    att, mlp = a.attention_share, a.mlp_share if a.mlp_blocks else 0.0
    return {"qkv": (att * h, att * qkv_out), "proj": (att * o_in, att * h),
            "fc1": (mlp * h, mlp * up * ffn), "fc2": (mlp * ffn, mlp * h)}


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
