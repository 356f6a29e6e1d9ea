"""Published training runs through the user's path (validation/training_intake.py, training_suite.py):
every record becomes the intake a user would write and is compiled; the sources' FLOP definitions;
the calibration error budget.

Records: ../shared/calibration/training_public.yaml and training_added.yaml.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from shared_data import calibration_dir, require
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.intake.load import parse_workload
from workload_compiler.validation.flops_definitions import (
    megatron_model_flops,
    narayanan_eq3,
    nemo_model_flops_noncausal,
)
from workload_compiler.validation.report import mape
from workload_compiler.validation.suites import find_calibration_dir
from workload_compiler.validation.training_intake import NotCompiled, RecordIntake, load_records, record_intake
from workload_compiler.validation.training_suite import TrainingCase, step_row, training_cases

# The budget perf/fitted.py records (tools/fit_training.py); a regression past it (+ a margin) fails.
OVERALL_MAPE_LIMIT_PCT = 5.99 + 0.5
GROUP_MAPE_LIMIT_PCT = 16.0 + 1.0


@pytest.fixture(scope="module")
def calibration() -> Path:
    return find_calibration_dir(require(calibration_dir()))


@functools.cache
def _compiled(path: str) -> tuple[dict[str, TrainingCase], dict[str, str]]:
    cases, skipped = training_cases(load_records(Path(path)), load_catalog())
    return {c.id: c for c in cases}, {s.id: s.reason for s in skipped}


@pytest.fixture(scope="module")
def compiled(calibration: Path) -> tuple[dict[str, TrainingCase], dict[str, str]]:
    return _compiled(str(calibration))


def _intake(calibration: Path, rid: str) -> RecordIntake:
    rec = next(r for r in load_records(calibration) if r["id"] == rid)
    return record_intake(rec)


def test_every_record_is_compiled_or_listed_with_the_reason(calibration: Path, compiled) -> None:  # type: ignore[no-untyped-def]
    cases, skipped = compiled
    ids = {r["id"] for r in load_records(calibration)}
    assert set(cases) | set(skipped) == ids and not set(cases) & set(skipped)
    assert len(cases) >= 220
    assert all(reason for reason in skipped.values())


def test_a_record_is_the_intake_a_user_would_write(calibration: Path) -> None:
    """The intake validates as any user's YAML does, with the source's silent values noted."""
    ri = _intake(calibration, "narayanan2021_t1_1008.0b")
    w = parse_workload(ri.intake)
    # Table 1 does not state the micro-batch: left unset, as a user who does not know it leaves it,
    # and the planner picks it (as it picks recompute where a record is silent)
    assert w.compute.parallelism.micro_batch_size is None         # type: ignore[attr-defined]
    assert not any("micro-batch" in n for n in ri.notes)
    assert ri.intake["training"]["attention_kernel"] == "unfused"  # Megatron-LM 2021
    k = _intake(calibration, "korthikanti2022_t5_175b_present").intake["compute"]["parallelism"]
    assert (k["vp"], k["recompute"], k["sequence_parallel"]) == (3, "selective", True)
    ptd = _intake(calibration, "narayanan2021_t2_ptd_174b_384gpu")
    assert (ptd.intake["compute"]["parallelism"]["tp"], ptd.intake["compute"]["parallelism"]["pp"]) == (8, 12)
    assert any("model-parallel size 96" in n for n in ptd.notes)
    drop = _intake(calibration, "mbridge_2509_pretraining_b200_qwen3_30b_a3b_tokendrop_fp8_8gpu")
    assert drop.intake["training"]["moe_capacity_factor"] == 1.0 and drop.intake["model"] == {"preset": "qwen3-30b-a3b"}


def test_record_quirks_live_in_data(calibration: Path) -> None:
    """Llama 3 405B on pp 16 (arXiv:2407.21783 §3.3.2): one layer fewer on the first and the last
    stage, which leaves the first rank's chunk 0 the embedding alone and the last rank's last chunk
    the loss alone: one layer per chunk, vp 8."""
    ri = _intake(calibration, "llama3_405b_table4_row1")
    layout = ri.intake["compute"]["parallelism"]["pipeline_layout"]
    from workload_compiler.perf.pipeline_layout import parse_layout
    parsed = parse_layout(layout, 16, 126)
    counts = parsed.decoder_layers_per_rank()
    assert counts[0] == counts[-1] == 7 and set(counts[1:-1]) == {8}
    assert parsed.vp == 8 and parsed.rank_stages(0)[0] == "E" and parsed.rank_stages(15)[-1] == "L"


def test_hardware_and_cluster_from_the_intake(compiled) -> None:  # type: ignore[no-untyped-def]
    cases, skipped = compiled
    assert cases["dgxc_v2503_llama_3_1_70b_bf16_64gpu"].hardware.accelerator_id == "h100-sxm"
    assert cases["mbridge_2511_pretraining_gb200_llama3_8b_fp8cs_8gpu"].hardware.accelerator_id == "gb200"
    # IBM fms-fsdp blog: 800 Gb/s per H100 node -> 12.5 GB/s per GPU.
    assert cases["ibm_fsdp_llama2_7b_h100"].hardware.scale_out_bandwidth_bytes_per_s == pytest.approx(12.5e9)
    assert cases["nemo2407_h100_fp8_lora_llama2_7b"].setup.lora is not None      # NeMo 24.07 LoRA
    assert "float8 rowwise" in next(reason for rid, reason in skipped.items() if "rowwise" in rid)


def test_not_a_run_is_not_compiled(calibration: Path) -> None:
    rec = next(r for r in load_records(calibration) if r["id"] == "narayanan2021_eq4_gpt3_175b")
    with pytest.raises(NotCompiled, match="estimate"):
        record_intake(rec)


def test_narayanan_eq3_reproduces_the_records_implied_iteration_time(compiled) -> None:  # type: ignore[no-untyped-def]
    """derived_checks of narayanan2021_t1_1.7b / _1008.0b: F/(X n) = 3.53 s and 102.63 s."""
    cases, _ = compiled
    for rid, seconds in (("narayanan2021_t1_1.7b", 3.53), ("narayanan2021_t1_1008.0b", 102.63)):
        c = cases[rid]
        assert c.record.published_step_time_s == pytest.approx(seconds, rel=2e-3)
        f = narayanan_eq3(c.arch, c.setup.global_batch_size, c.setup.seq_len)
        assert c.record.published_step_time_s == pytest.approx(f / (c.gpus * (137e12 if "1.7b" in rid else 163e12)))


def test_megatron_model_flops_is_korthikanti_eq7_for_gpt(compiled) -> None:  # type: ignore[no-untyped-def]
    """72 B s L h^2 (1 + s/(6h) + V/(12 h L)) (Korthikanti et al. 2022, Eq. 7) for MHA, ffn = 4h."""
    cases, _ = compiled
    a = cases["megatron_core_h100_weak_177b"].arch
    b, s, n_l, h, v = 1152, 4096, a.layers, a.hidden_size, a.vocab_size
    expected = 72 * b * s * n_l * h**2 * (1 + s / (6 * h) + v / (12 * h * n_l))
    assert megatron_model_flops(a, b, s) == pytest.approx(expected, rel=1e-12)


def test_nemo_noncausal_definition_matches_the_nemo_2407_row(compiled) -> None:  # type: ignore[no-untyped-def]
    """NeMo 24.07 Llama 2 7B on 8 H100: 780 TFLOP/s at 16,934 tokens/s/GPU -> 4.61e10 FLOP/token."""
    cases, _ = compiled
    a = cases["nemo2407_h100_fp8_llama2_7b_8gpu"].arch
    per_token = nemo_model_flops_noncausal(a, 1, 4096) / 4096
    assert per_token == pytest.approx(780e12 / 16934, rel=0.01)


def test_calibration_error_stays_within_the_fitted_budget(compiled) -> None:  # type: ignore[no-untyped-def]
    """Overall MAPE of the step time over every record with one, and each source family's."""
    cases, _ = compiled
    rows = [step_row(c) for c in cases.values() if c.record.published_step_time_s is not None]
    assert mape(rows) < OVERALL_MAPE_LIMIT_PCT
    for g in {r.group for r in rows}:
        assert mape([r for r in rows if r.group == g]) < GROUP_MAPE_LIMIT_PCT, g
    assert all(np.isfinite(r.predicted) and 0 < (r.mfu or 0) < 1 for r in rows)


def test_h100_llama3_70b_fp8_runs_as_its_config_without_recompute(compiled) -> None:  # type: ignore[no-untyped-def]
    """NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/llama/llama3_workload_base_configs.py
    LLAMA3_70B_PRETRAIN_CONFIG_H100_FP8_CS_V1 (tp 4, pp 8, vp 5, the layout of these rows) sets no
    recompute. With Transformer Engine's FP8 inputs at 1 byte the memory model fits it without,
    and the planner, free to choose, runs it so (before: module recompute, 8-11% slow)."""
    cases, _ = compiled
    ids = [i for i in cases if i.startswith("mbridge_") and "_h100_llama3_70b_fp8" in i and "pretraining" in i]
    assert len(ids) == 6
    for i in ids:
        assert int(np.asarray(cases[i].layout.recompute)) == 0, i


def test_deepseek_v3_on_gb200_fits_without_full_recompute_as_its_configs_run(compiled) -> None:  # type: ignore[no-untyped-def]
    """NVIDIA-NeMo/Megatron-Bridge scripts/performance/configs/deepseek/deepseek_workload_base_configs.py:
    DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V1 and _GB200_BF16_V1 set recompute_modules=["mla_up_proj"].
    Free to choose, the planner keeps both GB200 rows off full recompute (forced into it before,
    +34% and +36%: the BF16 one fits only in the 184.31 GiB a GB200 process sees, not in the
    vendor's 186e9 B): the configs' mla_up_proj, or none where the memory model finds that fits
    (the experts keep no output since their activation carries the routing probabilities), and
    lands within 8% of the published steps (MXFP8 -3.2%, BF16 +6.1% with the last 2026-12-04 refit)."""
    cases, _ = compiled
    for rid in ("mbridge_2511_pretraining_gb200_deepseekv3_w_o_mtp_fp8mx_256gpu",
                "mbridge_2511_pretraining_gb200_deepseekv3_w_o_mtp_bf16_256gpu"):
        case = cases[rid]
        assert int(np.asarray(case.layout.recompute)) in (0, 5), rid
        assert abs(step_row(case).error) < 0.08, rid


def test_gb200_llama3_70b_offloads_activations_as_its_configs_do(compiled) -> None:  # type: ignore[no-untyped-def]
    """Megatron-Bridge's GB200 Llama 3 70B FP8 configs run Megatron-FSDP at mbs 2 with no recompute and
    cpu_offloading_num_layers 40 (llama3_workload_base_configs.py). Free to choose, the planner
    offloads a count near 40 over NVLink-C2C (forced into full recompute before: +13% and +22%).
    Since the GPU's measured GEMM ceiling rides on the fitted one (GB200's is the lowest measured,
    0.87x the median GPU's at BF16) both are predicted slow, +11% and +20% (they were -3% and +5%):
    the bound is 22%, the errors stay in the validation report."""
    cases, _ = compiled
    for rid in ("mbridge_2509_pretraining_gb200_llama3_70b_fp8_64gpu",
                "mbridge_2511_pretraining_gb200_llama3_70b_fp8cs_64gpu"):
        case = cases[rid]
        assert int(np.asarray(case.layout.recompute)) == 0, rid
        assert 30 <= int(np.asarray(case.layout.offload)) <= 50, rid
        assert abs(step_row(case).error) < 0.22, rid


def test_every_run_that_states_its_layout_and_micro_batch_fits(calibration: Path, compiled) -> None:  # type: ignore[no-untyped-def]
    """Issue 7's invariant, on the user's path: a published run that ran and states its layout and
    micro-batch is never answered "does not fit" (each such record compiled from its intake)."""
    cases, _ = compiled
    stated = {r["id"] for r in load_records(calibration) if (r.get("batch") or {}).get("micro_batch") is not None}
    covered = [c for c in cases.values() if c.id in stated]
    assert len(covered) >= 180
    misfits = [(c.id, c.binding) for c in covered if not c.fits]
    assert not misfits
    headroom = [1 - c.memory_per_gpu_bytes / c.hardware.hbm_bytes for c in covered]
    assert min(headroom) >= 0.0


def test_no_run_that_ran_is_answered_does_not_fit(compiled) -> None:  # type: ignore[no-untyped-def]
    """Every compiled record is a run that ran, whether or not it states its micro-batch (Llama 3
    405B's does not: Meta's 8,192-GPU row fits only without the fitted runtime reserve, a tight fit)."""
    cases, _ = compiled
    assert [c.id for c in cases.values() if not c.fits] == []
    assert cases["llama3_405b_table4_row1"].fits and cases["llama3_405b_table4_row2"].fits


@pytest.mark.parametrize("rid", ["llama3_405b_table4_row2", "dgxc_v2503_llama_3_1_405b_fp8_1152gpu",
                                 "mbridge_2511_pretraining_gb200_deepseekv3_w_o_mtp_fp8mx_256gpu"])
def test_validate_and_compile_give_the_same_answer(calibration: Path, compiled, rid: str) -> None:  # type: ignore[no-untyped-def]
    """One rule set: the row `wkc validate` scores is the compile of the same intake (issue 7: Meta's
    Llama 3 405B on 16,384 H100 was scored with one vp and compiled with another)."""
    from workload_compiler import compile_workload
    cases, _ = compiled
    case = cases[rid]
    spec = compile_workload(case.record.intake)
    row = step_row(case)
    if case.fits:
        assert spec.compute is not None
        assert spec.compute.step_time_s == pytest.approx(row.predicted, rel=1e-9)  # type: ignore[union-attr]
        assert spec.compute.parallelism.vp == int(case.layout.vp)  # type: ignore[union-attr]
    else:
        assert not spec.feasible and spec.binding_constraint == case.binding
