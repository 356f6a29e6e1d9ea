"""A published training run -> the intake a user would write for it (validation through the user's path).

Every record of calibration/training_public.yaml and training_added.yaml becomes a `kind: training`
intake: the model (the catalog preset a user would pick, else the record's fields), the run
(sequence, batch, precision), the accelerator and GPU count, and every parallel degree the record
states. What the record leaves out comes from how its source ran (validation/data/
training_sources.yaml: framework defaults, FLOP definitions, record notes), each listed as a note;
`wkc validate` compiles the intake like any other (validation/training_suite.py), so a record that
validates also compiles. A record that is not a run, or needs a feature the tool lacks, is
`NotCompiled` with the reason.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..arch.resolve import resolve_model
from ..catalog.frameworks import framework_profile
from ..intake.common import ModelIntake
from ..perf.framework import FrameworkProfile
from ..provenance import Trace
from ..units import GIB
from .flops_definitions import DEFINITIONS
from .record_model import NotCompiled as NotCompiled
from .record_model import record_model

DATA = Path(__file__).parent / "data" / "training_sources.yaml"
FILES = ("training_public.yaml", "training_added.yaml")
P = "compute.parallelism."


@dataclass(frozen=True, kw_only=True)
class RecordIntake:
    id: str
    group: str                      # source family (leave-one-family-out holds one out at a time)
    kind: str                       # accelerator generation x dense/moe x precision class
    intake: dict[str, Any]
    notes: tuple[str, ...]          # what the intake fills in that the record does not state
    published_step_time_s: float | None
    published_from: str
    published_days: float | None    # time_to_train records: the whole training, in days
    measured_memory_bytes: float | None


@functools.cache
def sources() -> dict[str, Any]:
    with DATA.open(encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return data


def load_records(calibration_dir: Path) -> list[dict[str, Any]]:
    """The records of both training files, in file order."""
    out: list[dict[str, Any]] = []
    for name in FILES:
        path = Path(calibration_dir) / name
        if not path.is_file():
            raise FileNotFoundError(path)
        with path.open(encoding="utf-8") as fh:
            out += yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["records"]
    return out


def group_of(record_id: str) -> str:
    """The source family of a record: the longest family name its id starts with."""
    families = sorted(sources()["sources"], key=len, reverse=True)
    for g in families:
        if record_id.startswith(g):
            return str(g)
    if record_id.startswith("ibm_"):
        return "ibm_fsdp"
    return record_id.split("_")[0]


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


def _framework(source: dict[str, Any], rec: dict[str, Any], notes: list[str]) -> str:
    """The source family's framework, else the one the record's own `framework` text names (a
    source this file does not know yet: a newer table, another framework)."""
    if "framework" in source:
        return str(source["framework"])
    fw = framework_of_text(rec.get("framework")).id
    notes.append(f"training.framework {fw} (from the record's framework text {rec.get('framework')!r}; "
                 "its source family has no entry in training_sources.yaml)")
    return fw


def _precision(text: str | None, notes: list[str]) -> str:
    t = (text or "").lower()
    if not t:
        notes.append("precision bf16 (not stated)")
        return "bf16"
    if "fp8-mx" in t or "mxfp8" in t:
        return "mxfp8"
    if "mxfp4" in t:
        raise NotCompiled("missing feature: MXFP4 training GEMMs (NVFP4 and MXFP8 are modelled)")
    if "fp4" in t:             # NVFP4, "FP4" in a table's precision column
        return "nvfp4"
    # 128x128 / 1x128 block scales: "blockwise", Megatron-Bridge's FP8-SC (sub-channel)
    if "blockwise" in t or "fp8-sc" in t or "sub-channel" in t or "subchannel" in t:
        return "fp8_blockwise"
    if "fp8" in t or "float8" in t:
        return "fp8"
    if not re.search(r"\b(bf16|bfloat16|fp16|float16|mixed)\b", t):
        notes.append(f"precision {text!r} read as bf16")
    return "bf16"


def _recompute(text: str | None) -> str | None:
    t = (text or "").lower()
    if not t:
        return None
    if t.startswith("varies"):
        raise NotCompiled("recompute varies within the record")
    if t.startswith("full"):
        return "full"
    if not t.startswith("selective"):
        return "none"
    # torchtitan per-op SAC; layer-level selective (every n-th block fully recomputed) has about the
    # same recompute share and is written as per-op selective
    if "op" in t or "layer" in t or "every n" in t:
        return "op_selective"
    return "selective"


def _zero(fsdp: Any) -> int | None:
    if isinstance(fsdp, str):
        return {"full_shard": 3, "shard_grad_op": 2, "hybrid_shard": 3}.get(fsdp.lower())
    if fsdp is True:
        return 2
    if isinstance(fsdp, int) and not isinstance(fsdp, bool) and fsdp > 0:
        return 3
    return None


def _set(intake: dict[str, Any], key: str, value: Any) -> None:
    node = intake
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _get(intake: dict[str, Any], key: str) -> Any:
    node: Any = intake
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _kind(rec: dict[str, Any], precision: str) -> str:
    acc = str(rec["hardware"].get("accelerator") or "").upper()
    gen = ("Blackwell" if re.search(r"\bG?B[23]00\b", acc) else "Hopper" if "H100" in acc or "H200" in acc
           else "Ampere" if "A100" in acc else "other")
    moe = "moe" if rec["model"].get("arch") == "moe" else "dense"
    cls = "bf16" if precision in ("bf16", "fp16") else ("fp4" if precision == "nvfp4" else "fp8")
    return f"{gen} {moe} {cls}"


def record_intake(rec: dict[str, Any]) -> RecordIntake:
    """The intake of one record, or NotCompiled with the reason."""
    rid = rec["id"]
    data = sources()
    quirk = data["records"].get(rid, {})
    if "skip" in quirk:
        raise NotCompiled(quirk["skip"])
    for key, reason in data["not_expressible"].items():
        if key in rid or key in str(rec.get("precision") or "").lower().replace(" ", "_"):
            raise NotCompiled(reason)
    group = group_of(rid)
    source = data["sources"].get(group, {})
    notes: list[str] = []
    p, b, m = rec["parallelism"], rec["batch"], rec["measured"]
    gpus = int(rec["hardware"].get("count") or 0)
    mp = p.get("model_parallel_size")
    tp = p.get("tp") or (8 if mp and mp >= 8 else 1)
    pp = p.get("pp") or (mp // tp if mp else 1)
    if mp and not p.get("tp") and mp > 1:
        notes.append(f"tp 8 (one node), pp {pp}: the source gives only model-parallel size {mp}")
    cp = p.get("cp") or 1
    dp = p.get("dp")
    if not dp or tp * pp * cp * dp != gpus:
        raise NotCompiled(f"layout tp x pp x cp x dp does not match the {gpus} GPUs (or dp not given)")
    precision = _precision(rec.get("precision"), notes)
    rm = record_model(rec, data)
    notes += rm.notes
    intake: dict[str, Any] = {"kind": "training", "name": rid, "model": rm.model,
                              "training": {"seq_len": int(rec["model"]["seq_len"]), "precision": precision,
                                           "framework": _framework(source, rec, notes)},
                              "compute": {"accelerator": str(rec["hardware"].get("accelerator") or ""),
                                          "gpus": gpus, "parallelism": {"tp": tp, "pp": pp, "dp": dp, "cp": cp}}}
    par = intake["compute"]["parallelism"]
    for name in ("ep", "etp", "vp"):
        if p.get(name):
            par[name] = int(p[name])
    if p.get("sequence_parallel") is not None:
        par["sequence_parallel"] = bool(p["sequence_parallel"])
    if (zero := _zero(p.get("fsdp"))) is not None:
        par["zero_stage"] = zero
    if b.get("micro_batch"):
        par["micro_batch_size"] = int(b["micro_batch"])
    if (rc := _recompute(rec.get("recompute"))) is not None:
        par["recompute"] = rc
    gbs = b.get("global_batch_seqs")
    if gbs is None:
        local = b.get("local_batch_per_dp_rank") or b.get("micro_batch") or 1
        gbs = dp * local
        notes.append(f"global batch = dp x {local} sequences per rank (no gradient accumulation)")
    intake["training"]["global_batch_size"] = int(gbs)
    tokens = m.get("train_tokens")
    intake["training"]["tokens"] = float(tokens) if tokens else 1e12
    named = f"{rid} {rec.get('framework') or ''}".lower()
    method = {k: v for name, keys in (data.get("methods") or {}).items() if name in named for k, v in keys.items()}
    for key, value in {**method, **rm.intake, **(quirk.get("intake") or {})}.items():
        _set(intake, key, value)
    if quirk.get("why"):
        notes.append(str(quirk["why"]))
    applies = {None: True, "moe": rec["model"].get("arch") == "moe", "pipelined": pp > 1}
    for key, d in (source.get("defaults") or {}).items():
        if d.get("applies_to") not in applies:
            # a slip in our own data file, not in the record: loud, never a quietly skipped record
            raise ValueError(f"training_sources.yaml default {key}: applies_to {d['applies_to']!r} is none of "
                             f"{sorted(k for k in applies if k)}")
        if not applies[d.get("applies_to")]:
            continue
        if _get(intake, key) is None:
            _set(intake, key, d["value"])
            notes.append(f"{key.removeprefix(P)} {d['value']} ({d['why']})")
    for key, value in _by_accelerator(source, intake).items():
        _set(intake, key, value)
        notes.append(f"{key} {value} (the source's cluster)")
    step, published_from = _published_step(rec, intake, source.get("flops_definition"))
    days = m.get("train_days") if rec.get("category") == "time_to_train" else None
    memory = m.get("memory_gib_per_gpu")
    kind = _kind(rec, precision) + (" lora" if _get(intake, "training.lora") is not None else "")
    return RecordIntake(id=rid, group=group, kind=kind, intake=intake, notes=tuple(notes),
                        published_step_time_s=step, published_from=published_from,
                        published_days=float(days) if days else None,
                        measured_memory_bytes=float(memory) * GIB if memory else None)


def _by_accelerator(source: dict[str, Any], intake: dict[str, Any]) -> dict[str, Any]:
    table = source.get("by_accelerator") or {}
    if not table:
        return {}
    from ..catalog.loader import load_catalog
    acc = load_catalog().accelerator(intake["compute"]["accelerator"]).id
    return dict(table.get(acc, {}))


def _published_step(rec: dict[str, Any], intake: dict[str, Any], definition: str | None) -> tuple[float | None, str]:
    m = rec["measured"]
    t = intake["training"]
    gpus = intake["compute"]["gpus"]
    tokens = t["global_batch_size"] * t["seq_len"]
    if m.get("step_time_s"):
        return float(m["step_time_s"]), "step_time_s"
    vanilla = (m.get("other") or {}).get("vanilla_tp_tokens_per_sec_per_gpu")
    if vanilla:
        return tokens / (float(vanilla) * gpus), "tokens_per_sec_per_gpu (vanilla TP)"
    if m.get("tokens_per_sec_per_gpu"):
        return tokens / (float(m["tokens_per_sec_per_gpu"]) * gpus), "tokens_per_sec_per_gpu"
    if m.get("tflops_per_gpu") and definition:
        arch = resolve_model(ModelIntake.model_validate(intake["model"]), Trace(), "model")
        flops = DEFINITIONS[definition](arch, t["global_batch_size"], t["seq_len"])
        return flops / (float(m["tflops_per_gpu"]) * 1e12 * gpus), f"tflops_per_gpu ({definition})"
    if rec.get("category") == "time_to_train" and m.get("train_days"):
        return None, "train_days"
    raise NotCompiled("no step time, tokens/s per GPU or convertible TFLOP/s")


__all__ = ["FILES", "NotCompiled", "RecordIntake", "group_of", "load_records", "record_intake", "sources"]
