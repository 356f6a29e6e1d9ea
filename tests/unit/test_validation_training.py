"""Calibration records -> cases, the sources' FLOP definitions, and the calibration error budget.

Records: /work/shared/calibration/training_public.yaml (../shared/calibration beside the repo).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shared_data import calibration_dir, require
from workload_compiler.validation.flops_definitions import (
    megatron_model_flops,
    narayanan_eq3,
    nemo_model_flops_noncausal,
)
from workload_compiler.validation.report import summarize
from workload_compiler.validation.suites import find_calibration_dir, training_rows
from workload_compiler.validation.training_records import Skipped, TrainingCase, load_records, training_cases

# Reached by tools/fit_training.py on 2026 calibration data (see perf/fitted.py: 5.07% in the fit,
# 5.08% once uneven pipeline stages were charged); a regression that pushes the error past these
# (+ a small margin) fails here.
Mapped = tuple[dict[str, TrainingCase], dict[str, Skipped]]
OVERALL_MAPE_LIMIT_PCT = 5.07 + 0.5
GROUP_MAPE_LIMIT_PCT = 12.0 + 1.0


@pytest.fixture(scope="module")
def calibration() -> Path:
    return find_calibration_dir(require(calibration_dir()))


@pytest.fixture(scope="module")
def mapped(calibration: Path) -> Mapped:
    cases, skipped = training_cases(load_records(calibration))
    return {c.id: c for c in cases}, {s.id: s for s in skipped}


def test_every_record_is_used_or_skipped_with_a_reason(calibration: Path, mapped: Mapped) -> None:
    cases, skipped = mapped
    ids = {r["id"] for r in load_records(calibration)}
    assert {i.split("#")[0] for i in cases} | {i.split("#")[0] for i in skipped} == ids
    assert len(cases) >= 100
    assert all(s.reason for s in skipped.values())


def test_assumed_values_are_listed(mapped: Mapped) -> None:
    cases, _ = mapped
    n = cases["narayanan2021_t1_1008.0b"]
    assert any("micro-batch 1" in a for a in n.assumptions)      # Table 1 does not state it
    assert int(n.layout.mbs) == 1 and not n.setup.flash_attention
    k = cases["korthikanti2022_t5_175b_present"]
    assert int(k.layout.vp) == 3 and int(k.layout.recompute) == 1 and bool(k.layout.sp)
    ptd = cases["narayanan2021_t2_ptd_174b_384gpu"]
    assert (int(ptd.layout.tp), int(ptd.layout.pp)) == (8, 12)
    assert any("model-parallel size 96" in a for a in ptd.assumptions)


def test_hardware_from_the_catalog_with_record_overrides(mapped: Mapped) -> None:
    cases, skipped = mapped
    assert cases["dgxc_v2503_llama_3_1_70b_bf16_64gpu"].hardware.accelerator_id == "h100-sxm"
    assert cases["narayanan2021_t1_1.7b"].hardware.accelerator_id == "a100-sxm-80gb"
    # IBM fms-fsdp blog: 800 Gb/s per H100 node -> 12.5 GB/s per GPU.
    assert cases["ibm_fsdp_llama2_7b_h100"].hardware.scale_out_bandwidth_bytes_per_s == pytest.approx(12.5e9)
    # The 500 W H100 96GB of the torchtitan runs has no published peak: skipped, not guessed.
    assert "h100-sxm-96gb" in skipped["torchtitan_2412_t1_fsdp"].reason
    assert "LoRA" in skipped["nemo2407_h100_fp8_lora_llama2_7b"].reason


def test_narayanan_eq3_reproduces_the_records_implied_iteration_time(mapped: Mapped) -> None:
    """derived_checks of narayanan2021_t1_1.7b / _1008.0b: F/(X n) = 3.53 s and 102.63 s."""
    cases, _ = mapped
    for rid, seconds in (("narayanan2021_t1_1.7b", 3.53), ("narayanan2021_t1_1008.0b", 102.63)):
        c = cases[rid]
        assert c.published_step_time_s == pytest.approx(seconds, rel=2e-3)
        f = narayanan_eq3(c.arch, c.setup.global_batch_size, c.setup.seq_len)
        assert c.published_step_time_s == pytest.approx(f / (c.gpus * (137e12 if "1.7b" in rid else 163e12)))


def test_megatron_model_flops_is_korthikanti_eq7_for_gpt(mapped: Mapped) -> None:
    """72 B s L h^2 (1 + s/(6h) + V/(12 h L)) (Korthikanti et al. 2022, Eq. 7) for MHA, ffn = 4h."""
    cases, _ = mapped
    a = cases["megatron_core_h100_weak_177b"].arch
    b, s, n_l, h, v = 1152, 4096, a.layers, a.hidden_size, a.vocab_size
    expected = 72 * b * s * n_l * h**2 * (1 + s / (6 * h) + v / (12 * h * n_l))
    assert megatron_model_flops(a, b, s) == pytest.approx(expected, rel=1e-12)


def test_nemo_noncausal_definition_matches_the_nemo_2407_row(mapped: Mapped) -> None:
    """NeMo 24.07 Llama 2 7B on 8 H100: 780 TFLOP/s at 16,934 tokens/s/GPU -> 4.61e10 FLOP/token."""
    cases, _ = mapped
    a = cases["nemo2407_h100_fp8_llama2_7b_8gpu"].arch
    per_token = nemo_model_flops_noncausal(a, 1, 4096) / 4096
    assert per_token == pytest.approx(780e12 / 16934, rel=0.01)


def test_calibration_error_stays_within_the_fitted_budget(calibration: Path) -> None:
    """Overall MAPE of the step time over every usable record (tools/fit_training.py reached 5.07%
    with the constants of perf/fitted.py); each group's MAPE stays under a looser bound."""
    rows, skipped = training_rows(calibration)
    report = summarize(rows, skipped)
    assert report.overall_mape < OVERALL_MAPE_LIMIT_PCT
    for name, g in report.groups.items():
        assert g.mape < GROUP_MAPE_LIMIT_PCT, name
    assert all(np.isfinite(r.predicted) and 0 < (r.mfu or 0) < 1 for r in rows)
