"""A published training record -> the memory model's inputs (ModelArch, TrainingSetup, Layout) and
the HBM of its GPU, read from the record's own fields only.

Used to check the invariant that a run that ran is judged to fit (tests/unit/test_memory_fit_records.py).
Every value the record does not state is filled by a named rule and listed in `notes`:
- layout: tp, pp, cp, ep, etp, vp = 1 where not stated; an FSDP row (`fsdp` a strategy name or a
  shard count) with no dp has dp = the GPU count. `fsdp: FULL_SHARD` (PyTorch FSDP) or a shard
  count > 0 (FSDP2, Megatron-FSDP) = ZeRO-3, `SHARD_GRAD_OP` = ZeRO-2 (torch.distributed.fsdp
  ShardingStrategy docs); `zero_stage` as stated; otherwise the framework profile's default
  (Megatron-Core recipes: the distributed optimizer = ZeRO-1; a source family's own rule in
  validation/rules.py wins, e.g. 2021 Megatron-LM had no distributed optimizer).
- recompute: the record's text ("full" -> full, "selective (attention core)" -> selective,
  "selective op"/"per-op" -> op_selective, "none"); not stated -> the source family's rule, else
  the framework profile's default.
- precision: FP8-MX -> mxfp8, NVFP4 -> nvfp4, any other FP8 -> fp8 (per-tensor), else bf16.
- model: the record's layers/hidden/heads/kv_heads/ffn/vocab/experts. Where a catalog preset has the
  family (its id starts with the record's family) and the same layers, hidden size, heads and
  expert count, its remaining fields (MLA ranks, shared
  experts, leading dense layers, vocabulary, tied embeddings) are taken from it. Otherwise gated
  MLP except for GPT/MPT families; tied embeddings where the record's params_b matches the tied
  count better than the untied one.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..arch.counts import param_counts
from ..arch.model import ModelArch
from ..arch.presets import list_presets, preset_arch
from ..catalog.frameworks import framework_profile
from ..catalog.loader import load_catalog
from ..errors import InputError
from ..perf.framework import FrameworkProfile
from ..perf.layout import Layout, TrainingSetup
from ..perf.memory import training_memory_bytes
from .rules import GROUP_RULES, group_of


@dataclass(frozen=True, kw_only=True)
class MemoryCase:
    id: str
    arch: ModelArch
    setup: TrainingSetup
    layout: Layout
    hbm_bytes: float
    accelerator: str
    framework: FrameworkProfile
    recompute_codes: tuple[int, ...]      # the stated one, or every mode the framework offers
    notes: tuple[str, ...]


class NotExpressible(Exception):
    """The record lacks what the memory check needs (the reason is the message)."""


# A record's free-text `framework` -> a profile id: the first keyword found, in this order (the
# ZeRO engine before the model code: "Megatron-LM + DeepSpeed ZeRO-3" runs DeepSpeed's ZeRO).
FRAMEWORK_KEYWORDS: tuple[tuple[str, str], ...] = (
    ("composer", "llm-foundry"), ("llm-foundry", "llm-foundry"), ("torchtitan", "torchtitan"),
    ("deepspeed", "deepspeed"), ("maxtext", "maxtext"), ("nemo", "nemo"), ("megatron-bridge", "nemo"),
    ("megatron", "megatron"), ("fsdp", "fsdp"))


def framework_of_text(text: str | None) -> FrameworkProfile:
    """The profile a record's framework text names; the generic profile when none matches."""
    t = (text or "").lower()
    for keyword, pid in FRAMEWORK_KEYWORDS:
        if keyword in t:
            return framework_profile(pid)
    return framework_profile("generic")


def _int(v: Any, default: int) -> int:
    return default if v is None else int(v)


def states_layout_and_micro_batch(rec: dict[str, Any]) -> bool:
    """The records the invariant covers: a micro-batch, and a dp degree or an FSDP strategy."""
    p, b = rec.get("parallelism") or {}, rec.get("batch") or {}
    return b.get("micro_batch") is not None and bool(p.get("dp") or p.get("fsdp"))


def memory_case(rec: dict[str, Any]) -> MemoryCase:
    """The memory model's inputs for one record; NotExpressible when a needed field is missing."""
    notes: list[str] = []
    if not states_layout_and_micro_batch(rec):
        raise NotExpressible("no micro-batch or no data-parallel layout stated")
    described = " ".join(str(rec.get(k) or "") for k in ("id", "framework", "notes")).lower()
    if "lora" in described:
        raise NotExpressible("LoRA fine-tuning: frozen base weights hold no gradients or optimizer "
                             "state (training.finetune is not modeled)")
    fw = framework_of_text(rec.get("framework"))
    notes.append(f"framework profile {fw.id} (record: {rec.get('framework')!r})")
    rule = GROUP_RULES.get(group_of(rec["id"]))
    p, b = rec["parallelism"], rec["batch"]
    gpus = _int(rec["hardware"].get("count"), 0)
    mp = p.get("model_parallel_size")
    tp = _int(p.get("tp"), 8 if mp and mp >= 8 else 1)
    pp = _int(p.get("pp"), mp // tp if mp else 1)
    cp = _int(p.get("cp"), 1)
    fsdp = p.get("fsdp")
    dp = _int(p.get("dp"), gpus // (tp * pp * cp))
    if tp * pp * cp * dp != gpus:
        raise NotExpressible(f"tp*pp*cp*dp = {tp * pp * cp * dp} != {gpus} GPUs")
    zero = _zero(p, fsdp, rule.zero if rule else fw.default_zero_stage, notes)
    recompute = _recompute(rec.get("recompute"), rule.recompute_default if rule else fw.default_recompute, notes)
    codes = (recompute,) if rec.get("recompute") else fw.recompute_modes
    sp = p.get("sequence_parallel")
    if sp is None:
        sp = tp > 1 and (rule.sequence_parallel if rule else fw.sequence_parallel)
    vp = _int(p.get("vp"), 1)
    layout = Layout.of(tp=tp, pp=pp, dp=dp, cp=cp, ep=_int(p.get("ep"), 1), etp=_int(p.get("etp"), 1), vp=vp,
                       mbs=int(b["micro_batch"]), recompute=recompute, sp=bool(sp), zero=zero)
    gbs = b.get("global_batch_seqs") or dp * (b.get("local_batch_per_dp_rank") or b["micro_batch"])
    flash = rule.flash_attention if rule else fw.flash_attention
    setup = TrainingSetup(seq_len=int(rec["model"]["seq_len"]), global_batch_size=int(gbs),
                          precision=_precision(rec.get("precision")), flash_attention=flash, framework=fw)
    acc_name = str(rec["hardware"].get("accelerator") or "")
    try:
        acc = load_catalog().accelerator(acc_name)
    except InputError:
        raise NotExpressible(f"accelerator {acc_name!r} not in the catalog") from None
    return MemoryCase(id=rec["id"], arch=_arch(rec["model"], notes), setup=setup, layout=layout,
                      hbm_bytes=acc.process_memory_bytes, accelerator=acc.id, framework=fw, recompute_codes=codes,
                      notes=tuple(notes))


def _zero(p: dict[str, Any], fsdp: Any, default: int, notes: list[str]) -> int:
    if p.get("zero_stage") is not None:
        return int(p["zero_stage"])
    if isinstance(fsdp, str):
        return {"FULL_SHARD": 3, "HYBRID_SHARD": 3, "SHARD_GRAD_OP": 2, "NO_SHARD": 0}[fsdp.upper()]
    if fsdp is True:
        return 2
    if isinstance(fsdp, int) and fsdp > 0:
        return 3
    notes.append(f"ZeRO stage {default} (framework default; not stated)")
    return default


def _recompute(text: str | None, default: int, notes: list[str]) -> int:
    t = (text or "").lower()
    if not t:
        notes.append("recompute not stated: judged with each mode the framework offers (the planner's axis)")
        return default
    if t.startswith("full"):
        return 2
    if t.startswith("none") or t.startswith("no "):
        return 0
    if "op" in t or "layer" in t or "every n" in t:
        return 3
    if t.startswith("selective"):
        return 1
    raise NotExpressible(f"recompute {text!r} not understood")


def _precision(text: str | None) -> str:
    t = (text or "").lower()
    if "nvfp4" in t:
        return "nvfp4"
    if "fp8-mx" in t or "mxfp8" in t:
        return "mxfp8"
    return "fp8" if ("fp8" in t or "float8" in t) else "bf16"


def _matching_preset(m: dict[str, Any]) -> ModelArch | None:
    experts = int(m.get("moe_experts") or 0)
    family = re.match(r"[a-z]+\d*", str(m.get("family") or "").lower())
    if family is None:
        return None
    for pid in list_presets():
        if not pid.startswith(family.group(0)):
            continue
        a = preset_arch(pid)
        if (a.layers, a.hidden_size, a.attention_heads, a.moe_experts) == (
                int(m["layers"]), int(m["hidden"]), int(m["heads"]), experts):
            return a
    return None


def _arch(m: dict[str, Any], notes: list[str]) -> ModelArch:
    if not m.get("layers") or not m.get("hidden") or not m.get("heads"):
        raise NotExpressible("architecture (layers/hidden/heads) not given")
    base = _matching_preset(m)
    fam = str(m.get("family") or "").lower()
    h, heads = int(m["hidden"]), int(m["heads"])
    moe = m.get("arch") == "moe"
    values: dict[str, Any] = base.model_dump() if base else {
        "head_dim": h // heads, "mlp": "gelu" if fam.startswith(("gpt", "mpt")) else "swiglu",
        "vocab_size": 51200, "tied_embeddings": False, "source": "record"}
    if base:
        notes.append(f"architecture details from preset {base.name} (same layers, hidden, heads, experts)")
    values |= {"name": m["name"], "layers": int(m["layers"]), "hidden_size": h, "attention_heads": heads}
    if m.get("kv_heads"):
        values["kv_heads"] = int(m["kv_heads"])
    values.setdefault("kv_heads", heads)
    if m.get("vocab"):
        values["vocab_size"] = int(m["vocab"])
    elif not base:
        notes.append("vocab 51200 (not stated)")
    if moe:
        values |= {"moe_experts": int(m["moe_experts"]), "moe_top_k": int(m["moe_topk"])}
        if m.get("moe_ffn"):
            values["moe_ffn_hidden_size"] = int(m["moe_ffn"])
        elif not base:
            values["moe_ffn_hidden_size"] = int(m["ffn"])
        if m.get("ffn") and (not base or base.ffn_hidden_size):
            values["ffn_hidden_size"] = int(m["ffn"])
    elif m.get("ffn"):
        values["ffn_hidden_size"] = int(m["ffn"])
    else:
        values.setdefault("ffn_hidden_size", 4 * h)
    arch = ModelArch(**values)
    if not base and m.get("params_b"):
        arch = _tied_if_closer(arch, float(m["params_b"]) * 1e9, notes)
    return arch


def _tied_if_closer(arch: ModelArch, stated: float, notes: list[str]) -> ModelArch:
    tied = arch.model_copy(update={"tied_embeddings": True})
    if abs(param_counts(tied).total - stated) < abs(param_counts(arch).total - stated):
        notes.append("tied embeddings (the stated parameter count matches the tied model)")
        return tied
    return arch


def load_training_records(calibration_dir: Path) -> list[dict[str, Any]]:
    """Every record of training_public.yaml and training_added.yaml."""
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: list[dict[str, Any]] = []
    for name in ("training_public.yaml", "training_added.yaml"):
        with (Path(calibration_dir) / name).open(encoding="utf-8") as fh:
            out += list(yaml.load(fh, Loader=loader)["records"])
    return out


def memory_cases(records: list[dict[str, Any]]) -> tuple[list[MemoryCase], list[tuple[str, str]]]:
    """The records that state a layout and a micro-batch, as cases; those that cannot be expressed
    as (id, reason)."""
    cases: list[MemoryCase] = []
    skipped: list[tuple[str, str]] = []
    for rec in records:
        if not states_layout_and_micro_batch(rec):
            continue
        try:
            cases.append(memory_case(rec))
        except NotExpressible as exc:
            skipped.append((str(rec["id"]), str(exc)))
    return cases, skipped


def least_memory(case: MemoryCase) -> tuple[dict[str, float], int]:
    """The memory terms (bytes per GPU, the most loaded rank) under the case's recompute modes that
    needs the least, and that mode's code."""
    best: tuple[dict[str, float], int] | None = None
    for code in case.recompute_codes:
        layout = dataclasses.replace(case.layout, recompute=np.asarray(code, dtype=np.int64))
        terms = {k: float(v) for k, v in training_memory_bytes(case.arch, case.setup, layout).items()}
        if best is None or terms["total"] < best[0]["total"]:
            best = (terms, code)
    assert best is not None
    return best
