"""A published record's model -> the intake's `model` (the preset a user would pick, else the fields).

The rules are data (validation/data/training_sources.yaml), never record ids:

- `not_expressible_models`: a model whose name or family holds one of these keys needs a feature
  the tool lacks (hybrid state-space layers, linear attention, a vision tower); NotCompiled names it.
- The name's qualifiers in parentheses ("DeepSeekV3 (tokendrop)", "(w/o MTP)") are taken off and
  looked up in `qualifiers`: the model fields and run settings each implies.
- The rest of the name is looked up in `models` (preset -> the names records use).
- Otherwise the record's own fields, with what its `families` entry adds (vocabulary, MLP kind,
  head width); a mixture of experts only for a family whose MoE the fields describe whole
  (`moe_from_fields`: every layer routed, no shared expert, plain attention).

Names and qualifiers match on their letters and digits alone, lower-cased ("LLAMA3.1_405B",
"Llama 3.1 405B" and "llama-3.1-405b" are one name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


class NotCompiled(Exception):
    """A record that is not compiled; the message says why (not a run, or the missing feature)."""


def name_key(text: str) -> str:
    """The matching key of a model name or qualifier: lower-case letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


@dataclass(frozen=True)
class RecordModel:
    """The intake's model, the run settings the name implies, and what was assumed for it."""

    model: dict[str, Any]
    intake: dict[str, Any] = field(default_factory=dict)     # dotted intake keys the qualifiers set
    notes: tuple[str, ...] = ()


def _split(name: str) -> tuple[str, list[str]]:
    """('DeepSeekV3', ['tokendrop']) of 'DeepSeekV3 (tokendrop)'."""
    qualifiers = re.findall(r"\(([^()]*)\)", name)
    return re.sub(r"\([^()]*\)", " ", name).strip(), qualifiers


def _preset(base: str, data: dict[str, Any]) -> str | None:
    key = name_key(base)
    for preset, names in data["models"].items():
        if key in {name_key(n) for n in names}:
            return str(preset)
    return None


def record_model(rec: dict[str, Any], data: dict[str, Any]) -> RecordModel:
    """The model of one record under the rules of `data` (training_sources.yaml), or NotCompiled."""
    m = rec["model"]
    name, family = str(m.get("name") or ""), str(m.get("family") or "")
    for key, reason in data["not_expressible_models"].items():
        if key in name_key(name) or key == name_key(family):
            raise NotCompiled(str(reason))
    base, qualifiers = _split(name)
    preset = _preset(base, data)
    if preset is None:
        model, notes = _from_fields(m, data)
        return RecordModel(model=model, notes=tuple(notes))
    model = {"preset": preset}
    intake: dict[str, Any] = {}
    notes = []
    known = {name_key(k): v for k, v in data["qualifiers"].items()}
    for q in qualifiers:
        rule = known.get(name_key(q))
        if rule is None:
            notes.append(f"model qualifier ({q}) not understood: the {preset} preset as it is")
            continue
        model |= rule.get("model") or {}
        intake |= rule.get("intake") or {}
        if rule.get("why"):
            notes.append(f"({q}): {rule['why']}")
    return RecordModel(model=model, intake=intake, notes=tuple(notes))


def _family(m: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    fams = {name_key(k): v for k, v in data["families"].items()}
    return dict(fams.get(name_key(str(m.get("family") or "")), {}))


def _from_fields(m: dict[str, Any], data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The intake's model from the record's fields and its family's defaults, and what was filled in."""
    if not m.get("layers") or not m.get("hidden") or not m.get("heads"):
        raise NotCompiled("architecture (layers/hidden/heads) not stated by the source")
    fam = _family(m, data)
    out: dict[str, Any] = {"name": str(m.get("name") or ""), "layers": int(m["layers"]),
                           "hidden_size": int(m["hidden"]), "attention_heads": int(m["heads"])}
    notes = [] if m.get("ffn") else ["ffn = 4h (GPT convention; not stated)"]
    added: list[str] = []
    if m.get("kv_heads"):
        out["kv_heads"] = int(m["kv_heads"])
    out["ffn_hidden_size"] = int(m["ffn"]) if m.get("ffn") else 4 * int(m["hidden"])
    vocab = m.get("vocab") or fam.get("vocab_size")
    if vocab is None:
        raise NotCompiled("vocabulary size not stated and no family default")
    out["vocab_size"] = int(vocab)
    if not m.get("vocab"):
        added.append(f"vocab {vocab}")
    for key in ("mlp", "tied_embeddings", "head_dim"):
        if key in fam:
            out[key] = fam[key]
    if "head_dim" in fam:
        added.append(f"head_dim {fam['head_dim']}")
    if m.get("arch") == "moe":
        if not fam.get("moe_from_fields"):
            raise NotCompiled(f"missing feature: a catalog preset for {m.get('name')!r} (the record does not "
                              "state its shared experts, dense layers or attention kind)")
        if not (m.get("moe_experts") and m.get("moe_topk") and m.get("moe_ffn")):
            raise NotCompiled("MoE expert count, top-k or expert width not stated by the source")
        out["moe"] = {"experts": int(m["moe_experts"]), "top_k": int(m["moe_topk"]),
                      "expert_ffn_hidden_size": int(m["moe_ffn"])}
        added.append("every layer routed, no shared expert")
    if added:
        notes.append(f"{', '.join(added)} ({fam.get('why')})")
    return out, notes
