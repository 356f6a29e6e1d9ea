"""Hugging Face `config.json` -> `ModelArch`, through one explicit table of known architectures.

Only the architectures in `_FAMILIES` are read; each names the config keys it uses. Anything
else is rejected with the allowed list, and a missing required key is named. Local files only:
no hub access. The core never sees the raw dict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError
from .hf_hybrid import granite_fields, nemotron_h_fields, qwen_next_fields
from .hf_reader import FIELD, ConfigReader
from .model import MOE_BLOCK, MlpKind, ModelArch

# Our field -> the config.json key, shared by the Llama-style families.
_BASE_KEYS: Mapping[str, str] = {
    "layers": "num_hidden_layers", "hidden_size": "hidden_size",
    "attention_heads": "num_attention_heads", "vocab_size": "vocab_size",
    "kv_heads": "num_key_value_heads", "head_dim": "head_dim",
    "ffn_hidden_size": "intermediate_size", "tied_embeddings": "tie_word_embeddings",
}
_REQUIRED = ("layers", "hidden_size", "attention_heads", "vocab_size")


@dataclass(frozen=True)
class _Family:
    """How one `architectures` entry maps onto ModelArch."""

    mlp: MlpKind | None = "swiglu"        # None: from hidden_act via _ACTIVATIONS
    keys: Mapping[str, str] = field(default_factory=dict)   # overrides/extends _BASE_KEYS
    tied_default: bool = False             # the family's config class default
    text_config: bool = False              # multimodal: the decoder lives under text_config
    shared_experts: int = 0                # fixed by the family (Llama 4: one shared expert)
    sliding: str = "layer_types"           # how windows are declared: see _sliding()
    hybrid: str = ""                       # a hybrid: "nemotron", "granite" or "qwen_next" (arch/hf_hybrid.py)


_MOE_MIXTRAL = {"moe_experts": "num_local_experts", "moe_top_k": "num_experts_per_tok",
                "moe_ffn_hidden_size": "intermediate_size"}
_MOE_QWEN = {"moe_experts": "num_experts", "moe_top_k": "num_experts_per_tok",
             "moe_ffn_hidden_size": "moe_intermediate_size", "moe_interval_step": "decoder_sparse_step",
             "moe_shared_ffn_hidden_size": "shared_expert_intermediate_size"}
_MOE_DEEPSEEK = {"moe_experts": "n_routed_experts", "moe_top_k": "num_experts_per_tok",
                 "moe_ffn_hidden_size": "moe_intermediate_size", "moe_shared_experts": "n_shared_experts",
                 "moe_dense_layers": "first_k_dense_replace", "moe_layer_interval": "moe_layer_freq",
                 "mla_q_lora_rank": "q_lora_rank", "mla_kv_lora_rank": "kv_lora_rank",
                 "mla_qk_nope_head_dim": "qk_nope_head_dim", "mla_qk_rope_head_dim": "qk_rope_head_dim",
                 "mla_v_head_dim": "v_head_dim", "mtp_layers": "num_nextn_predict_layers",
                 "moe_router_groups": "n_group", "moe_router_group_top_k": "topk_group"}
# DeepSeek Sparse Attention (DeepSeek-V3.2): the lightning indexer and the keys each query keeps
_DSA = {"sparse_attention_topk": "index_topk", "indexer_heads": "index_n_heads", "indexer_head_dim": "index_head_dim"}
_LLAMA4 = {"moe_experts": "num_local_experts", "moe_top_k": "num_experts_per_tok",
           "moe_ffn_hidden_size": "intermediate_size", "ffn_hidden_size": "intermediate_size_mlp",
           "moe_interval_step": "interleave_moe_layer_step"}
_NEMOTRON_H = {"mamba_heads": "mamba_num_heads", "mamba_head_dim": "mamba_head_dim",
               "mamba_state_dim": "ssm_state_size", "mamba_groups": "n_groups", "mamba_conv_kernel": "conv_kernel",
               "mamba_chunk_size": "chunk_size",
               "moe_experts": "n_routed_experts", "moe_top_k": "num_experts_per_tok",
               "moe_ffn_hidden_size": "moe_intermediate_size", "moe_shared_experts": "n_shared_experts",
               "moe_shared_ffn_hidden_size": "moe_shared_expert_intermediate_size",
               "moe_router_groups": "n_group", "moe_router_group_top_k": "topk_group",
               "moe_latent_size": "moe_latent_size", "mtp_layers": "num_nextn_predict_layers"}
# IBM Granite 4.0-H (HF GraniteMoeHybridConfig): every layer is a mixer (Mamba-2 or attention) then
# an FFN, the routed experts (num_local_experts of intermediate_size) beside one shared MLP of
# shared_intermediate_size, or that MLP alone when num_local_experts is 0 (modeling_granitemoehybrid.py
# GraniteMoeHybridDecoderLayer)
_GRANITE_HYBRID = {"mamba_heads": "mamba_n_heads", "mamba_head_dim": "mamba_d_head", "mamba_state_dim": "mamba_d_state",
                   "mamba_groups": "mamba_n_groups", "mamba_conv_kernel": "mamba_d_conv",
                   "mamba_chunk_size": "mamba_chunk_size", "moe_experts": "num_local_experts",
                   "moe_top_k": "num_experts_per_tok", "moe_ffn_hidden_size": "intermediate_size",
                   "moe_shared_ffn_hidden_size": "shared_intermediate_size"}
# Qwen3-Next and Qwen3.5 (HF Qwen3NextConfig, Qwen3_5TextConfig): every layer is a Gated DeltaNet
# ("linear_attention") or a gated attention ("full_attention") mixer, then a MoE (Qwen3-MoE's keys) or
# a dense MLP. The Gated DeltaNet's value heads and size are our mamba_heads and mamba_head_dim, its
# key heads and size mamba_groups and mamba_state_dim (arch/model.py); FLA's chunk is 64 tokens.
_QWEN_NEXT = {**_MOE_QWEN, "mamba_heads": "linear_num_value_heads", "mamba_head_dim": "linear_value_head_dim",
              "mamba_groups": "linear_num_key_heads", "mamba_state_dim": "linear_key_head_dim",
              "mamba_conv_kernel": "linear_conv_kernel_dim", "full_attention_interval": "full_attention_interval"}
_GPT2 = {"layers": "n_layer", "hidden_size": "n_embd", "attention_heads": "n_head",
         "ffn_hidden_size": "n_inner"}

# THE mapping table: the allow-list of `architectures` and how each is read.
_FAMILIES: Mapping[str, _Family] = {
    "LlamaForCausalLM": _Family(),
    "MistralForCausalLM": _Family(sliding="all_or_types"),
    "MixtralForCausalLM": _Family(keys=_MOE_MIXTRAL, sliding="all_or_types"),
    "Qwen2ForCausalLM": _Family(sliding="qwen"),
    "Qwen3ForCausalLM": _Family(sliding="qwen"),
    "Qwen3MoeForCausalLM": _Family(keys=_MOE_QWEN, sliding="qwen"),
    "DeepseekV3ForCausalLM": _Family(keys=_MOE_DEEPSEEK),
    "DeepseekV32ForCausalLM": _Family(keys={**_MOE_DEEPSEEK, **_DSA}),
    "GptOssForCausalLM": _Family(keys=_MOE_MIXTRAL),
    "NemotronForCausalLM": _Family(mlp=None),
    "NemotronHForCausalLM": _Family(mlp=None, keys=_NEMOTRON_H, hybrid="nemotron"),
    "GraniteMoeHybridForCausalLM": _Family(keys=_GRANITE_HYBRID, hybrid="granite", shared_experts=1),
    "Qwen3NextForCausalLM": _Family(keys=_QWEN_NEXT, hybrid="qwen_next"),
    "Qwen3_5ForCausalLM": _Family(keys=_QWEN_NEXT, hybrid="qwen_next"),
    "Qwen3_5MoeForCausalLM": _Family(keys=_QWEN_NEXT, hybrid="qwen_next"),
    "Qwen3_5ForConditionalGeneration": _Family(keys=_QWEN_NEXT, hybrid="qwen_next", text_config=True),
    "Qwen3_5MoeForConditionalGeneration": _Family(keys=_QWEN_NEXT, hybrid="qwen_next", text_config=True),
    "GPT2LMHeadModel": _Family(mlp="gelu", keys=_GPT2, tied_default=True),
    "Llama4ForConditionalGeneration": _Family(keys=_LLAMA4, text_config=True, shared_experts=1,
                                              sliding="chunked"),
    "Llama4ForCausalLM": _Family(keys=_LLAMA4, shared_experts=1, sliding="chunked"),
}

# hidden_act of the non-gated families -> our MLP kind.
_ACTIVATIONS: Mapping[str, MlpKind] = {"relu2": "squared_relu", "relu": "relu", "gelu": "gelu",
                                       "gelu_new": "gelu", "gelu_pytorch_tanh": "gelu"}

# quantization_config.quant_method -> weights_format name (arch/weight_formats.py).
_QUANT_METHODS: Mapping[str, str] = {"mxfp4": "mxfp4", "fp8": "fp8", "awq": "int4", "gptq": "int4"}

def allowed_architectures() -> list[str]:
    return sorted(_FAMILIES)


def _mlp(family: _Family, r: ConfigReader) -> MlpKind:
    if family.mlp is not None:
        return family.mlp
    act = r.raw("hidden_act") or r.raw("mlp_hidden_act")     # NemotronHConfig spells it both ways
    if act not in _ACTIVATIONS:
        allowed = ", ".join(sorted(_ACTIVATIONS))
        raise InputError(FIELD, r.origin, f"hidden_act {act!r} is not one of {allowed}")
    return _ACTIVATIONS[act]


def _moe_layout(r: ConfigReader, layers: int) -> tuple[int, int]:
    """(leading dense layers, interval). Qwen/Llama 4 step s puts MoE on layers s-1, 2s-1, ..."""
    if "moe_interval_step" in r.keys:
        step = r.int_("moe_interval_step", 1)
        explicit = r.raw("moe_layers")   # Llama 4 writes the list out
        if isinstance(explicit, list) and explicit:
            first = int(explicit[0])
            step = int(explicit[1]) - first if len(explicit) > 1 else max(layers - first, 1)
            if step < 1 or list(explicit) != list(range(first, layers, step)):
                raise InputError(FIELD, r.origin, "moe_layers must be every n-th layer to the last")
            return first, step
        if r.raw("mlp_only_layers"):
            raise InputError(FIELD, r.origin, "mlp_only_layers is not supported (dense layers mid-stack)")
        return step - 1, step
    dense, interval = r.int_("moe_dense_layers", 0), r.int_("moe_layer_interval", 1)
    if dense % interval:  # DeepSeek: MoE where idx >= k and idx % freq == 0
        raise InputError(FIELD, r.origin, "first_k_dense_replace must be a multiple of moe_layer_freq")
    return dense, interval


def _sliding(family: _Family, r: ConfigReader, layers: int) -> tuple[int, int]:
    """(window tokens, layers that use it)."""
    window = r.raw("sliding_window") or 0
    types = r.raw("layer_types")
    if family.sliding == "chunked":  # Llama 4: chunked attention on the RoPE layers, as a window
        chunk = r.raw("attention_chunk_size") or 0
        rope = r.raw("no_rope_layers")   # 1 = RoPE + chunked, 0 = global NoPE layer
        if not isinstance(rope, list) or not rope:
            interval = int(r.raw("no_rope_layer_interval") or 4)   # Llama4TextConfig default
            rope = [int((i + 1) % interval != 0) for i in range(layers)]
        return (int(chunk), sum(1 for x in rope if x)) if chunk else (0, 0)
    if isinstance(types, list) and types:
        if len(types) != layers:
            raise InputError(FIELD, r.origin, f"layer_types has {len(types)} entries for {layers} layers")
        n = sum(1 for t in types if t == "sliding_attention")
        if n and not window:
            raise r.lacks("sliding_window")
        return (int(window), n) if n else (0, 0)
    if family.sliding == "qwen":
        if not r.raw("use_sliding_window") or not window:
            return 0, 0
        full = r.raw("max_window_layers")
        return int(window), layers - min(layers, int(full if full is not None else layers))
    if family.sliding == "all_or_types" and window:
        return int(window), layers   # Mistral 7B v0.1: every layer slides
    return 0, 0


def _glu_clamp(r: ConfigReader) -> float:
    """GptOssConfig's swiglu_limit (7.0): the clamp on the experts' gate and linear inputs; 0 = none."""
    limit = r.raw("swiglu_limit")
    if limit is None:
        return 0.0
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 <= limit < float("inf"):
        raise InputError(FIELD, r.origin, f"swiglu_limit {limit!r} is not a finite number >= 0")
    return float(limit)


def _weight_format(cfg: Mapping[str, Any]) -> tuple[str | None, str]:
    q = cfg.get("quantization_config")
    if not isinstance(q, dict) or q.get("quant_method") not in _QUANT_METHODS:
        return None, "all"
    name = _QUANT_METHODS[q["quant_method"]]
    if name == "fp8" and q.get("weight_block_size") == [128, 128]:
        name = "fp8-block128"
    # gpt-oss keeps attention, router, embeddings and head in BF16 (modules_to_not_convert).
    scope = "experts" if name == "mxfp4" and q.get("modules_to_not_convert") else "all"
    return name, scope


def arch_from_hf_dict(cfg: Mapping[str, Any], origin: str = "config.json") -> ModelArch:
    """Translate a parsed config.json. `origin` names it in errors and in `source`."""
    archs = cfg.get("architectures")
    if not isinstance(archs, list) or not archs:
        raise InputError(FIELD, origin, "config.json lacks 'architectures'; allowed: "
                         + ", ".join(allowed_architectures()))
    arch_name = next((a for a in archs if a in _FAMILIES), None)
    if arch_name is None:
        raise InputError(FIELD, origin, f"architectures {archs} not supported; allowed: "
                         + ", ".join(allowed_architectures()))
    family = _FAMILIES[arch_name]
    body = cfg
    if family.text_config:
        body = cfg.get("text_config") or {}
        if not isinstance(body, dict) or not body:
            raise InputError(FIELD, origin, f"config.json lacks 'text_config' (required for {arch_name})")
    r = ConfigReader(body, {**_BASE_KEYS, **family.keys}, origin, arch_name)
    layers, hidden, heads = r.int_("layers"), r.int_("hidden_size"), r.int_("attention_heads")
    vocab = r.int_("vocab_size")
    head_dim = r.int_("head_dim", 0) or _head_dim(hidden, heads, r)
    ffn_default = 4 * hidden if family.mlp == "gelu" else None
    values: dict[str, Any] = {
        "name": str(cfg.get("_name_or_path") or _name_of_file(origin)), "layers": layers, "hidden_size": hidden,
        "attention_heads": heads, "kv_heads": r.int_("kv_heads", heads), "head_dim": head_dim,
        "ffn_hidden_size": r.int_("ffn_hidden_size", ffn_default), "vocab_size": vocab,
        "mlp": _mlp(family, r), "source": f"{arch_name} config.json ({origin})",
    }
    tied = body.get("tie_word_embeddings", cfg.get("tie_word_embeddings", family.tied_default))
    values["tied_embeddings"] = bool(tied)
    if "moe_experts" in r.keys and r.int_("moe_experts", 0) > 0:
        # a hybrid's pattern places its MoE blocks (arch/hf_hybrid.py), mid-stack dense layers too
        dense, interval = (0, 1) if family.hybrid else _moe_layout(r, layers)
        values.update(moe_experts=r.int_("moe_experts"), moe_top_k=r.int_("moe_top_k"),
                      moe_ffn_hidden_size=r.int_("moe_ffn_hidden_size"),
                      moe_dense_layers=dense, moe_layer_interval=interval)
        # Qwen2-MoE style: one shared expert, declared by its size alone.
        shared_ffn = r.int_("moe_shared_ffn_hidden_size", 0) if "moe_shared_ffn_hidden_size" in r.keys else 0
        shared = r.int_("moe_shared_experts", 0) if "moe_shared_experts" in r.keys else family.shared_experts
        values["moe_shared_experts"] = shared or (1 if shared_ffn else 0)
        values["moe_shared_ffn_hidden_size"] = shared_ffn
        for ours in ("moe_router_groups", "moe_router_group_top_k"):
            if ours in r.keys:
                values[ours] = r.int_(ours, 0)
    if "mla_kv_lora_rank" in r.keys:
        for ours in ("mla_q_lora_rank", "mla_kv_lora_rank", "mla_qk_nope_head_dim",
                     "mla_qk_rope_head_dim", "mla_v_head_dim"):
            values[ours] = r.int_(ours, 0 if ours == "mla_q_lora_rank" else None)
        values["mtp_layers"] = r.int_("mtp_layers", 0)
        values["head_dim"] = values["mla_v_head_dim"]
    if "sparse_attention_topk" in r.keys:
        values.update({ours: r.int_(ours) for ours in ("sparse_attention_topk", "indexer_heads", "indexer_head_dim")})
    if family.hybrid == "granite":
        values.update(granite_fields(r, hidden, layers))
    elif family.hybrid == "qwen_next":
        values.update(qwen_next_fields(r, layers, values))
    elif family.hybrid:
        values.update(nemotron_h_fields(r))
    if family.hybrid and MOE_BLOCK not in values["hybrid_pattern"]:   # a config class default, not a block
        values = {k: v for k, v in values.items() if not k.startswith("moe_")}
    values["sliding_window"], values["sliding_window_layers"] = _sliding(family, r, layers)
    values["weight_format"], values["weight_format_scope"] = _weight_format(cfg)
    values["glu_clamp"] = _glu_clamp(r)
    try:
        return ModelArch(**values)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InputError(FIELD, origin, f"config.json values are out of range ({problems})") from None


def _head_dim(hidden: int, heads: int, r: ConfigReader) -> int:
    if hidden % heads:
        raise InputError(FIELD, r.origin, f"config.json lacks 'head_dim' and hidden_size {hidden} "
                         f"is not divisible by num_attention_heads {heads}")
    return hidden // heads


def _name_of_file(origin: str) -> str:
    """A model's name from where its config.json lies: 'gpt-oss-120b.json' -> 'gpt-oss-120b',
    '.../Llama-3.1-8B/config.json' -> 'Llama-3.1-8B', the Hugging Face cache's
    '.../models--openai--gpt-oss-120b/snapshots/<commit>/config.json' -> 'openai/gpt-oss-120b'."""
    p = Path(origin)
    if p.stem != "config":
        return p.stem or origin
    parent = p.parent
    if parent.parent.name == "snapshots" and parent.parent.parent.name.startswith("models--"):
        return parent.parent.parent.name.removeprefix("models--").replace("--", "/")
    return parent.name or origin


def load_hf_config(path: str | Path) -> ModelArch:
    """Read a local config.json (or a folder holding one) and translate it; no network."""
    p = Path(path)
    try:
        # is_dir() too may raise: a name longer than the file system allows (ENAMETOOLONG)
        if p.is_dir():
            p = p / "config.json"
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.__class__.__name__
        raise InputError(FIELD, str(path), f"a readable config.json file ({reason})") from None
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(FIELD, str(path), f"valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(cfg, dict):
        raise InputError(FIELD, str(path), "a JSON object (the model's config.json)")
    return arch_from_hf_dict(cfg, str(path))
