"""Framework profiles (catalog/data/frameworks.yaml -> perf.framework.FrameworkProfile): every
number sourced, names exact, the generic profile equal to the dataclass default, the intake key
`training.framework` resolved and traced, and the profile carried into the memory model."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from workload_compiler.catalog.frameworks import (
    _parse,
    framework_names,
    framework_profile,
    sourced_profiles,
)
from workload_compiler.catalog.loader import package_yaml
from workload_compiler.errors import InputError
from workload_compiler.intake.load import parse_workload
from workload_compiler.perf.framework import GENERIC, FrameworkProfile
from workload_compiler.provenance import Trace
from workload_compiler.spine.training_defaults import resolve_framework

REQUIRED = {"generic", "megatron", "nemo", "torchtitan", "fsdp", "llm-foundry", "deepspeed", "maxtext"}
_META = {"id", "name", "source", "aliases"}
SOURCED = sorted(f.name for f in dataclasses.fields(FrameworkProfile) if f.name not in _META)


def test_the_issue_s_frameworks_are_profiles() -> None:
    assert set(framework_names()) >= REQUIRED


@pytest.mark.parametrize("pid", sorted(REQUIRED))
def test_every_value_has_a_source(pid: str) -> None:
    """Each field of each profile is {value, source} in the YAML, its own or inherited through
    `extends`; a source is a citation (a path, a config key or a paper), never empty."""
    sp = sourced_profiles()[pid]
    assert set(sp.sources) == set(SOURCED)
    for field, source in sp.sources.items():
        assert len(source.strip()) >= 12, (pid, field, source)


def test_a_number_without_a_source_is_rejected() -> None:
    raw = [dict(e) for e in package_yaml("frameworks.yaml")["frameworks"] if e["id"] == "generic"]
    raw[0]["param_bytes"] = {"value": 2}
    with pytest.raises(ValueError, match="param_bytes"):
        _parse(raw)
    raw[0]["param_bytes"] = 2
    with pytest.raises(ValueError, match="param_bytes"):
        _parse(raw)


def test_unknown_and_missing_fields_are_rejected() -> None:
    base = next(dict(e) for e in package_yaml("frameworks.yaml")["frameworks"] if e["id"] == "generic")
    with pytest.raises(ValueError, match="unknown fields"):
        _parse([base | {"paramz_bytes": {"value": 2, "source": "a typo of ours, caught"}}])
    short = {k: v for k, v in base.items() if k != "grad_bytes"}
    with pytest.raises(ValueError, match="missing fields"):
        _parse([short])


def test_generic_profile_is_the_dataclass_default() -> None:
    """TrainingSetup's default framework (GENERIC) is the YAML's generic profile, number by number,
    so every caller that passes no framework computes what compile computes for an unknown one."""
    g = framework_profile("generic")
    for field in SOURCED:
        assert getattr(g, field) == getattr(GENERIC, field), field


def test_extends_inherits_and_overrides() -> None:
    """llm-foundry is PyTorch FSDP with flash-attn's fused cross-entropy (modeling_mpt.py loss_fn
    'fused_crossentropy'; flash_attn/ops/triton/cross_entropy.py keeps the bf16 logits and writes a
    bf16 dlogits: 4 B per logit); nemo is Megatron-Core with the performance recipes' bf16 gradients."""
    fsdp, foundry = framework_profile("fsdp"), framework_profile("llm-foundry")
    assert foundry.loss_bytes_per_logit == 4 and fsdp.loss_bytes_per_logit == 14
    assert (foundry.param_bytes, foundry.grad_bytes, foundry.optimizer_bytes) == (4, 4, 8)
    mega, nemo = framework_profile("megatron"), framework_profile("nemo")
    assert (mega.grad_bytes, nemo.grad_bytes) == (4, 2)
    assert nemo.loss_bytes_per_logit == mega.loss_bytes_per_logit == 6
    assert "extends" not in sourced_profiles()["nemo"].sources


@pytest.mark.parametrize(("name", "pid"), [("Megatron-Bridge", "nemo"), ("NeMo", "nemo"), ("megatron_lm", "megatron"),
                                           ("FSDP2", "fsdp"), ("composer", "llm-foundry"), ("TorchTitan", "torchtitan"),
                                           ("DeepSpeed", "deepspeed"), ("MaxText", "maxtext")])
def test_names_are_exact_after_normalizing(name: str, pid: str) -> None:
    assert framework_profile(name).id == pid


def test_unknown_framework_is_a_named_error() -> None:
    with pytest.raises(InputError) as exc:
        framework_profile("colossalai")
    assert exc.value.field == "training.framework" and "torchtitan" in exc.value.allowed


def test_megatron_states_match_the_distributed_optimizer_doc() -> None:
    """Megatron-Core dist_optimizer.md: bf16 params with fp32 grads 18 B/param (6 + 12/d), fp16
    params with fp16 grads 20 B (4 + 16/d)."""
    m = framework_profile("megatron")
    assert sum(m.state_bytes("bf16")) == 18 and sum(m.state_bytes("fp16")) == 20
    assert m.state_bytes("bf16")[:2] == (2, 4)


def _workload(framework: str | None) -> Any:
    training: dict[str, Any] = {"tokens": "1B", "seq_len": 2048, "global_batch_size": 64}
    if framework is not None:
        training["framework"] = framework
    return parse_workload({"kind": "training", "model": {"preset": "llama3-8b"}, "training": training})


def test_intake_key_resolves_and_is_traced_as_given() -> None:
    trace = Trace()
    profile = resolve_framework(_workload("torchtitan"), trace)
    assert profile.id == "torchtitan"
    assert trace.provenance["compute.framework"].source == "given"
    assert not any(a.field == "compute.framework" for a in trace.assumptions)


def test_unstated_framework_is_an_assumption_with_why() -> None:
    trace = Trace()
    assert resolve_framework(_workload(None), trace).id == "generic"
    (a,) = [a for a in trace.assumptions if a.field == "compute.framework"]
    assert a.value == "generic" and "training.framework" in a.why and "torchtitan" in a.why


def test_training_setup_carries_the_profile() -> None:
    """compile and plan resolve the intake through the same function (spine/training.py
    resolve_training), so both run the memory model with the intake's profile."""
    from workload_compiler.catalog.loader import load_catalog
    from workload_compiler.spine.training import resolve_training
    r = resolve_training(_workload("llm-foundry"), load_catalog())
    assert r.setup.framework.id == "llm-foundry"
    assert resolve_training(_workload(None), load_catalog()).setup.framework.id == "generic"


def test_bad_framework_in_the_intake_names_the_field() -> None:
    with pytest.raises(InputError) as exc:
        resolve_framework(_workload("pytorch-lightning"), Trace())
    assert exc.value.field == "training.framework"
