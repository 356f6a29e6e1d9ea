"""A record's model and GPU -> the intake's (validation/record_model.py, inference_intake.py): names in
the spellings other tables use, qualifiers, models from their fields, and the features the tool lacks.

Records: ../shared/calibration/training_added.yaml (Megatron-Bridge 25.11 rows) and
inference_added.yaml (TensorRT-LLM perf-overview, B200 FP4); each test changes only the name, family
or GPU of a published row, as a newer table of the same source would print it.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import pytest

from shared_data import calibration_dir, require
from workload_compiler.arch.presets import list_presets
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.validation.inference_intake import load_inference, throughput_intake
from workload_compiler.validation.record_model import NotCompiled, name_key
from workload_compiler.validation.suites import find_calibration_dir
from workload_compiler.validation.training_intake import load_records, record_intake, sources
from workload_compiler.validation.training_suite import compile_record, step_row

QWEN = "mbridge_2511_pretraining_h100_qwen3_30b_a3b_fp8cs_16gpu"
LLAMA = "mbridge_2511_pretraining_h100_llama3_70b_fp8cs_64gpu"
DEEPSEEK = "mbridge_2509_pretraining_gb200_deepseekv3_tokendrop_fp8_256gpu"


@functools.cache
def _records(path: str) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in load_records(Path(path))}


@pytest.fixture(scope="module")
def records() -> dict[str, dict[str, Any]]:
    return _records(str(find_calibration_dir(require(calibration_dir()))))


def _renamed(rec: dict[str, Any], **model: Any) -> dict[str, Any]:
    out = copy.deepcopy(rec)
    out["model"].update(model)
    return out


@pytest.mark.parametrize("name", ["LLAMA3_70B", "Llama 3.1 70B", "LLAMA3.1_70B", "llama-3.1-70b", "Llama3.1 70B"])
def test_a_name_in_any_spelling_is_the_same_preset(records: dict[str, dict[str, Any]], name: str) -> None:
    assert record_intake(_renamed(records[LLAMA], name=name)).intake["model"] == {"preset": "llama3-70b"}


def test_qualifiers_set_what_the_name_implies(records: dict[str, dict[str, Any]]) -> None:
    """Megatron-Bridge: 'token-dropless unless the model name says tokendrop' (capacity factor 1)."""
    drop = record_intake(_renamed(records[DEEPSEEK], name="DeepSeekV3 (tokendrop)"))
    assert drop.intake["training"]["moe_capacity_factor"] == 1.0
    assert drop.intake["model"] == {"preset": "deepseek-v3"}
    no_mtp = record_intake(_renamed(records[DEEPSEEK], name="DeepSeek-V3 (w/o MTP)"))
    assert no_mtp.intake["model"] == {"preset": "deepseek-v3", "mtp_layers": 0}
    assert "moe_capacity_factor" not in no_mtp.intake["training"]
    odd = record_intake(_renamed(records[DEEPSEEK], name="DeepSeekV3 (fp8 blockwise)"))
    assert odd.intake["model"] == {"preset": "deepseek-v3"}
    assert any("(fp8 blockwise) not understood" in n for n in odd.notes)


def test_a_new_preset_is_found_by_its_name(records: dict[str, dict[str, Any]]) -> None:
    """Kimi K2 (DeepSeek-V3's architecture at 384 experts) on GB300: a row a newer table prints."""
    rec = _renamed(records[DEEPSEEK], name="Kimi_K2 (tokendrop)")
    rec["hardware"]["accelerator"] = "GB300"
    ri = record_intake(rec)
    assert ri.intake["model"] == {"preset": "kimi-k2"}
    case = compile_record(ri, load_catalog())
    assert case.fits and case.arch.moe_experts == 384 and case.hardware.accelerator_id == "gb300"


def test_a_plain_moe_family_from_its_fields_matches_its_preset(records: dict[str, dict[str, Any]]) -> None:
    """Qwen3 MoE (every layer routed, no shared expert, head_dim 128): the record's own fields, under
    an unknown name, give the step time the qwen3-30b-a3b preset gives."""
    preset = records[QWEN]
    fields = _renamed(preset, name="Qwen3_Coder_30B_A3B")
    ri = record_intake(fields)
    assert ri.intake["model"]["moe"] == {"experts": 128, "top_k": 8, "expert_ffn_hidden_size": 768}
    assert ri.intake["model"]["head_dim"] == 128 and ri.intake["model"]["vocab_size"] == 151936
    catalog = load_catalog()
    by_fields = step_row(compile_record(ri, catalog)).predicted
    by_preset = step_row(compile_record(record_intake(preset), catalog)).predicted
    assert by_fields == pytest.approx(by_preset, rel=0.01)


def test_a_moe_of_another_family_without_a_preset_names_what_is_missing(records: dict[str, dict[str, Any]]) -> None:
    rec = _renamed(records[DEEPSEEK], name="DeepSeek-V4-Lite", family="deepseek", layers=27, hidden=2048,
                   heads=16, moe_experts=64, moe_topk=6, moe_ffn=1408, vocab=102400)
    with pytest.raises(NotCompiled, match="missing feature: a catalog preset"):
        record_intake(rec)


@pytest.mark.parametrize(("name", "family", "feature"), [
    ("Nemotron_3_Ultra", "nemotron", "Nemotron 3 Ultra's shape"),
    ("Qwen3-VL-235B-A22B", "qwen3_vl", "vision encoder"),
])
def test_models_the_tool_cannot_express_name_the_feature(records: dict[str, dict[str, Any]], name: str,
                                                         family: str, feature: str) -> None:
    with pytest.raises(NotCompiled, match=f"missing feature: .*{feature}"):
        record_intake(_renamed(records[QWEN], name=name, family=family))


def test_a_hybrid_mamba_row_takes_its_preset_and_compiles(records: dict[str, dict[str, Any]]) -> None:
    """Nemotron-H, as Megatron-Bridge's and DGX Cloud's tables name it, is the nemotron-h-56b preset."""
    ri = record_intake(_renamed(records[LLAMA], name="NemotronH_56B", family="nemotronh"))
    assert ri.intake["model"] == {"preset": "nemotron-h-56b"}
    predicted = step_row(compile_record(ri, load_catalog())).predicted
    assert predicted is not None and predicted > 0
    nano = record_intake(_renamed(records[QWEN], name="Nemotron_3_Nano_30B_A3B", family="nemotron"))
    assert nano.intake["model"] == {"preset": "nemotron-3-nano-30b-a3b"}
    assert step_row(compile_record(nano, load_catalog())).predicted > 0


@pytest.mark.parametrize(("name", "preset"), [("Nemotron_3_Super_120B_A12B", "nemotron-3-super-120b-a12b"),
                                               ("Qwen3_Next_80B_a3B", "qwen3-next-80b-a3b")])
def test_latent_moe_and_gated_deltanet_rows_take_their_presets(records: dict[str, dict[str, Any]], name: str,
                                                               preset: str) -> None:
    ri = record_intake(_renamed(records[QWEN], name=name, family="hybrid"))
    assert ri.intake["model"] == {"preset": preset}
    assert step_row(compile_record(ri, load_catalog())).predicted > 0


def test_the_name_tables_are_consistent() -> None:
    """Every preset named exists; no spelling maps to two presets; qualifiers are distinct."""
    data = sources()
    assert set(data["models"]) <= set(list_presets())
    seen: dict[str, str] = {}
    for preset, names in data["models"].items():
        for n in names:
            assert seen.setdefault(name_key(n), preset) == preset, (n, preset, seen[name_key(n)])
    keys = [name_key(q) for q in data["qualifiers"]]
    assert len(keys) == len(set(keys))


def test_inference_records_take_other_spellings_and_catalog_gpus() -> None:
    doc = load_inference(find_calibration_dir(require(calibration_dir())))
    base = next(e for e in doc["entries"] if e["id"].startswith("trtllm-perfov-v1.0/Llama_3.3_70B/B200/TP1/fp4"))
    catalog = load_catalog()
    for model, hardware, preset, acc in [("meta-llama/Llama-3.3-70B", "GB300", "llama3.3-70b", "gb300"),
                                         ("Kimi-K2", "GB200", "kimi-k2", "gb200")]:
        rec = dict(base, model=model, hardware=hardware)
        ri = throughput_intake(rec, catalog)
        assert ri.intake["model"] == {"preset": preset} and ri.intake["compute"]["accelerator"] == acc
    for printed in ("FP4", "NVFP4", "nvfp4"):     # the NVFP4 checkpoints as other tables print them
        assert throughput_intake(dict(base, precision=printed), catalog).intake["serving"]["weights"] == "nvfp4"
    with pytest.raises(NotCompiled, match="precision 'MXFP6' is not mapped"):
        throughput_intake(dict(base, precision="MXFP6"), catalog)
    with pytest.raises(NotCompiled, match="no catalog accelerator"):
        throughput_intake(dict(base, hardware="TPU v5p"), catalog)
    with pytest.raises(NotCompiled, match="no preset's name"):
        throughput_intake(dict(base, model="Falcon-H1-34B"), catalog)


@pytest.mark.parametrize(("printed", "precision"), [("NVFP4", "nvfp4"), ("FP4", "nvfp4"), ("FP8-SC", "fp8_blockwise"),
                                                    ("FP8-MX", "mxfp8"), ("FP8-CS", "fp8"), ("BF16", "bf16")])
def test_precision_columns_as_the_tables_print_them(records: dict[str, dict[str, Any]], printed: str,
                                                    precision: str) -> None:
    """Megatron-Bridge's precision column (FP8-CS current scaling, FP8-MX MXFP8, FP8-SC sub-channel
    blocks, NVFP4); a precision the step model has no GEMMs for is not compiled, never read as BF16."""
    rec = copy.deepcopy(records[LLAMA])
    rec["precision"] = printed
    assert record_intake(rec).intake["training"]["precision"] == precision
    rec["precision"] = "MXFP4"
    with pytest.raises(NotCompiled, match="MXFP4"):
        record_intake(rec)


def test_a_source_not_yet_in_the_data_takes_the_framework_its_record_names(records: dict[str, dict[str, Any]]) -> None:
    """A newer table under an id prefix training_sources.yaml has no entry for: the record's own
    framework text ('Megatron-Bridge / NeMo 25.11' -> the nemo profile), noted; no source default."""
    rec = copy.deepcopy(records[LLAMA])
    rec["id"] = "megatronbridge2612_pretraining_h100_llama3_70b_fp8cs_64gpu"
    ri = record_intake(rec)
    assert ri.intake["training"]["framework"] == "nemo"
    assert any("framework text" in n for n in ri.notes)
    rec["framework"] = "torchtitan (FSDP2 + TP)"
    assert record_intake(rec).intake["training"]["framework"] == "torchtitan"
