"""Where an intake comes from on the web: a bundled example, pasted or uploaded YAML, a Hugging
Face config.json (translated into the intake's model fields, so a saved revision holds the
architecture itself and not the path of a file that is gone), or the hidden state of the page."""

from __future__ import annotations

import json
import os
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

import yaml

from ..arch.hf_config import arch_from_hf_dict
from ..errors import InputError

EXAMPLES_ENV = "WKC_EXAMPLES_DIR"
MAX_YAML_NODES = 20_000


def examples_dir() -> Path | None:
    """$WKC_EXAMPLES_DIR, else the repository's examples/ beside the source tree."""
    env = os.environ.get(EXAMPLES_ENV)
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[3] / "examples")
    return next((p for p in candidates if p.is_dir()), None)


def example_names() -> list[str]:
    folder = examples_dir()
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder else []


def example_intake(name: str) -> dict[str, Any]:
    folder = examples_dir()
    if folder is None or name not in example_names():
        raise InputError("example", name, f"one of: {', '.join(example_names()) or 'none (no examples folder)'}")
    return parse_yaml_text((folder / f"{name}.yaml").read_text(encoding="utf-8"), "example")


def _count_nodes(node: Any, budget: list[int]) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise InputError("yaml", "(too large)", f"at most {MAX_YAML_NODES:,} values (aliases counted expanded)")
    if isinstance(node, dict):
        for k, v in node.items():
            _count_nodes(k, budget)
            _count_nodes(v, budget)
    elif isinstance(node, list):
        for v in node:
            _count_nodes(v, budget)


def jsonable(data: dict[str, Any]) -> dict[str, Any]:
    """The intake as JSON holds it: YAML dates and times become ISO text (the models read it back),
    so the page's state, the cache key and a stored revision all see the same mapping."""
    def iso(value: Any) -> str:
        if isinstance(value, date | datetime | time):
            return value.isoformat()
        raise InputError("yaml", type(value).__name__, "plain YAML values (text, numbers, lists, mappings, dates)")
    result: dict[str, Any] = json.loads(json.dumps(data, default=iso))
    return result


def parse_yaml_text(text: str, field: str = "yaml") -> dict[str, Any]:
    """A YAML intake from text: one mapping, bounded in size (an alias bomb is refused)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InputError(field, "(text)", f"well-formed YAML (parse error{where})") from None
    except RecursionError:
        raise InputError(field, "(text)", "YAML nested less deeply") from None
    if not isinstance(data, dict):
        raise InputError(field, type(data).__name__, "a YAML mapping with a 'kind' key (training, inference, hpc)")
    _count_nodes(data, [MAX_YAML_NODES])
    return jsonable(data)


def model_from_hf(raw: bytes, origin: str) -> tuple[dict[str, Any], list[str]]:
    """(the intake's `model` section, notes) from an uploaded config.json."""
    try:
        cfg = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError("hf_config", origin, f"a JSON config.json ({exc.__class__.__name__})") from None
    if not isinstance(cfg, dict):
        raise InputError("hf_config", origin, "a JSON object (a Hugging Face config.json)")
    arch = arch_from_hf_dict(cfg, origin)
    model: dict[str, Any] = {"name": arch.name, "layers": arch.layers, "hidden_size": arch.hidden_size,
                             "attention_heads": arch.attention_heads, "kv_heads": arch.kv_heads,
                             "head_dim": arch.head_dim, "ffn_hidden_size": arch.ffn_hidden_size,
                             "vocab_size": arch.vocab_size, "mlp": arch.mlp, "tied_embeddings": arch.tied_embeddings}
    if arch.moe_experts:
        model["moe"] = {"experts": arch.moe_experts, "top_k": arch.moe_top_k,
                        "expert_ffn_hidden_size": arch.moe_ffn_hidden_size, "shared_experts": arch.moe_shared_experts,
                        "dense_layers": arch.moe_dense_layers, "layer_interval": arch.moe_layer_interval}
        if arch.moe_shared_ffn_hidden_size:
            model["moe"]["shared_expert_ffn_hidden_size"] = arch.moe_shared_ffn_hidden_size
    if arch.mla_kv_lora_rank:
        model["mla"] = {"q_lora_rank": arch.mla_q_lora_rank, "kv_lora_rank": arch.mla_kv_lora_rank,
                        "qk_nope_head_dim": arch.mla_qk_nope_head_dim, "qk_rope_head_dim": arch.mla_qk_rope_head_dim,
                        "v_head_dim": arch.mla_v_head_dim}
    if arch.sliding_window:
        model["sliding_window"], model["sliding_window_layers"] = arch.sliding_window, arch.sliding_window_layers
    notes = [f"model read from {origin}: {arch.source}"]
    if arch.mtp_layers:
        notes.append(f"not carried into the intake: {arch.mtp_layers} multi-token-prediction layer(s) "
                     "(no intake field; give model.hf_config in a YAML file to keep them)")
    if arch.weight_format:
        notes.append(f"not carried into the intake: checkpoint weight format {arch.weight_format} "
                     f"({arch.weight_format_scope}); set serving.weights for inference")
    return model, notes


def state_from_json(intake_json: str, pins_json: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The page's hidden state (the intake and its pins, as JSON) back into mappings."""
    try:
        intake = json.loads(intake_json or "{}")
        pins = json.loads(pins_json or "{}")
    except json.JSONDecodeError:
        raise InputError("state", "(page state)", "the JSON the page sent; reload the page") from None
    if not isinstance(intake, dict) or not isinstance(pins, dict):
        raise InputError("state", "(page state)", "an intake mapping and a pins mapping; reload the page")
    return intake, pins


__all__ = ["example_intake", "example_names", "examples_dir", "jsonable", "model_from_hf", "parse_yaml_text",
           "state_from_json"]
