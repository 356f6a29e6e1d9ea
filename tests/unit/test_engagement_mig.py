"""MIG and fractional GPUs for small serving models: sourced profiles, fits or not, replicas per
GPU, what it does to cost."""

from __future__ import annotations

import pytest
from engagement_builders import CHAT, MIG, compiled, intake

from workload_compiler import compile_workload


def test_a_small_model_fits_a_slice_and_per_slice_billing_costs_less() -> None:
    m = compiled(MIG).mig
    assert m is not None and m.supported and m.accelerator == "h100-sxm"
    by = {p.profile: p for p in m.profiles}
    assert set(by) == {"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}
    assert by["1g.10gb"].memory_bytes == pytest.approx(80e9 / 8 * 0.9)      # 1 of 8 memory slices, engine fraction
    assert not by["1g.10gb"].fits and "needs" in by["1g.10gb"].why
    assert by["1g.20gb"].fits and by["1g.20gb"].replicas_per_gpu == 4
    assert m.best_profile == "1g.20gb"
    # N+1: the spare slice lives on a second GPU, so partitioning saves no GPU here; per-slice billing does
    assert m.gpus_with_mig == 2 and m.gpus_whole == 2
    best = by["1g.20gb"]
    assert best.fractional_gpus == pytest.approx((best.slices_needed or 0) * 2 / 8)
    assert (best.cost_usd_per_hour_fractional or 0) < (m.cost_usd_per_hour_whole or 0)
    assert "MIG User Guide" in m.source


def test_a_model_spanning_gpus_does_not_fit_a_slice() -> None:
    # The chat example with its replicas pinned to TP2: the search alone may serve the 70B model
    # from one H200 (TP1, as the TensorRT-LLM tables run it), which a 7g slice then holds.
    data = intake(CHAT)
    data["compute"]["parallelism"] = {"tp": 2}
    m = compile_workload(data).mig
    assert m is not None and m.best_profile is None
    assert all(not p.fits and "do not span GPUs" in p.why for p in m.profiles)


def test_an_accelerator_without_mig_says_so() -> None:
    data = intake(MIG)
    data["compute"] = {"accelerator": "l40s"}
    data["serving"]["weights"] = "fp8"
    m = compile_workload(data).mig
    assert m is not None and not m.supported and "no MIG profiles" in m.verdict
