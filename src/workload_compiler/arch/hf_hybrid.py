"""The hybrid families of the HF reader (arch/hf_config.py): each config's layer list -> our one-block-
per-layer pattern (arch/model.py hybrid_pattern) and the linear mixer's shape. Nemotron-H and
Nemotron 3 write the pattern out; Granite 4.0-H and Qwen3-Next / Qwen3.5 list each layer's mixer,
and each of their layers becomes two blocks, the mixer and its FFN.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from .hf_reader import FIELD, ConfigReader
from .model import ATTENTION, GATED_DELTA, MAMBA, MLP_BLOCK, MOE_BLOCK, mamba_default

# GraniteMoeHybridConfig's defaults, which a config.json may leave out
_GRANITE_DEFAULTS = {"mamba_heads": 128, "mamba_groups": 1, "mamba_state_dim": 256, "mamba_conv_kernel": 4,
                     "mamba_chunk_size": 256, "moe_experts": 8, "moe_top_k": 2, "moe_ffn_hidden_size": 11008,
                     "moe_shared_ffn_hidden_size": 1024}
GATED_DELTA_CHUNK = 64        # FLA chunk_gated_delta_rule's chunk, the Gated DeltaNet kernels' tokens per chunk
# Nemotron 3's layers_block_type spells the pattern out
_BLOCK_TYPES: Mapping[str, str] = {"mamba": MAMBA, "attention": ATTENTION, "full_attention": ATTENTION,
                                   "moe": MOE_BLOCK, "mlp": MLP_BLOCK}


def nemotron_h_fields(r: ConfigReader) -> dict[str, Any]:
    """Nemotron-H and Nemotron 3: the layer pattern and the Mamba-2 mixer's shape (HF NemotronHConfig);
    the head size where it is written as attention_head_dim (Nemotron-H) rather than head_dim."""
    pattern = r.raw("hybrid_override_pattern")
    kinds = r.raw("layers_block_type")
    if not pattern and isinstance(kinds, list) and kinds:
        if not all(isinstance(k, str) and k in _BLOCK_TYPES for k in kinds):
            raise InputError(FIELD, r.origin, f"layers_block_type entries among {', '.join(sorted(_BLOCK_TYPES))}")
        pattern = "".join(_BLOCK_TYPES[k] for k in kinds)
    if not isinstance(pattern, str) or not pattern:
        raise r.lacks("hybrid_override_pattern")
    # Nemotron 3 Super's MTP module: one attention and one FFN block (mtp_hybrid_override_pattern "*E"),
    # which is the MTP module the counts and models know (DeepSeek-V3's: an attention and an MoE)
    mtp = r.int_("mtp_layers", 0)
    mtp_pattern = r.raw("mtp_hybrid_override_pattern")
    if mtp and mtp_pattern not in (None, ATTENTION + MOE_BLOCK, ATTENTION + MLP_BLOCK):
        raise InputError(FIELD, r.origin, f"mtp_hybrid_override_pattern '*E' or '*-', not {mtp_pattern!r} "
                         "(missing feature: other multi-token-prediction modules)")
    shape = ("mamba_head_dim", "mamba_state_dim", "mamba_groups", "mamba_conv_kernel", "mamba_chunk_size")
    out = {"hybrid_pattern": pattern, "mamba_heads": r.int_("mamba_heads"), "mtp_layers": mtp,
           "moe_latent_size": r.int_("moe_latent_size", 0),
           **{ours: r.int_(ours, mamba_default(ours)) for ours in shape}}
    head = r.raw("attention_head_dim")
    if isinstance(head, int) and not isinstance(head, bool) and head > 0:
        out["head_dim"] = head
    return out


def granite_fields(r: ConfigReader, hidden: int, layers: int) -> dict[str, Any]:
    """Granite 4.0-H: each of the config's layers becomes two blocks, its mixer ('M' or '*' by
    layer_types, all Mamba when absent, as HF's layers_block_type) and its FFN ('E', or '-' without
    experts); the Mamba head size is expand x hidden / heads where written "auto"."""
    kinds = r.raw("layer_types") or r.raw("layers_block_type") or ["mamba"] * layers
    experts = r.int_("moe_experts", _GRANITE_DEFAULTS["moe_experts"])
    ffn = MOE_BLOCK if experts > 0 else MLP_BLOCK
    pattern = _mixer_and_ffn(r, kinds, layers, {"mamba": MAMBA, "attention": ATTENTION}, [ffn] * layers)
    heads = r.int_("mamba_heads", _GRANITE_DEFAULTS["mamba_heads"])
    head = r.raw("mamba_d_head")
    if head in (None, "auto"):
        expand = r.raw("mamba_expand") or 2
        if not isinstance(expand, int) or (expand * hidden) % heads:
            raise InputError(FIELD, r.origin, "mamba_n_heads dividing mamba_expand x hidden_size (mamba_d_head 'auto')")
        head = expand * hidden // heads
    out: dict[str, Any] = {
        "layers": len(pattern), "hybrid_pattern": pattern, "mamba_heads": heads, "mamba_head_dim": head,
        **{ours: r.int_(ours, _GRANITE_DEFAULTS[ours])
           for ours in ("mamba_state_dim", "mamba_groups", "mamba_conv_kernel", "mamba_chunk_size")}}
    shared = r.int_("moe_shared_ffn_hidden_size", _GRANITE_DEFAULTS["moe_shared_ffn_hidden_size"])
    if experts > 0:
        out.update(moe_experts=experts, moe_dense_layers=0, moe_layer_interval=1, moe_shared_experts=1,
                   moe_shared_ffn_hidden_size=shared,
                   **{ours: r.int_(ours, _GRANITE_DEFAULTS[ours]) for ours in ("moe_top_k", "moe_ffn_hidden_size")})
    else:
        out["ffn_hidden_size"] = shared     # the shared MLP is the layer's only FFN
    return out


def qwen_next_fields(r: ConfigReader, layers: int, values: dict[str, Any]) -> dict[str, Any]:
    """Qwen3-Next / Qwen3.5: each config layer becomes its mixer (G for linear_attention, * for
    full_attention; from full_attention_interval where layer_types is absent) and its FFN (E on the
    MoE layers of decoder_sparse_step / mlp_only_layers, - elsewhere); q_proj carries the output gate
    (Qwen3-Next always, Qwen3.5 by attn_output_gate). MTP modules (mtp_num_hidden_layers) are left out,
    as HF's checkpoint counts leave them."""
    kinds = r.raw("layer_types")
    if kinds is None:
        interval = r.int_("full_attention_interval", 4)       # Qwen3NextConfig's default
        kinds = ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(layers)]
    moe = bool(values.get("moe_experts"))
    dense_only = set(r.raw("mlp_only_layers") or [])
    step = r.int_("moe_interval_step", 1)
    ffn = [MOE_BLOCK if moe and i not in dense_only and (i + 1) % step == 0 else MLP_BLOCK for i in range(layers)]
    pattern = _mixer_and_ffn(r, kinds, layers, {"linear_attention": GATED_DELTA, "full_attention": ATTENTION}, ffn)
    gate = r.raw("attn_output_gate")
    return {"layers": len(pattern), "hybrid_pattern": pattern, "mamba_chunk_size": GATED_DELTA_CHUNK,
            "attention_output_gate": True if gate is None else bool(gate),
            **{ours: r.int_(ours) for ours in ("mamba_heads", "mamba_head_dim", "mamba_groups", "mamba_state_dim")},
            "mamba_conv_kernel": r.int_("mamba_conv_kernel", 4)}


def _mixer_and_ffn(r: ConfigReader, kinds: Any, layers: int, mixers: Mapping[str, str], ffn: list[str]) -> str:
    """The pattern of a config that lists each layer's mixer: per layer, its mixer's block and its FFN
    block (`ffn`, one per layer); `kinds` checked to name one of `mixers` for each of `layers`."""
    if not isinstance(kinds, list) or len(kinds) != layers or not all(k in mixers for k in kinds):
        allowed = " or ".join(f"'{k}'" for k in mixers)
        raise InputError(FIELD, r.origin, f"layer_types: {layers} entries (num_hidden_layers), each {allowed}")
    return "".join(mixers[k] + f for k, f in zip(kinds, ffn, strict=True))
