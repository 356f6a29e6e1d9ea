"""A published inference measurement -> the intake a user would write for it.

Every record of calibration/inference_public.yaml and inference_added.yaml becomes a `kind:
inference` intake: the model preset, the accelerator, the checkpoint's weight and KV formats, the
parallel degrees and token lengths the record states, and what the tool it ran sets on its own
(validation/data/inference_sources.yaml), each listed as a note. validation/inference_records.py
compiles it like `wkc compile`. A record needing a feature the tool lacks is `NotCompiled`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..arch.presets import list_presets, preset_arch
from ..catalog.loader import Catalog
from ..errors import InputError
from ..inference.model import served_model
from .record_model import NotCompiled, name_key
from .trtllm_bench import trtllm_bench_caps

DATA = Path(__file__).parent / "data" / "inference_sources.yaml"
FILES = ("inference_public.yaml", "inference_added.yaml")


@dataclass(frozen=True, kw_only=True)
class InferenceRecordIntake:
    id: str
    group: str
    intake: dict[str, Any]
    notes: tuple[str, ...]                          # what the intake fills in that the record does not state
    published: dict[str, tuple[float, str]]         # quantity -> (value, the record field it is read from)


@functools.cache
def sources() -> dict[str, Any]:
    with DATA.open(encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.safe_load(fh)
    return data


def load_inference(calibration_dir: Path) -> dict[str, Any]:
    """Both inference files merged: `entries` and `memory_measurements` concatenated, in file order.
    A file that is absent contributes nothing (inference_added.yaml is newer than the first set)."""
    merged: dict[str, Any] = {"entries": [], "memory_measurements": []}
    for name in FILES:
        path = Path(calibration_dir) / name
        if not path.is_file():
            continue
        with path.open(encoding="utf-8") as fh:
            doc: dict[str, Any] = yaml.safe_load(fh) or {}
        for key in merged:
            merged[key].extend(doc.get(key) or [])
    return merged


def _model_preset(name: Any) -> str:
    """The preset of a record's model: the table's name, else the same name in other spellings
    ("Llama-3.3-70B", "meta-llama/Llama-3.3-70B": letters and digits alone, the repository's
    organisation dropped), else a preset id of that spelling ("Kimi-K2" -> kimi-k2)."""
    table: dict[str, str] = sources()["models"]
    if name in table:
        return table[name]
    key = name_key(str(name).rsplit("/", 1)[-1])
    for candidates in ({name_key(str(k).rsplit("/", 1)[-1]): v for k, v in table.items()},
                       {name_key(p): p for p in list_presets()}):
        if key in candidates:
            return str(candidates[key])
    raise NotCompiled(f"model {name!r} is not mapped in validation/data/inference_sources.yaml (models) "
                      "and is no preset's name")


def _checkpoint(precision: Any) -> dict[str, Any]:
    """The table's checkpoint formats for the record's precision, its case ignored ("FP4", "NVFP4")."""
    table: dict[str, Any] = sources()["checkpoints"]
    entry = table.get(precision)
    if entry is None:
        entry = {str(k).lower(): v for k, v in table.items()}.get(str(precision).strip().lower())
    if entry is None:
        raise NotCompiled(f"precision {precision!r} is not mapped in validation/data/inference_sources.yaml "
                          "(checkpoints)")
    return dict(entry)


def _accelerator(name: Any, catalog: Catalog) -> dict[str, Any]:
    """The table's entry for the record's GPU, else the catalog's accelerator of that name or alias."""
    entry = sources()["accelerators"].get(name)
    if entry is not None:
        return dict(entry)
    try:
        return {"id": catalog.accelerator(str(name)).id}
    except InputError:
        raise NotCompiled(f"hardware {name!r} is not mapped in validation/data/inference_sources.yaml "
                          "(accelerators) and is no catalog accelerator") from None


def _tool(framework: str) -> dict[str, Any]:
    tools = sources()["tools"]
    for prefix in sorted(tools, key=len, reverse=True):
        if framework.startswith(prefix):
            return dict(tools[prefix])
    raise NotCompiled(f"framework {framework!r} has no tool entry in validation/data/inference_sources.yaml")


def _field(record: dict[str, Any], dotted: str) -> Any:
    value: Any = record
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None:
        raise NotCompiled(f"the record has no {dotted}")
    return value


def _settings(entries: dict[str, Any], record: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """{key: {value|from, why}} -> {key: value}, a note for each value that carries a why."""
    out: dict[str, Any] = {}
    for key, spec in entries.items():
        value = _field(record, spec["from"]) if "from" in spec else spec["value"]
        out[key] = value
        if spec.get("why"):
            notes.append(f"serving.{key} = {value}: {spec['why']}")
    return out


def _base(record: dict[str, Any], catalog: Catalog, notes: list[str]) -> tuple[dict[str, Any], str, str]:
    """model, accelerator and checkpoint formats: the intake's model/compute/serving core."""
    preset = _model_preset(record.get("model"))
    acc = _accelerator(record.get("hardware"), catalog)
    if acc.get("why"):
        notes.append(f"compute.accelerator = {acc['id']}: {acc['why']}")
    ckpt = _checkpoint(record.get("precision"))
    if ckpt.get("why"):
        notes.append(ckpt["why"])
    catalog.accelerator(acc["id"])   # a catalog gap is an InputError here, not a KeyError later
    tp = int(record.get("tp") or 1)
    intake = {"kind": "inference", "name": record["id"], "model": {"preset": preset},
              "serving": {"weights": ckpt["weights"], "kv_cache_dtype": ckpt["kv_cache_dtype"]},
              "compute": {"accelerator": acc["id"], "parallelism": {"tp": tp, "pp": int(record.get("pp") or 1)}}}
    return intake, preset, acc["id"]


def throughput_intake(record: dict[str, Any], catalog: Catalog) -> InferenceRecordIntake:
    """An offline max-throughput row (the TensorRT-LLM perf tables)."""
    if record.get("pp") not in (1, None):
        raise NotCompiled(f"pipeline parallelism pp={record.get('pp')} in the offline benchmark is not modelled")
    if record.get("attention_dp"):
        raise NotCompiled("attention data parallelism of the record is not modelled in the offline benchmark")
    notes: list[str] = []
    intake, preset, acc = _base(record, catalog, notes)
    tool = _tool(str(record.get("framework", "")))
    intake["serving"] |= _settings(tool.get("serving", {}), record, notes)
    isl, osl = int(record["isl"]), int(record["osl"])
    intake["serving"] |= {"input_tokens": isl, "output_tokens": osl}
    arch = preset_arch(preset)
    par = intake["compute"]["parallelism"]
    if arch.is_moe:
        if record.get("ep"):
            par["ep"] = int(record["ep"])
        elif tool.get("moe_ep_when_unstated"):
            rule = tool["moe_ep_when_unstated"]
            par["ep"] = par["tp"] if rule["value"] == "tp" else int(rule["value"])
            notes.append(rule["why"])
    intake["compute"]["gpus"] = int(record.get("gpu_count") or par["tp"])
    if tool.get("batch_limits") == "trtllm-bench":
        m = served_model(arch, intake["serving"]["weights"], intake["serving"]["kv_cache_dtype"])
        bs, tokens = trtllm_bench_caps(m, par["tp"], par["pp"], isl, osl, catalog.accelerator(acc).process_memory_bytes)
        intake["serving"] |= {"max_batch_size": bs, "max_num_tokens": tokens}
        notes.append(f"serving.max_batch_size {bs}, max_num_tokens {tokens}: trtllm-bench's tuning "
                     "heuristic (bench/build/tuning.py)")
    fp4 = "fp4_" if intake["serving"]["weights"] == "nvfp4" else ""
    group = "trtllm_" + fp4 + ("moe" if arch.is_moe else "dense")
    published = {"output_tokens_per_s_per_gpu": (float(_field(record, "measured.output_tok_s_per_gpu")),
                                                 "measured.output_tok_s_per_gpu")}
    return InferenceRecordIntake(id=record["id"], group=group, intake=intake, notes=tuple(notes), published=published)


def memory_intake(record: dict[str, Any], catalog: Catalog) -> InferenceRecordIntake:
    """A serving engine's start-up memory log: KV-cache tokens (and weights where logged)."""
    spec = sources()["memory"].get(record["id"])
    if spec is None:
        raise NotCompiled("no memory entry in validation/data/inference_sources.yaml")
    notes: list[str] = []
    intake, _, _ = _base(record, catalog, notes)
    intake["serving"] |= _settings(spec["serving"], record, notes)
    intake["compute"]["gpus"] = int(record.get("gpu_count") or intake["compute"]["parallelism"]["tp"])
    published = {q: (float(_field(record, f)), f) for q, f in spec["scores"].items()}
    return InferenceRecordIntake(id=record["id"], group="memory", intake=intake, notes=tuple(notes),
                                 published=published)
