"""Packed documents (intake `training.document_tokens`): several documents share a sequence and each
query attends within its own document, so the fused attention core spans a document, not the sequence
(NeMo's packed SFT/PEFT: cu_seqlens with varlen FlashAttention, "each input sequence should be treated
individually", its sequence-packing guide). Nothing else in the step changes: the GEMMs, the memory-bound
kernels and the communication see the same tokens."""

from __future__ import annotations

from typing import Any

import pytest

from small_runs import llama8b_on_8_h100
from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.perf.layout import Layout, TrainingSetup
from workload_compiler.perf.step_time import STEP_TERMS, training_step
from workload_compiler.provenance import Source


def _spec(document_tokens: int | None) -> Any:
    return llama8b_on_8_h100(document_tokens=document_tokens)


def test_only_the_attention_core_shrinks_and_by_the_span() -> None:
    """Llama 3.1 8B at 4,096 tokens: 250-token documents cut the causal attention core to 250 / 4,096 of
    itself (the mean keys per query, span / 2); every other term of the step is unchanged."""
    a = preset_arch("llama3.1-8b")
    hw = load_catalog().hardware("h100-sxm")
    lay = Layout.of(tp=1, pp=1, dp=8, cp=1, ep=1, etp=1, vp=1, mbs=1, recompute=0, sp=False, zero=1)
    whole = TrainingSetup(seq_len=4096, global_batch_size=32, precision="bf16")
    packed = TrainingSetup(seq_len=4096, global_batch_size=32, precision="bf16", document_tokens=250)
    tiny = TrainingSetup(seq_len=4096, global_batch_size=32, precision="bf16", document_tokens=1)
    w, p, t = (training_step(a, s, lay, hw).breakdown_s for s in (whole, packed, tiny))
    core_whole = float(w["compute"] - t["compute"])       # ~all of the core (a 1-token document has ~none)
    core_packed = float(p["compute"] - t["compute"])
    assert core_packed == pytest.approx(core_whole * (250 - 1) / (4096 - 1), rel=1e-6)
    for name in STEP_TERMS:
        if name != "compute":
            assert float(p[name]) == pytest.approx(float(w[name]), rel=1e-12)


def test_the_intake_takes_it_and_says_so() -> None:
    whole, packed = _spec(None), _spec(250)
    assert packed.compute.step_time_s < whole.compute.step_time_s
    assert packed.provenance["training.document_tokens"].source == Source.GIVEN
    assert "training.document_tokens" not in whole.provenance          # pretraining: nothing to say


def test_a_document_longer_than_the_sequence_is_refused_with_the_limit() -> None:
    with pytest.raises(InputError) as exc:
        _spec(8192)
    assert exc.value.field == "training.document_tokens" and "4,096" in str(exc.value)
