"""Intake -> ModelArch: a preset, a local HF config.json, or the fields; every value traced.

Precedence (highest first): a field the user gave (`given`) > the preset or config.json
(`derived`, formula "preset <id> (<source>)") > a named fill rule (`assumed`, with why).
Without a preset or config, layers, hidden_size and attention_heads are required, unless only
`params` is known: then the shape-from-params rule below builds a dense GPT (all `assumed`).
Provenance paths are the ModelArch field names under `path` ("model.layers", "model.moe_experts").
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationError

from ..errors import Described, InputError
from ..intake.common import ModelIntake
from ..intake.limits import MAX_PARAMS
from ..intake.limits import PARAMS as PARAMS_WHY
from ..intake.problems import input_error
from ..provenance import Trace
from ..units import format_count
from .counts import attention_params, mlp_params, param_counts
from .hf_config import load_hf_config
from .model import GATED_DELTA, GATED_MLPS, MAMBA, MOE_BLOCK, ModelArch
from .presets import preset_arch, preset_source

_CORE = ("layers", "hidden_size", "attention_heads", "kv_heads", "head_dim", "ffn_hidden_size",
         "vocab_size", "mlp", "tied_embeddings")
_MOE = {"experts": "moe_experts", "top_k": "moe_top_k", "expert_ffn_hidden_size": "moe_ffn_hidden_size",
        "shared_experts": "moe_shared_experts", "shared_expert_ffn_hidden_size": "moe_shared_ffn_hidden_size",
        "dense_layers": "moe_dense_layers", "layer_interval": "moe_layer_interval", "latent_size": "moe_latent_size"}
_MLA = {"q_lora_rank": "mla_q_lora_rank", "kv_lora_rank": "mla_kv_lora_rank",
        "qk_nope_head_dim": "mla_qk_nope_head_dim", "qk_rope_head_dim": "mla_qk_rope_head_dim",
        "v_head_dim": "mla_v_head_dim"}
_HYBRID = {"pattern": "hybrid_pattern", "mamba_heads": "mamba_heads", "mamba_head_dim": "mamba_head_dim",
           "chunk_size": "mamba_chunk_size",
           "state_dim": "mamba_state_dim", "groups": "mamba_groups", "conv_kernel": "mamba_conv_kernel"}
_SPARSE = {"topk": "sparse_attention_topk", "indexer_heads": "indexer_heads",
           "indexer_head_dim": "indexer_head_dim"}
_SCALARS = (*_CORE, "sliding_window", "sliding_window_layers", "mtp_layers", "attention_output_gate", "glu_clamp")

# Given params that differ from the resolved architecture's total by more than this are a
# contradiction in the input, not rounding ("70B" for Llama 2 70B's 68.98B is 1.5% off).
PARAMS_TOLERANCE = 0.10

# Shape-from-params rule: Narayanan et al. 2021 (arXiv:2104.04473) Table 1, the Megatron-LM GPT
# family (GeLU MLP of 4h, MHA, tied embeddings, vocabulary 51,200 per Sec 5.1):
# (parameters, layers, hidden, heads). The row nearest in log(params) gives the aspect ratio
# hidden/layers and the head size; hidden then follows from params ~ 12 * layers * hidden^2.
MEGATRON_TABLE1 = ((1.7e9, 24, 2304, 24), (3.6e9, 30, 3072, 32), (7.5e9, 36, 4096, 32),
                   (18.4e9, 40, 6144, 48), (39.1e9, 48, 8192, 64), (76.1e9, 60, 10240, 80),
                   (145.6e9, 80, 12288, 96), (310.1e9, 96, 16384, 128), (529.6e9, 105, 20480, 128),
                   (1008.0e9, 128, 25600, 160))
MEGATRON_VOCAB = 51200
SHAPE_RULE = ("shape from params: aspect ratio hidden/layers and head size of the nearest Megatron-LM "
              "GPT (Narayanan et al. 2021 Table 1); GeLU MLP 4h, MHA, tied embeddings, vocab 51,200")


def _given_fields(intake: ModelIntake) -> dict[str, Any]:
    """The ModelArch fields the user set, flattening moe/mla (only fields explicitly written)."""
    given = {f: getattr(intake, f) for f in _SCALARS if getattr(intake, f) is not None}
    if intake.moe is not None:
        given |= {_MOE[k]: getattr(intake.moe, k) for k in intake.moe.model_fields_set}
    if intake.mla is not None:
        given |= {_MLA[k]: getattr(intake.mla, k) for k in intake.mla.model_fields_set}
    if intake.sparse_attention is not None:
        given |= {_SPARSE[k]: getattr(intake.sparse_attention, k) for k in _SPARSE}
    if intake.hybrid is not None:   # every field: a pattern without the Mamba shape is not a model
        given |= {_HYBRID[k]: getattr(intake.hybrid, k) for k in _HYBRID}
        given.setdefault("layers", len(intake.hybrid.pattern))
    return {k: v for k, v in given.items() if v is not None}


def _base(intake: ModelIntake, path: str) -> tuple[ModelArch | None, str]:
    if intake.preset is not None and intake.hf_config is not None:
        raise InputError(f"{path}.hf_config", str(intake.hf_config),
                         "give either preset or hf_config, not both")
    if intake.preset is not None:
        arch = preset_arch(intake.preset, f"{path}.preset")
        return arch, f"preset {intake.preset} ({preset_source(intake.preset)})"
    if intake.hf_config is not None:
        return load_hf_config(intake.hf_config), f"hf config.json {intake.hf_config}"
    return None, ""


def _round_to(x: float, step: int) -> int:
    return max(step, step * round(x / step))


def shape_from_params(params: float, layers: int | None = None, hidden: int | None = None,
                      heads: int | None = None, vocab: int = MEGATRON_VOCAB) -> tuple[int, int, int]:
    """(layers, hidden, heads) of a dense GPT with about `params` parameters (SHAPE_RULE)."""
    row = min(MEGATRON_TABLE1, key=lambda r: abs(math.log(params / r[0])))
    ratio, head_dim = row[2] / row[1], row[2] // row[3]
    if hidden is None:
        if layers is None:
            hidden = _round_to(ratio * (params / (12 * ratio**2)) ** (1 / 3), head_dim)
        else:
            hidden = _round_to(math.sqrt(params / (12 * layers)), head_dim)
    heads = heads or max(1, hidden // head_dim)
    if layers is None:
        probe = ModelArch(name="probe", layers=1, hidden_size=hidden, attention_heads=heads, kv_heads=heads,
                          head_dim=hidden // heads, ffn_hidden_size=4 * hidden, vocab_size=vocab)
        per_layer = attention_params(probe) + mlp_params(probe, 4 * hidden) + 2 * hidden
        layers = max(1, round((params - vocab * hidden - hidden) / per_layer))
    return layers, hidden, heads


# A gated MLP's width is ~8/3 x hidden (LLaMA: 2/3 of 4h, rounded up); a GeLU MLP's is 4 x hidden (GPT).
# Between the two, this ratio tells them apart: LLaMA 2 13B 2.70, LLaMA 3 8B 3.5, Mistral 7B 3.5, GPT-3 4.0.
GATED_WIDTH_MAX = 3.75
# The vocabulary assumed for a gated model that gives none: LLaMA-3's (meta-llama/Meta-Llama-3-8B
# config.json, the llama3-8b preset). LLaMA-2's 32,000 undercounts every current gated family's head.
GATED_VOCAB = 128256


def _mlp_by_shape(values: dict[str, Any]) -> tuple[str, str]:
    """The MLP kind the given shape points to, and why (no mlp given)."""
    hidden, ffn = values["hidden_size"], values.get("ffn_hidden_size")
    if ffn:
        ratio = ffn / hidden
        if ratio < GATED_WIDTH_MAX:
            return "swiglu", (f"gated SwiGLU MLP assumed: ffn_hidden_size / hidden_size = {ratio:.2f}, the ~8/3 to "
                              "3.5 x hidden of gated MLPs (LLaMA, Mistral, Qwen); a GeLU MLP is 4 x hidden (GPT)")
        return "gelu", f"GeLU MLP assumed: ffn_hidden_size / hidden_size = {ratio:.2f}, the 4 x hidden of GPT's"
    heads, kv = values["attention_heads"], values.get("kv_heads")
    if kv is not None and kv < heads:
        return "swiglu", ("gated SwiGLU MLP assumed: grouped-query attention (kv_heads < attention_heads) is the "
                          "LLaMA-2/3, Mistral and Qwen families', whose MLPs are gated")
    return "gelu", "GeLU MLP assumed (GPT convention; no mlp, ffn_hidden_size or grouped-query kv_heads given)"


def _fill(values: dict[str, Any], trace: Trace, path: str, params_rule: bool) -> None:
    """Fill what is missing by named rules, each an assumption with its reason."""
    def assume(name: str, value: Any, why: str) -> None:
        if values.get(name) is None:
            values[name] = trace.assumed(f"{path}.{name}", value, SHAPE_RULE if params_rule else why)

    heads, hidden = values["attention_heads"], values["hidden_size"]
    assume("kv_heads", heads, "MHA assumed: no kv_heads given (kv_heads = attention_heads)")
    if values.get("head_dim") is None and hidden % heads:
        raise InputError(f"{path}.hidden_size", hidden,
                         f"a multiple of attention_heads ({heads}), or give head_dim")
    assume("head_dim", hidden // heads, "head_dim = hidden_size / attention_heads (no head_dim given)")
    mlp, why = _mlp_by_shape(values)
    assume("mlp", mlp, why)
    gated = values["mlp"] in GATED_MLPS
    ffn = 256 * math.ceil(8 * hidden / 3 / 256) if gated else 4 * hidden
    assume("ffn_hidden_size", ffn, "8/3 x hidden rounded up to a multiple of 256 (LLaMA SwiGLU convention)"
           if gated else "4 x hidden (GPT convention; Vaswani et al. 2017)")
    assume("vocab_size", GATED_VOCAB if gated else MEGATRON_VOCAB,
           "128,256 (the LLaMA-3 tokenizer, preset llama3-8b; gated families since use 128k-256k entries, e.g. "
           "Qwen3 151,936, DeepSeek-V3 129,280): give vocab_size, the head and embedding scale with it" if gated
           else "51,200 (Megatron-LM GPT, Narayanan 2021)")
    assume("tied_embeddings", params_rule, "untied input and output embeddings assumed")


def _from_fields(intake: ModelIntake, given: dict[str, Any], trace: Trace, path: str) -> dict[str, Any]:
    values = dict(given)
    for name, value in given.items():
        trace.given(f"{path}.{name}", value)
    needed = ("layers", "hidden_size", "attention_heads")
    params_rule = any(values.get(k) is None for k in needed)
    if params_rule:
        if intake.params is None or intake.params <= 0:
            missing = next(k for k in needed if values.get(k) is None)
            raise InputError(f"{path}.{missing}", None,
                             "required without a preset or hf_config (or give params, e.g. 1T)")
        vocab = values.get("vocab_size") or MEGATRON_VOCAB
        shape = shape_from_params(intake.params, values.get("layers"), values.get("hidden_size"),
                                  values.get("attention_heads"), vocab)
        for name, value in zip(needed, shape, strict=True):
            if values.get(name) is None:
                values[name] = trace.assumed(f"{path}.{name}", value, SHAPE_RULE)
    _fill(values, trace, path, params_rule)
    if values.get("sliding_window") and values.get("sliding_window_layers") is None:
        values["sliding_window_layers"] = trace.assumed(
            f"{path}.sliding_window_layers", values["layers"],
            "every layer uses the window (Mistral 7B convention; no sliding_window_layers given)")
    values["name"] = intake.name or (f"dense GPT {format_count(intake.params)} (shape from params)"
                                     if params_rule and intake.params else "custom model")
    values["source"] = SHAPE_RULE if params_rule else "given fields"
    return {k: v for k, v in values.items() if v is not None}


def _from_base(base: ModelArch, formula: str, given: dict[str, Any], trace: Trace,
               path: str) -> dict[str, Any]:
    values = base.model_dump() | given
    rederived: set[str] = set()
    # Shape overridden but not head_dim: keep head_dim = hidden/heads if the base followed it.
    if ({"hidden_size", "attention_heads"} & given.keys() and "head_dim" not in given
            and base.head_dim * base.attention_heads == base.hidden_size):
        heads, hidden = values["attention_heads"], values["hidden_size"]
        if hidden % heads:
            raise InputError(f"{path}.hidden_size", hidden,
                             f"a multiple of attention_heads ({heads}), or give head_dim")
        values["head_dim"] = trace.derived(f"{path}.head_dim", hidden // heads,
                                           "hidden_size / attention_heads")
        rederived.add("head_dim")
    for name in _traced_fields(values):
        if name in given:
            trace.given(f"{path}.{name}", values[name])
        elif name not in rederived:
            trace.derived(f"{path}.{name}", values[name], formula)
    if given:
        values["source"] = f"{base.source}; overridden: {', '.join(sorted(given))}"
    return values


def _traced_fields(values: dict[str, Any]) -> list[str]:
    names = list(_CORE)
    if values.get("moe_experts"):
        names += list(_MOE.values())
    if values.get("mla_kv_lora_rank"):
        names += list(_MLA.values())
    if values.get("sliding_window"):
        names += ["sliding_window", "sliding_window_layers"]
    if values.get("hybrid_pattern"):
        names += list(_HYBRID.values())
    if values.get("sparse_attention_topk"):
        names += list(_SPARSE.values())
    return names + [n for n in ("mtp_layers", "weight_format", "attention_output_gate", "glu_clamp") if values.get(n)]


def _validate(v: dict[str, Any], path: str) -> None:
    """Rules pydantic's per-field bounds cannot express; each names the field and the rule."""
    heads, kv = v["attention_heads"], v["kv_heads"]
    if kv > heads or heads % kv:
        raise InputError(f"{path}.kv_heads", kv, f"a divisor of attention_heads ({heads})")
    if v.get("moe_experts", 0) and not 0 < v.get("moe_top_k", 0) <= v["moe_experts"]:
        raise InputError(f"{path}.moe.top_k", v.get("moe_top_k"), f"1 to moe experts ({v['moe_experts']})")
    if v.get("moe_dense_layers", 0) >= v["layers"] and v.get("moe_experts", 0):
        raise InputError(f"{path}.moe.dense_layers", v["moe_dense_layers"],
                         f"fewer than layers ({v['layers']})")
    pattern = v.get("hybrid_pattern")
    if pattern is not None:
        if len(pattern) != v["layers"]:
            raise InputError(f"{path}.hybrid.pattern", f"{len(pattern)} characters",
                             f"one character per layer ({v['layers']} layers)")
        if (MAMBA in pattern or GATED_DELTA in pattern) and not v.get("mamba_heads", 0):
            raise InputError(f"{path}.hybrid.mamba_heads", v.get("mamba_heads", 0),
                             "at least 1 for a pattern with Mamba-2 or Gated DeltaNet layers (M, G)")
        if MAMBA in pattern and GATED_DELTA in pattern:
            raise InputError(f"{path}.hybrid.pattern", pattern, "one kind of linear mixer: M (Mamba-2) or "
                             "G (Gated DeltaNet), not both")
        if bool(v.get("moe_experts", 0)) != (MOE_BLOCK in pattern):
            raise InputError(f"{path}.moe", v.get("moe_experts", 0),
                             "experts exactly when the hybrid pattern has MoE blocks (E)")
        if v.get("moe_dense_layers", 0) or v.get("moe_layer_interval", 1) != 1:
            raise InputError(f"{path}.moe.dense_layers", v.get("moe_dense_layers", 0),
                             "unset in a hybrid model: its pattern places the MoE blocks (E)")
        if v.get("mla_kv_lora_rank", 0) or v.get("sliding_window", 0):
            raise InputError(f"{path}.hybrid", "with MLA or a sliding window",
                             "a hybrid of Mamba-2 or Gated DeltaNet, GQA attention, MLP and MoE blocks "
                             "(missing feature: the others)")
    window, window_layers = v.get("sliding_window", 0), v.get("sliding_window_layers", 0)
    if window_layers > v["layers"]:
        raise InputError(f"{path}.sliding_window_layers", window_layers, f"at most layers ({v['layers']})")
    if window_layers and not window:
        raise InputError(f"{path}.sliding_window", window,
                         "a window of at least 1 token for sliding_window_layers")
    if v.get("glu_clamp", 0) and v["mlp"] not in GATED_MLPS:
        raise InputError(f"{path}.glu_clamp", v["glu_clamp"], f"0 for a {v['mlp']} MLP: a clamp applies to "
                         f"a gated MLP's inputs ({', '.join(sorted(GATED_MLPS))})")


def resolve_model(intake: ModelIntake, trace: Trace, path: str = "model") -> ModelArch:
    """The resolved architecture, with every field's provenance recorded in `trace`."""
    base, formula = _base(intake, path)
    given = _given_fields(intake)
    if intake.name is not None:
        given["name"] = intake.name
    if base is None:
        given.pop("name", None)
        values = _from_fields(intake, given, trace, path)
    else:
        values = _from_base(base, formula, given, trace, path)
    _validate(values, path)
    try:
        arch = ModelArch(**values)
    except ValidationError as exc:
        raise input_error(exc, None, path) from None
    total = param_counts(arch).total
    if not total <= MAX_PARAMS:
        raise InputError(path, Described(f"a shape of {format_count(total)} parameters"),
                         f"at most {format_count(MAX_PARAMS)} parameters ({PARAMS_WHY})")
    if intake.params is not None:
        trace.given(f"{path}.params", intake.params)
        total = param_counts(arch).total
        if abs(total / intake.params - 1) > PARAMS_TOLERANCE:
            hint = ("too few for the shape-from-params rule: give layers, hidden_size and attention_heads"
                    if arch.source == SHAPE_RULE else "give one or the other")
            raise InputError(f"{path}.params", format_count(intake.params),
                             f"within {PARAMS_TOLERANCE:.0%} of the architecture's total "
                             f"{format_count(total)} parameters; {hint}")
    return arch
