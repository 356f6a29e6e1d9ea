"""Mutated intakes for fuzzing: the bundled examples (and a few small intakes of each kind) with
keys set to hostile values, removed, renamed or added, at any key the intake schema knows.

Used by tests/unit/test_fuzz_intakes.py (hypothesis, bounded for CI) and by
tools/fuzz_intakes.py (the large one-off run). Each outcome must be a result (every number
finite) or one of our errors; an `InfeasibleError` out of `compile_workload` is a failure.
"""

from __future__ import annotations

import copy
import math
import random
from pathlib import Path
from typing import Any

import yaml

from workload_compiler.intake.load import workload_model
from workload_compiler.intake.pins import apply_pins, intake_keys

REPO_ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO_ROOT / "examples").glob("*.yaml"))

# Small intakes that compile in milliseconds, so a fuzz run spends its time on many cases.
SMALL: list[dict[str, Any]] = [
    {"kind": "training", "model": {"preset": "llama3-8b"},
     "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 128}, "compute": {"gpus": 64}},
    {"kind": "training", "model": {"layers": 32, "hidden_size": 4096, "attention_heads": 32},
     "training": {"tokens": "100B"}, "compute": {"accelerator": "a100-sxm-80gb", "gpus": 16}},
    {"kind": "training", "model": {"preset": "mixtral-8x7b"}, "compute": {"accelerator": "h200-sxm", "gpus": 64},
     "facility": {"power": "1MW", "rack_power": "40kW"}},
    {"kind": "inference", "model": {"preset": "llama3.1-8b"}},
    {"kind": "inference", "model": {"preset": "qwen3-30b-a3b"},
     "serving": {"input_tokens": [100, 2000, 8000], "output_tokens": 256, "request_rate": "5/s",
                 "mode": "auto", "ttft": {"p90": "1s"}}, "compute": {"accelerator": "h100-sxm", "max_gpus": 16}},
    {"kind": "inference", "model": {"preset": "llama3.1-8b"},
     "serving": {"scenario": "offline", "concurrency": 64}, "cost": {"capex_usd_per_gpu": 30000,
                                                                     "amortization_years": 4}},
    {"kind": "training", "model": {"preset": "llama3-8b"},
     "training": {"tokens": "100B", "seq_len": 4096, "global_batch_size": 512}, "target": {"time_to_train": "7d"},
     "compute": {"accelerator": "h100-sxm"}},
    {"kind": "training", "model": {"layers": 12, "hidden_size": 2048, "attention_heads": 16, "kv_heads": 4,
                                   "mlp": "squared_relu",
                                   "moe": {"experts": 16, "top_k": 2, "expert_ffn_hidden_size": 1024},
                                   "hybrid": {"pattern": "MEM*EMEM*EME", "mamba_heads": 32, "state_dim": 64}},
     "training": {"tokens": "100B", "seq_len": 4096, "global_batch_size": 64, "lora": {"rank": 8}},
     "compute": {"gpus": 16}},
    {"kind": "inference", "model": {"layers": 8, "hidden_size": 1024, "attention_heads": 8, "kv_heads": 2,
                                    "mlp": "swiglu", "attention_output_gate": True,
                                    "moe": {"experts": 16, "top_k": 2, "expert_ffn_hidden_size": 512,
                                            "latent_size": 256},
                                    "hybrid": {"pattern": "GEGE*EGE", "mamba_heads": 16, "state_dim": 64, "groups": 4}},
     "serving": {"ssm_state_dtype": "fp32", "input_tokens": 4000, "output_tokens": 1000, "request_rate": "2/s"},
     "compute": {"accelerator": "h100-sxm", "max_gpus": 8}},
    {"kind": "training", "model": {"layers": 8, "hidden_size": 1024, "attention_heads": 8, "mtp_layers": 1,
                                   "moe": {"experts": 16, "top_k": 4, "expert_ffn_hidden_size": 512,
                                           "latent_size": 256},
                                   "hybrid": {"pattern": "MEME*EME", "mamba_heads": 16}},
     "training": {"tokens": "100B", "seq_len": 4096, "global_batch_size": 64}, "compute": {"gpus": 16}},
    {"kind": "inference", "model": {"layers": 4, "hidden_size": 1024, "attention_heads": 8,
                                    "sparse_attention": {"topk": 256, "indexer_heads": 4, "indexer_head_dim": 64}},
     "serving": {"input_tokens": 4000, "output_tokens": 500}, "compute": {"accelerator": "h100-sxm"}},
    {"kind": "hpc", "application": {"class": "molecular_dynamics"}, "problem": {"size": "100k"}, "steps": 1000},
    {"kind": "hpc", "application": {"class": "cfd_lbm"}, "problem": {"size": "256^3"}, "steps": 100,
     "compute": {"gpus": 8}},
]

HOSTILE_NUMBERS: list[Any] = [0, -1, 1, 2, 0.5, 1e-300, 1e-9, 1e6, 1e9, 1e12, 1e18, 1e30, 1e300, 2**31, 2**53 + 1,
                              2**63, 10**30, 10**400, math.inf, -math.inf, math.nan, True, False]
HOSTILE_TEXT: list[Any] = ["", "x", "abc", "0", "-5", "1e999", "inf", "-inf", "nan", ".inf", "1e30", "7B",
                           "1T", "300B", "0.5", "20/2s", "100GB/2s", "5/0s", "0/s", "1e30/s", "2fs", "10y", "0s",
                           "1e-30s", "80GiB", "1e20GB", "2.5MW", "0W", "1e20MW", "512^3", "1e10^1e10", "99999x99999",
                           "n+1", "n+99", "none", "150%", "[bold]x[/]", "é", "z" * 5000, "air", "liquid",
                           "h100-sxm", "b200", "gb200", "mi300x", "gaudi3", "v100", "l40s", "quantum2-qm9700",
                           "fp8", "fp4", "int4", "bf16", "auto", "disaggregated", "offline", "halo", "all_to_all"]
HOSTILE_SHAPES: list[Any] = [None, {}, [], [1, 2, 3], [0], [-1, 5], {"mean": 0}, {"mean": 1e30}, {"p99": "1ms"},
                             {"mean": 100, "p90": 50}, {"a": 1}, [[[]]], {"preset": "llama3-8b"}]
EVERY_VALUE = HOSTILE_NUMBERS + HOSTILE_TEXT + HOSTILE_SHAPES


def base_intakes(skip: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The bundled intakes (as the mappings their YAML holds; not the offer files) and the small
    intakes; `skip` names examples (file stems) to leave out."""
    paths = [p for p in EXAMPLES if p.stem not in skip and "\nkind:" in "\n" + p.read_text(encoding="utf-8")]
    out = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in paths]
    for d, p in zip(out, paths, strict=True):
        hf = (d.get("model") or {}).get("hf_config") if isinstance(d.get("model"), dict) else None
        if hf:
            d["model"]["hf_config"] = str(p.parent / hf)
    return out + copy.deepcopy(SMALL)


def _leaves(data: Any, prefix: str = "") -> list[str]:
    """Every dotted key present in a mapping (sections and leaves). A key that itself holds a dot (a
    workload sheet's field name, `sheet.fields.pipeline.device_bytes_per_sample`) has no dotted path
    that reaches it, so neither it nor what is below it is listed (fuzz seed 89, case 7,037: the
    generator's own `--set` path was refused)."""
    keys: list[str] = []
    if isinstance(data, dict):
        for k, v in data.items():
            if "." in str(k):
                continue
            key = f"{prefix}{k}"
            keys.append(key)
            keys += _leaves(v, key + ".")
    return keys


def _value_like(original: Any, rng: random.Random) -> Any:
    """A hostile value, often of the original's own kind (a number for a number)."""
    if rng.random() < 0.75 and isinstance(original, int | float) and not isinstance(original, bool):
        try:
            scaled = original * rng.choice([2, 3, 0.5, 0.1, 7, 10, 100, 1000, 1e-3, 1e6, 10 ** rng.randint(7, 30)])
        except OverflowError:   # an integer beyond a float's range times a float
            scaled = original * 10
        plausible = [scaled, int(scaled) if isinstance(original, int) else scaled, original + 1,
                     max(1, original - 1), rng.randint(1, 2**rng.randint(1, 40))]
        return rng.choice(plausible * 3 + [-original, *HOSTILE_NUMBERS])
    if rng.random() < 0.6 and isinstance(original, str):
        return rng.choice([original + "x", original[:-1], original * 3, original.upper(), *HOSTILE_TEXT])
    return rng.choice(EVERY_VALUE)


def _set(data: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    try:
        return apply_pins(data, [(key, value)])
    except Exception:   # a pin through a scalar: set it by hand
        out = copy.deepcopy(data)
        out[key.split(".")[0]] = value
        return out


def _bounds(model: Any, key: str) -> tuple[float, float, bool] | None:
    """(low, high, integer) of a numeric intake key, from its schema constraints."""
    from workload_compiler.intake.problems import submodel
    current, info = model, None
    for part in key.split("."):
        found = [f for k, f in current.model_fields.items() if part in (k, f.alias)] if current else []
        if not found:
            return None
        info = found[0]
        current = submodel(info.annotation)
    text = str(info.annotation) if info is not None else ""
    if info is None or current is not None or not ("int" in text or "float" in text) or "Literal" in text:
        return None
    low, high = 0.0, 1e6
    integer = "float" not in text
    for m in info.metadata:
        for attr, side in (("ge", "low"), ("gt", "low"), ("le", "high"), ("lt", "high")):
            v = getattr(m, attr, None)
            if v is None:
                continue
            v = float(v)
            if attr == "gt":
                v = v + 1 if integer else v + max(abs(v) * 1e-9, 1e-12)
            low, high = (v, high) if side == "low" else (low, v)
    return low, high, integer


def _extreme(bounds: tuple[float, float, bool], rng: random.Random) -> Any:
    """A valid value near an edge of the range, or log-uniform inside it."""
    low, high, integer = bounds
    lo = max(low, 1e-30) if low <= 0 else low
    choice = rng.choice(["low", "high", "log", "log", "log"])
    value = low if choice == "low" else high if choice == "high" else math.exp(
        rng.uniform(math.log(lo), math.log(max(high, lo * 1.0001))))
    if integer:
        return int(min(max(round(value), math.ceil(low)), math.floor(high)))
    return min(max(value, low), high)


def mutate_valid(intake: dict[str, Any], rng: random.Random, mutations: int = 2) -> dict[str, Any]:
    """`mutations` numeric keys of the schema set to valid values at the edges of their ranges:
    the inputs that pass validation and stress the arithmetic."""
    data = copy.deepcopy(intake)
    try:
        model = workload_model(data.get("kind"))
    except Exception:
        return data
    numeric = [(k, b) for k in intake_keys(model) if (b := _bounds(model, k)) is not None]
    for key, bounds in rng.sample(numeric, min(mutations, len(numeric))):
        data = _set(data, key, _extreme(bounds, rng))
    return data


def mutate(intake: dict[str, Any], rng: random.Random, mutations: int = 2) -> dict[str, Any]:
    """`mutations` random edits: set a present or schema key to a hostile value, delete a key,
    add an unknown key, or misspell one."""
    data = copy.deepcopy(intake)
    try:
        schema_keys = intake_keys(workload_model(data.get("kind")))
    except Exception:
        schema_keys = []
    for _ in range(mutations):
        present = _leaves(data)
        roll = rng.random()
        if roll < 0.45 and present:
            key = rng.choice(present)
            node: Any = data
            for part in key.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            data = _set(data, key, _value_like(node, rng))
        elif roll < 0.75 and schema_keys:
            value = rng.choice(EVERY_VALUE) if rng.random() < 0.5 else rng.choice(
                [rng.randint(0, 2**rng.randint(1, 24)), rng.random() * 10 ** rng.randint(-3, 6), *HOSTILE_TEXT[:40]])
            data = _set(data, rng.choice(schema_keys), value)
        elif roll < 0.85 and present:
            key = rng.choice(present)
            data = apply_pins(data, [(key, None)]) if "." in key or key != "kind" else data
        elif roll < 0.93 and present:
            key = rng.choice(present)
            data = _set(data, key + "x" if rng.random() < 0.5 else key.rpartition(".")[0] + ".bogus", 1)
        else:
            data["kind"] = rng.choice(["training", "inference", "hpc", "trainig", None, 3])
    return data


def walk_numbers(value: Any, path: str = "") -> list[tuple[str, float]]:
    """Every float in a JSON-like structure, with its path."""
    found: list[tuple[str, float]] = []
    if isinstance(value, float):
        found.append((path, value))
    elif isinstance(value, dict):
        for k, v in value.items():
            found += walk_numbers(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for v in value:
            found += walk_numbers(v, f"{path}[]")
    return found


def non_finite(doc: Any) -> list[str]:
    """Paths of inf/NaN values in a dumped result."""
    return [p for p, v in walk_numbers(doc) if not math.isfinite(v)]
