"""Pipeline layouts as Megatron-Core defines them (perf/pipeline_layout.py, perf/stages.py,
planner/stage_pins.py): the layout string, uneven first/last stages, the embedding and the loss as
layers, and the balanced split the planner chooses. Sources: Megatron-Core docs "Custom Pipeline
Model Parallel Layout" (DeepSeek-V3 on PP16 VPP2: "Et*3|(tt|)*29,m|L"), Megatron-Core
`get_num_layers_to_build` (uneven first/last stages, account-for-embedding/loss), Llama 3
(arXiv:2407.21783 §3.3.2: one layer fewer on the first and the last stage)."""

from __future__ import annotations

import numpy as np
import pytest

from workload_compiler import compile_workload
from workload_compiler.errors import InputError
from workload_compiler.perf.pipeline_layout import parse_layout
from workload_compiler.perf.stages import balanced_split, layout_string


def test_the_megatron_docs_example_parses_to_its_table() -> None:
    """PP rank 0: embedding + 3 decoder, then 2; ranks 1-13: 2 + 2; rank 14: 2 + mtp; rank 15: 2 + loss."""
    p = parse_layout("Et*3|(tt|)*29,m|L", pp=16, layers=61, mtp_layers=1)
    assert p.vp == 2
    assert p.decoder_layers_per_rank() == (5,) + (4,) * 13 + (2, 2)
    assert p.rank_stages(0) == ("Ettt", "tt") and p.rank_stages(14) == ("tt", "m") and p.rank_stages(15) == ("tt", "L")
    assert p.mtp_rank() == 14


@pytest.mark.parametrize(("text", "where"), [
    ("Et*3|(tt|*29,m|L", "position 9"),      # '*' where a letter or ')' belongs
    ("Ex|L", "position 1"),                   # unknown letter
    ("Et*0|L", "position 3"),                 # repeat count out of range
    ("E(tt|L", "unclosed"),
])
def test_a_bad_token_is_named_with_its_position(text: str, where: str) -> None:
    with pytest.raises(InputError, match=where):
        parse_layout(text, pp=1, layers=2)


@pytest.mark.parametrize(("text", "why"), [
    ("tE|L", "first layer must be E"),
    ("Et*60|L", "60 decoder layers"),
    ("Et*61|L|L", "exactly once"),
    ("Em|t*61L", "before MTP"),
    ("Et*61|L", "do not divide"),            # 2 stages on pp 4
])
def test_megatron_cores_layout_rules(text: str, why: str) -> None:
    with pytest.raises(InputError, match=why):
        parse_layout(text, pp=4, layers=61, mtp_layers=1 if "m" in text else 0)


def test_balanced_split_counts_embedding_and_loss_as_a_layer() -> None:
    # Llama 3.1 405B, pp 8: 128 slots, 16 per rank; rank 0 and 7 build one decoder layer fewer
    assert [int(x) for x in balanced_split(126, np.asarray(8))] == [15, 16, 15]
    # Llama 3 405B on pp 16: 7 + 14 x 8 + 7 = 126 (the paper's "one fewer layer" split)
    assert [int(x) for x in balanced_split(126, np.asarray(16))] == [7, 8, 7]
    # DeepSeek-V3, 61 layers on pp 2 (no middle rank): 63 slots -> 32 and 31
    assert [int(x) for x in balanced_split(61, np.asarray(2))] == [31, 0, 30]


@pytest.mark.parametrize(("first", "mid", "last", "pp", "vp"),
                         [(15, 16, 15, 8, 8), (3, 4, 2, 16, 2), (31, 0, 30, 2, 4)])
def test_layout_string_realizes_the_split(first: int, mid: int, last: int, pp: int, vp: int) -> None:
    layers = first + max(pp - 2, 0) * mid + last
    p = parse_layout(layout_string(first, mid, last, pp, vp), pp=pp, layers=layers)
    counts = p.decoder_layers_per_rank()
    assert counts[0] == first and counts[-1] == last and p.vp == vp
    assert all(c == mid for c in counts[1:-1])


def _intake(**parallelism: object) -> dict[str, object]:
    return {"kind": "training", "model": {"preset": "deepseek-v3"},
            "training": {"tokens": "1T", "seq_len": 4096, "global_batch_size": 4096, "precision": "fp8"},
            "compute": {"accelerator": "gb200", "gpus": 256,
                        "parallelism": {"tp": 1, "pp": 4, "dp": 64, "ep": 64, "micro_batch_size": 1, **parallelism}}}


def test_deepseek_61_layers_on_pp_and_vp_compile_with_an_uneven_split() -> None:
    """The issue's example: 61 layers on pp x vp that do not divide them (Megatron-Bridge runs them)."""
    spec = compile_workload(_intake(vp=4))
    assert spec.compute is not None, spec.binding_constraint
    par = spec.compute.parallelism  # type: ignore[union-attr]
    assert (par.pp, par.vp) == (4, 4)
    assert par.first_stage_layers + 2 * par.middle_stage_layers + par.last_stage_layers >= 61
    assert par.pipeline_layout and par.pipeline_layout.startswith("E")


def test_a_pinned_layout_string_is_used_as_given() -> None:
    text = "Et*15|(t*16|)*2t*14mL"
    spec = compile_workload(_intake(pipeline_layout=text))
    assert spec.compute is not None, spec.binding_constraint
    par = spec.compute.parallelism  # type: ignore[union-attr]
    assert par.pipeline_layout == text
    assert (par.first_stage_layers, par.middle_stage_layers, par.last_stage_layers) == (15, 16, 14)


def test_first_and_last_stage_layers_follow_megatron_core() -> None:
    spec = compile_workload(_intake(first_stage_layers=13, last_stage_layers=14))   # 61 - 27 = 34 = 2 x 17
    par = spec.compute.parallelism  # type: ignore[union-attr]
    assert (par.first_stage_layers, par.middle_stage_layers, par.last_stage_layers) == (13, 17, 14)
    # 61 - 12 - 14 = 35 does not split over 2 middle ranks: Megatron-Core asserts, so no layout exists
    bad = compile_workload(_intake(first_stage_layers=12, last_stage_layers=14))
    assert not bad.feasible and "pinned pipeline split" in (bad.binding_constraint or "")


def test_a_layout_without_pp_is_an_input_error() -> None:
    intake = _intake(pipeline_layout="Et*61mL")
    del intake["compute"]["parallelism"]["pp"]  # type: ignore[index]
    with pytest.raises(InputError, match="pp"):
        compile_workload(intake)


def test_embedding_and_loss_as_layers_make_the_outer_chunks_light_like_the_layout_string() -> None:
    """Megatron-Core's account-for-embedding/loss gives every virtual stage (L + 2) / (pp vp) slots:
    Llama 3 405B on pp 16 x vp 8 has one per chunk, so rank 0's chunk 0 is the embedding alone and
    the last rank's last chunk the loss alone, which is Meta's layout (arXiv:2407.21783 §3.3.2)
    spelled out. Both pins give the same split and chunk leads, and rank 0 stores 112 layer-micro-
    batches at its peak (16 of each of its 7 one-layer chunks), not 143 x 7 / 8."""
    from workload_compiler.arch.presets import preset_arch
    from workload_compiler.intake.common import ParallelismIntake
    from workload_compiler.perf.layout import Layout
    from workload_compiler.perf.stages import resolve_stages
    from workload_compiler.planner.stage_pins import stage_pin
    arch = preset_arch("llama3.1-405b")
    pp, vp = np.asarray(16), np.asarray(8)
    flags = stage_pin(ParallelismIntake(pp=16, vp=8, embedding_as_layer=True, loss_as_layer=True), arch)
    text = stage_pin(ParallelismIntake(pp=16, pipeline_layout="E|(t|)*126L"), arch)
    assert flags is not None and text is not None
    split = [int(x) for x in flags.split(arch.layers, pp, vp)[:3]]
    assert split == [int(x) for x in text.split(arch.layers, pp, vp)[:3]] == [7, 8, 7]
    leads = [int(x) for x in flags.chunk_leads(arch.layers, pp, vp)]
    assert leads[0] == 0 and leads[2] == 1 and [int(x) for x in text.chunk_leads(arch.layers, pp, vp)] == [0, 1, 1]
    layout = Layout.of(tp=8, pp=16, dp=64, cp=1, ep=1, etp=1, vp=8, mbs=1, recompute=0, sp=True, zero=1,
                       first_layers=7, mid_layers=8, last_layers=7, first_lead=leads[0], last_lead=leads[2])
    st = resolve_stages(arch, layout, np.asarray(32.0))
    assert float(st.in_flight[0]) == 143 and float(st.stored[0]) == 112
    assert float(st.stored[1]) == 141           # rank 1: 8 one-layer chunks, 141 alive
