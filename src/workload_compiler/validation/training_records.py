"""Published training runs -> (ModelArch, TrainingSetup, Layout, Hardware, published step time).

Reads calibration/training_public.yaml (shipped beside the repository, not in the package). A
record is used when it pins a layout (tp/pp/dp, or FSDP) and gives a step time, tokens/s per
GPU, or TFLOP/s whose FLOP definition is known (validation/flops_definitions.py); every value
filled in here that the record does not state is listed in the case's `assumptions`. Records
whose features the model cannot express are returned as `Skipped` with the reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..arch.model import ModelArch
from ..catalog.loader import load_catalog
from ..errors import InputError
from ..perf.layout import RECOMPUTE_NAMES, Hardware, Layout, TrainingSetup
from .flops_definitions import DEFINITIONS
from .rules import GROUP_RULES, SKIP_IDS, SKIP_PREFIXES, VP_FROM_NOTES, group_of

HardwareLookup = Callable[[str], Hardware]


@dataclass(frozen=True, kw_only=True)
class TrainingCase:
    id: str
    group: str
    arch: ModelArch
    setup: TrainingSetup
    layout: Layout
    hardware: Hardware
    gpus: int
    published_step_time_s: float
    published_from: str                 # which measured field the step time comes from
    assumptions: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Skipped:
    id: str
    group: str
    reason: str


def load_records(calibration_dir: Path) -> list[dict[str, Any]]:
    path = Path(calibration_dir) / "training_public.yaml"
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # C parser: ~10x faster
    with path.open(encoding="utf-8") as fh:
        doc = yaml.load(fh, Loader=loader)
    return list(doc["records"])


def catalog_hardware(accelerator: str) -> Hardware:
    return load_catalog().hardware(accelerator)


def training_cases(records: Iterable[dict[str, Any]], hardware: HardwareLookup = catalog_hardware,
                   ) -> tuple[list[TrainingCase], list[Skipped]]:
    """Map every record to a case, or to a skip with its reason."""
    cases: list[TrainingCase] = []
    skipped: list[Skipped] = []
    for rec in records:
        for variant in _variants(rec):
            try:
                cases.append(_case(variant, hardware))
            except _Skip as exc:
                skipped.append(Skipped(id=variant["id"], group=group_of(variant["id"]), reason=str(exc)))
    return cases, skipped


class _Skip(Exception):
    pass


def _variants(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """torchtitan 2410's 405B row reports bf16 and float8 runs in `other`: one case each."""
    other = rec["measured"].get("other") or {}
    if rec["id"] == "torchtitan_2410_llama3_405b_128gpu":
        out = []
        for key, precision in (("bf16", "BF16"), ("float8", "Float8")):
            m = {**rec["measured"], "tokens_per_sec_per_gpu": other[key]["wps_per_gpu"]}
            out.append({**rec, "id": f"{rec['id']}#{key}", "precision": precision, "measured": m})
        return out
    return [rec]


def _case(rec: dict[str, Any], hardware: HardwareLookup) -> TrainingCase:
    rid = rec["id"]
    group = group_of(rid)
    rule = GROUP_RULES.get(group)
    if rid in SKIP_IDS:
        raise _Skip(SKIP_IDS[rid])
    for prefix, reason in SKIP_PREFIXES.items():
        if rid.startswith(prefix):
            raise _Skip(reason)
    if rule is None:
        raise _Skip("no step time, throughput or layout to compare (reference or formula record)")
    if "lora" in rid:
        raise _Skip("LoRA fine-tuning: frozen base weights, no weight-gradient GEMMs (not modeled)")
    if "rowwise" in rid:
        raise _Skip("float8 rowwise scaling runs emulated per-row scaling kernels (not modeled)")
    notes: list[str] = []
    arch = _arch(rec, notes)
    p, b = rec["parallelism"], rec["batch"]
    mp = p.get("model_parallel_size")
    tp = p.get("tp") or (8 if mp and mp >= 8 else 1)
    pp = p.get("pp") or (mp // tp if mp else 1)
    if mp and not p.get("tp") and mp > 1:
        notes.append(f"tp=8 (one node), pp={pp}: the source gives only model-parallel size {mp}")
    cp = p.get("cp") or 1
    dp = p.get("dp")
    gpus = int(rec["hardware"]["count"] or 0)
    if not dp or tp * pp * cp * dp != gpus:
        raise _Skip(f"layout tp*pp*cp*dp does not match the {gpus} GPUs (or dp not given)")
    mbs = b.get("micro_batch")
    if mbs is None:
        mbs = 1
        notes.append("micro-batch 1 (not stated by the source)")
    gbs = b.get("global_batch_seqs")
    if gbs is None:
        local = b.get("local_batch_per_dp_rank") or mbs
        gbs = dp * local
        notes.append(f"global batch = dp x {local} sequences per rank (no gradient accumulation)")
    vp = p.get("vp") or VP_FROM_NOTES.get(rid, rule.vp_default if pp > 1 else 1)
    if not p.get("vp") and pp > 1:
        why = "record notes" if rid in VP_FROM_NOTES else "interleaving depth not stated"
        notes.append(f"vp={vp} ({why})")
    fsdp = p.get("fsdp")
    zero = 3 if (isinstance(fsdp, int) and not isinstance(fsdp, bool) and fsdp > 0) else rule.zero
    if fsdp is True:
        zero = 2
    sp = p.get("sequence_parallel")
    if sp is None:
        sp = tp > 1 and rule.sequence_parallel
    layout = Layout.of(tp=tp, pp=pp, dp=dp, cp=cp, ep=p.get("ep") or 1, etp=p.get("etp") or 1, vp=vp,
                       mbs=mbs, recompute=_recompute(rec.get("recompute"), rule.recompute_default, notes),
                       sp=sp, zero=zero)
    setup = TrainingSetup(seq_len=int(rec["model"]["seq_len"]), global_batch_size=int(gbs),
                          precision=_precision(rec.get("precision"), notes),
                          flash_attention=rule.flash_attention)
    try:
        hw = hardware(rec["hardware"]["accelerator"] or "")
    except InputError as exc:
        lacks = exc.allowed.split(";")[0].split(" has ")[-1]
        raise _Skip(f"hardware not modeled: catalog entry {exc.value} lacks {lacks} (unpublished)") from None
    if rule.scale_out_bits_per_node:
        per_node = rule.scale_out_bits_per_node[hw.accelerator_id]
        hw = dataclasses.replace(hw, scale_out_bandwidth_bytes_per_s=per_node / 8 / hw.gpus_per_node)
        notes.append(f"scale-out {per_node / 1e9:.0f} Gb/s per node (record's hardware.system)")
    step, source = _published_step(rec, arch, setup, gpus, rule.flops_definition)
    return TrainingCase(id=rid, group=group, arch=arch, setup=setup, layout=layout, hardware=hw, gpus=gpus,
                        published_step_time_s=step, published_from=source, assumptions=tuple(notes))


def _arch(rec: dict[str, Any], notes: list[str]) -> ModelArch:
    m = rec["model"]
    fam = (m.get("family") or "").lower()
    if not m.get("layers") or not m.get("hidden") or not m.get("heads"):
        raise _Skip("architecture (layers/hidden/heads) not given")
    h, heads = int(m["hidden"]), int(m["heads"])
    gpt = fam.startswith("gpt")
    ffn = m.get("ffn")
    if ffn is None:
        ffn = 4 * h
        notes.append("ffn = 4h (GPT convention; not stated)")
    vocab = m.get("vocab")
    if vocab is None:
        # Llama 2: 32k SentencePiece tokens (Touvron et al. 2023, §2.2 "Tokenizer"); Qwen3 MoE: config.json
        # vocab_size 151936; else GPT-2 BPE padded to 51,200 (Narayanan et al. 2021, §5.1).
        vocab = {"llama2": 32000, "qwen3_moe": 151936}.get(fam, 51200)
        notes.append(f"vocab {vocab} (family default; not stated)")
    head_dim = 128 if fam == "qwen3_moe" else h // heads   # Qwen3 config.json: head_dim 128
    moe = m.get("arch") == "moe"
    return ModelArch(
        name=m["name"], layers=int(m["layers"]), hidden_size=h, attention_heads=heads,
        kv_heads=int(m.get("kv_heads") or heads), head_dim=head_dim, ffn_hidden_size=int(ffn),
        vocab_size=int(vocab), mlp="gelu" if gpt else "swiglu",
        moe_experts=int(m["moe_experts"]) if moe else 0, moe_top_k=int(m["moe_topk"]) if moe else 0,
        moe_ffn_hidden_size=int(m["moe_ffn"]) if moe else 0, source=str(m.get("arch_source") or "record"))


def _recompute(text: str | None, default: int, notes: list[str]) -> int:
    t = (text or "").lower()
    if not t:
        notes.append(f"recompute {RECOMPUTE_NAMES[default]} (not stated)")
        return default
    if t.startswith("varies"):
        raise _Skip("recompute varies within the record")
    if t.startswith("full"):
        return 2
    if not t.startswith("selective"):
        return 0
    if "op" in t or "layer" in t or "every n" in t:
        # torchtitan per-op SAC; layer-level selective (every n-th block fully recomputed) has about
        # the same recompute share and is approximated by it (noted in the record's assumptions).
        if "op" not in t:
            notes.append("layer-level selective checkpointing approximated by per-op selective")
        return 3
    return 1


def _precision(text: str | None, notes: list[str]) -> str:
    t = (text or "").lower()
    if not t:
        notes.append("precision bf16 (not stated; MFU is quoted against the BF16 peak)")
    return "fp8" if ("fp8" in t or "float8" in t) else "bf16"


def _published_step(rec: dict[str, Any], arch: ModelArch, setup: TrainingSetup, gpus: int,
                    definition: str | None) -> tuple[float, str]:
    m = rec["measured"]
    tokens = setup.global_batch_size * setup.seq_len
    if m.get("step_time_s"):
        return float(m["step_time_s"]), "step_time_s"
    vanilla = (m.get("other") or {}).get("vanilla_tp_tokens_per_sec_per_gpu")
    if vanilla:
        return tokens / (float(vanilla) * gpus), "tokens_per_sec_per_gpu (vanilla TP)"
    if m.get("tokens_per_sec_per_gpu"):
        return tokens / (float(m["tokens_per_sec_per_gpu"]) * gpus), "tokens_per_sec_per_gpu"
    if m.get("tflops_per_gpu") and definition:
        flops = DEFINITIONS[definition](arch, setup.global_batch_size, setup.seq_len)
        return flops / (float(m["tflops_per_gpu"]) * 1e12 * gpus), f"tflops_per_gpu ({definition})"
    raise _Skip("no step time, tokens/s per GPU or convertible TFLOP/s")
