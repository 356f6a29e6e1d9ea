""""Nothing fits" decided from the smallest micro-batch (planner/no_fit.py): the same result as the
search, census and reason included, and the monotonicity it rests on."""

from __future__ import annotations

import numpy as np
import pytest

from workload_compiler.arch.lora import LoraSpec
from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.frameworks import framework_profile
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.perf.layout import TrainingSetup
from workload_compiler.perf.memory import training_memory_total
from workload_compiler.planner.blocks import MEMORY_REASON, quiet, rule_mask
from workload_compiler.planner.grid import build_space, layout_of, rules
from workload_compiler.planner.result import PlanResult
from workload_compiler.planner.search import search

CAT = load_catalog()


def _same(a: PlanResult, b: PlanResult) -> None:
    assert [x.to_dict() for x in a.layouts] == [x.to_dict() for x in b.layouts]
    assert (a.evaluated, a.feasible, a.rejected, a.infeasible) == (b.evaluated, b.feasible, b.rejected, b.infeasible)


@pytest.mark.parametrize("case", [
    # Llama 3 70B's state (16 B a parameter, 1.13 TB) over 8 x 80 GB: the state binds
    ("llama3-70b", "h100-sxm", 8, 8192, 1024, None),
    # DeepSeek-V3 on 64 H100 (bounded search's space, 4.5M layouts): nothing fits
    ("deepseek-v3", "h100-sxm", 64, 4096, 1920, None),
    # a LoRA rank of 2^20 (the fuzz case that walked a million GPUs): its activations bind
    ("llama3-8b", "h100-sxm", 1024, 4096, 1024, 1 << 20),
    # NeMo on GB200 offloads activations over NVLink-C2C where that makes a layout fit (Space.offload_auto):
    # Llama 3.1 405B's state on 16 GPUs still does not
    ("llama3.1-405b", "gb200", 16, 8192, 128, None),
], ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_a_count_where_nothing_fits_gets_the_searchs_own_answer(
        case: tuple[str, str, int, int, int, int | None]) -> None:
    preset, accelerator, gpus, seq, gbs, rank = case
    arch, hw = preset_arch(preset), CAT.hardware(accelerator)
    setup = TrainingSetup(seq_len=seq, global_batch_size=gbs, precision="bf16",
                          lora=LoraSpec(rank=rank) if rank else None,
                          **({"framework": framework_profile("nemo")} if accelerator == "gb200" else {}))
    if accelerator == "gb200":
        assert build_space(arch, setup, hw, gpus).offload_auto
    searched = search(arch, setup, hw, gpus)
    probed = search(arch, setup, hw, gpus, expect_no_fit=True)
    assert searched.best is None and searched.infeasible is not None
    assert searched.infeasible[0] == MEMORY_REASON       # the reason names the leanest layout and its bytes
    _same(probed, searched)


def test_where_a_layout_fits_the_hint_changes_nothing() -> None:
    arch, hw = preset_arch("mixtral-8x7b"), CAT.hardware("h100-sxm")
    setup = TrainingSetup(seq_len=4096, global_batch_size=1024, precision="bf16")
    searched = search(arch, setup, hw, 64, top_k=5)
    probed = search(arch, setup, hw, 64, top_k=5, expect_no_fit=True)
    assert searched.best is not None
    _same(probed, searched)


@pytest.mark.parametrize("preset", ["llama3-70b", "deepseek-v3", "nemotron-h-56b", "qwen3-30b-a3b"])
def test_memory_never_falls_as_the_micro_batch_grows(preset: str) -> None:
    """What no_fit.py rests on: along the micro-batch axis, every layout no rule rejects takes at least
    the memory of the same layout at the next smaller micro-batch (which the rules then admit too)."""
    arch, hw = preset_arch(preset), CAT.hardware("h100-sxm")
    setup = TrainingSetup(seq_len=4096, global_batch_size=1024, precision="fp8")
    space = build_space(arch, setup, hw, 256)
    rule_list = rules(arch, setup, hw, space)
    counts = dict.fromkeys([r for r, _ in rule_list], 0)
    pairs = 0
    for r0 in range(0, space.shape[0], 256):
        values, alive = rule_mask(space, r0, min(space.shape[0], r0 + 256), rule_list, counts)
        with quiet():
            mem = np.broadcast_to(training_memory_total(arch, setup, layout_of(values, space))["total"], alive.shape)
        assert not (alive[:, 1:] & ~alive[:, :-1]).any()          # a larger micro-batch admitted: a smaller too
        both = alive[:, 1:] & alive[:, :-1]
        assert not (both & (mem[:, 1:] < mem[:, :-1] * (1 - 1e-12))).any()
        pairs += int(both.sum())
    assert pairs > 10_000


def test_the_deadline_walk_probes_each_count_after_one_where_nothing_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A LoRA rank of 2^20 fits on no count: the walk searches the first count of the ladder and
    probes the others, and still names the cap and the reason."""
    import importlib

    from workload_compiler import compile_workload
    from workload_compiler.planner import no_fit

    search_module = importlib.import_module("workload_compiler.planner.search")   # the module, not the function

    probed: list[bool] = []

    def spy(*args: object, **kwargs: object) -> int | None:
        found = no_fit.leanest_if_nothing_fits(*args, **kwargs)  # type: ignore[arg-type]
        probed.append(found is not None)
        return found

    monkeypatch.setattr(search_module, "leanest_if_nothing_fits", spy)
    intake = {"kind": "training", "name": "no fit", "model": {"preset": "llama3-8b"},
              "training": {"tokens": "10B", "seq_len": 4096, "global_batch_size": 1024, "lora": {"rank": 1 << 20}},
              "target": {"time_to_train": "30d"}, "compute": {"accelerator": "h100-sxm", "max_gpus": 4096}}
    spec = compile_workload(intake)
    binding = spec.binding_constraint or ""
    assert not spec.feasible and "no layout of the model fits on 4,096 or fewer h100-sxm GPUs" in binding
    # and what binds there, in bytes by term: the leanest layout of the largest count searched
    assert "at the most GPUs searched, the leanest valid layout on 4,096 GPUs" in binding and "activations" in binding
    assert len(probed) >= 3 and all(probed)      # every probe after the first search found nothing fits
