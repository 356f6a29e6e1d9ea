"""Every input is answered cleanly: pydantic's errors in the user's words (field, value, what is
allowed, "did you mean"), bounds with their reasons, YAML limits, rates with a number in the
denominator, and the result contract (finite numbers, Infeasible returned, the verdict)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from workload_compiler import compile_workload
from workload_compiler.errors import MISSING, InfeasibleError, InputError, Problem, shown
from workload_compiler.intake.load import parse_workload, read_intake
from workload_compiler.intake.yaml_reader import MAX_DEPTH, parse_yaml
from workload_compiler.spine.finite import make_finite
from workload_compiler.spine.result import SystemSpec
from workload_compiler.units import parse_byte_rate, parse_rate

TRAINING = {"kind": "training", "model": {"preset": "llama3-8b"},
            "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 128}, "compute": {"gpus": 64}}


def error_of(data: Any) -> InputError:
    with pytest.raises(InputError) as info:
        parse_workload(data)
    return info.value


@pytest.mark.parametrize(("text", "per_s"), [("20/s", 20.0), ("20/2s", 10.0), ("1200/min", 20.0), ("5/h", 5 / 3600),
                                             ("3/0.5s", 6.0), ("7", 7.0)])
def test_rates_read_the_number_in_the_denominator(text: str, per_s: float) -> None:
    assert parse_rate(text) == pytest.approx(per_s)


@pytest.mark.parametrize(("text", "bytes_per_s"), [("100GB/2s", 50e9), ("250GB/s", 250e9), ("9TB/h", 9e12 / 3600),
                                                   ("2GiB/s", 2 * 2**30)])
def test_byte_rates_read_the_number_in_the_denominator(text: str, bytes_per_s: float) -> None:
    assert parse_byte_rate(text) == pytest.approx(bytes_per_s)


def test_a_zero_denominator_is_refused() -> None:
    with pytest.raises(InputError, match="positive time in the denominator"):
        parse_rate("5/0s")


def test_unknown_key_gets_did_you_mean_and_the_keys() -> None:
    e = error_of({**TRAINING, "compte": {}})
    assert str(e).startswith("compte: unknown key; did you mean 'compute'? the keys of the intake:")
    e = error_of({**TRAINING, "training": {"tokns": "1T"}})
    assert e.field == "training.tokns" and "did you mean 'tokens'?" in str(e)


def test_unknown_choice_gets_did_you_mean_and_the_choices() -> None:
    e = error_of({**TRAINING, "training": {"precision": "bf61"}})
    assert str(e).startswith("training.precision: 'bf61' is not allowed; did you mean 'bf16'? one of: bf16, ")
    assert error_of({"kind": "trainng"}).allowed.startswith("did you mean 'training'?")


def test_every_problem_is_listed_without_pydantic_internals() -> None:
    e = error_of({"kind": "inference", "model": {"preset": "llama3-8b"},
                  "serving": {"input_tokens": "abc", "weights": "fp9", "bogus": 1}})
    fields = [p.field for p in e.problems]
    assert fields == ["serving.weights", "serving.input_tokens", "serving.bogus"]
    text = str(e)
    for leak in ("function-before", "lambda", "NoneType", "Extra inputs are not permitted", "Input should be"):
        assert leak not in text


def test_a_union_field_is_answered_by_the_member_the_value_looks_like() -> None:
    e = error_of({"kind": "inference", "model": {"preset": "llama3-8b"}, "serving": {"input_tokens": {"mean": -1}}})
    assert [(p.field, p.value) for p in e.problems] == [("serving.input_tokens.mean", -1)]


def test_bounds_name_their_reason() -> None:
    e = error_of({**TRAINING, "compute": {"gpus": 10**7}})
    assert e.field == "compute.gpus" and "at most 1,048,576" in e.allowed and "largest cluster" in e.allowed
    e = error_of({**TRAINING, "model": {"params": "1e30"}})
    assert e.field == "model.params" and "at most" in e.allowed


@pytest.mark.parametrize(("section", "key", "value"), [
    ("training", "seq_len", 10**12), ("training", "tokens", "1e30"), ("model", "layers", 10**6),
    ("facility", "power", "1e30W"), ("facility", "pue", ".inf"), ("fabric", "oversubscription", math.inf),
    ("storage", "token_bytes", math.nan), ("reliability", "failures_per_gpu_day", 5.0),
    ("operations", "restore_time", 1e30),   # found by tools/fuzz_intakes.py: a 20 s spares search
    ("fabric", "nic_bandwidth", 1e-300),    # found by tools/fuzz_intakes.py (seed 90): OverflowError in size_scale_out
    ("fabric", "nic_bandwidth", "100Mb/s"),
])
def test_out_of_range_is_bad_input_not_an_infeasible_answer(section: str, key: str, value: Any) -> None:
    data = {**TRAINING, section: {**TRAINING.get(section, {}), key: value}}   # type: ignore[dict-item]
    assert error_of(data).field == f"{section}.{key}"


GENERIC = read_intake(Path(__file__).resolve().parents[2] / "examples" / "image-classifier-generic.yaml")


@pytest.mark.parametrize(("section", "key", "value"), [
    ("pipeline", "batch_size_per_gpu", 10**55),   # found by tools/fuzz_intakes.py: OverflowError in gpu_step
    ("model", "forward_flops_per_sample", "1e30"), ("model", "params", "1e30"), ("data", "samples", "1e30"),
    ("data", "sample_size", "1e30B"), ("data", "epochs", 1e30), ("pipeline", "cpu_cores_per_gpu", 1e30),
    ("pipeline", "decode_rate_per_core", "1e30/s"), ("pipeline", "gpu_samples_per_s", "1e30/s"),
    ("pipeline", "device_bytes_per_sample", "1e30B"), ("outputs", "bytes_per_sample", "1e30B"),
    ("target", "time_to_result", "1e30s"),
])
def test_generic_quantities_are_bounded_with_their_reason(section: str, key: str, value: Any) -> None:
    e = error_of({**GENERIC, section: {**GENERIC.get(section, {}), key: value}})
    assert e.field == f"{section}.{key}" and "at most" in e.allowed and "(" in e.allowed


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize(("example", "section", "key"), [
    # found by tools/sweep_bounds.py: 5e-324 underflowed to 0 and divided (ZeroDivisionError)
    ("hpc-cfd-fv.yaml", "application", "iterations_per_step"),
    ("hpc-molecular-dynamics.yaml", "target", "ns_per_day"),
    ("image-classifier-generic.yaml", "pipeline", "gpu_efficiency"),
    ("image-classifier-generic.yaml", "pipeline", "gpu_samples_per_s"),
])
def test_a_vanishing_positive_is_refused_with_its_reason(example: str, section: str, key: str) -> None:
    data = read_intake(EXAMPLES / example)
    e = error_of({**data, section: {**data.get(section, {}), key: 5e-324}})
    assert e.field == f"{section}.{key}" and "at least" in e.allowed and "(" in e.allowed


def test_a_load_that_would_need_more_gpus_than_any_cluster_is_an_answer() -> None:
    """Found by tools/fuzz_intakes.py (seed 31): 10^8 requests/s over a 12 kb/s NIC once sized a
    fabric of 619M ranks (MemoryError in fabric/mapping.py); it is infeasible, with what binds. (A NIC
    below 1 Gb/s is now refused at the intake; the slowest one accepted keeps the case.)"""
    spec = compile_workload({
        "kind": "inference", "model": {"preset": "qwen3-30b-a3b", "head_dim": 8192},
        "serving": {"input_tokens": [100, 2000, 8000], "output_tokens": 256, "request_rate": 1e8, "mode": "auto",
                    "ttft": {"p90": "1s"}},
        "compute": {"accelerator": "h100-sxm", "max_gpus": 16}, "fabric": {"nic_bandwidth": "1Gb/s"}})
    assert spec.feasible is False and spec.binding_constraint


def test_a_fabric_beyond_the_gpu_bound_is_infeasible_not_a_rank_map() -> None:
    from workload_compiler.catalog.loader import load_catalog
    from workload_compiler.fabric import plan_fabric_for_system
    from workload_compiler.intake.limits import MAX_GPUS
    cat = load_catalog()
    system = cat.system("dgx-h100")
    switch = next(iter(cat.switches.values()))
    with pytest.raises(InfeasibleError, match="more than the 1,048,576"):
        plan_fabric_for_system(system, switch, gpus=8 * MAX_GPUS, tp=8, pp=1, dp=MAX_GPUS)


def test_zero_tokens_in_or_out_is_refused_where_it_would_divide() -> None:
    for key in ("input_tokens", "output_tokens"):
        e = error_of({"kind": "inference", "model": {"preset": "llama3-8b"}, "serving": {key: 0}})
        assert e.field == f"serving.{key}" and "at least 1" in e.allowed


def test_a_value_is_shown_short_and_never_expanded() -> None:
    assert shown(list(range(10**6))) == "a list of 1000000 item(s)"
    assert len(shown("x" * 10_000)) <= 60
    assert str(Problem("kind", MISSING, "required")) == "kind: missing; required"


def test_duplicate_keys_are_refused_with_their_lines() -> None:
    with pytest.raises(InputError, match=r"'compute' given twice \(lines 2 and 3\)"):
        parse_yaml("kind: training\ncompute: {gpus: 8}\ncompute: {gpus: 16}\n")


def test_alias_expansion_and_depth_are_bounded() -> None:
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    with pytest.raises(InputError, match="after aliases are expanded"):
        parse_yaml(bomb)
    with pytest.raises(InputError, match=f"deeper than {MAX_DEPTH}"):
        parse_yaml("k: " + "[" * 5000 + "]" * 5000)
    assert parse_yaml("a: &x {b: 1}\nc: *x\n") == {"a": {"b": 1}, "c": {"b": 1}}   # ordinary aliases still work


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_intake(tmp_path / "missing.yaml")
    with pytest.raises(InputError, match="a directory"):
        read_intake(tmp_path)
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match="not UTF-8"):
        read_intake(tmp_path / "bin.yaml")


def test_infeasible_is_returned_never_raised() -> None:
    # an HDR A100 hall at 1 kW a rack holds no node: the facility pass is infeasible
    spec = compile_workload({**TRAINING, "compute": {"accelerator": "a100-sxm-80gb", "gpus": 64},
                             "facility": {"rack_power": "1kW"}})
    assert spec.feasible is False and spec.binding_constraint and spec.verdict == "infeasible"


def test_a_non_finite_value_becomes_null_with_its_reason() -> None:
    spec = SystemSpec(kind="training", name=None, feasible=False, binding_constraint="memory: no layout fits",
                      alternatives=[{"name": "x", "change": "y", "time_to_train_s": math.inf, "feasible": False,
                                     "binding": "cap"}])
    make_finite(spec)
    assert spec.alternatives[0].time_to_train_s is None
    assert spec.unreachable == {"alternatives[].time_to_train_s": "not reached: cap"}
    json.dumps(spec.model_dump(mode="json"), allow_nan=False)


def test_a_default_inference_intake_is_finite_everywhere() -> None:
    spec = compile_workload({"kind": "inference", "model": {"preset": "llama3.1-8b"}})
    assert spec.feasible and not spec.unreachable
    front = spec.inference.pareto_front  # type: ignore[union-attr]
    assert front and all(p.ttft_s is not None and math.isfinite(p.ttft_s) for p in front)


def test_inner_infeasible_error_is_still_an_error_class_of_ours() -> None:
    assert issubclass(InfeasibleError, Exception) and InfeasibleError("x", "y").exit_code == 3


@pytest.mark.parametrize(("section", "key", "value"), [
    ("training", "moe_capacity_factor", 1.25), ("training", "moe_load_imbalance", 1.2),
    ("compute.parallelism", "ep_comm_overlap", True), ("compute.parallelism", "ep_dispatcher", "deepep")])
def test_expert_routing_keys_on_a_dense_model_are_refused_not_ignored(section: str, key: str, value: Any) -> None:
    """Llama 3 70B has no routed experts: a routing or dispatch key would change nothing, so the
    intake is refused with the key named (compile, plan and validate share this path)."""
    intake: dict[str, Any] = {"kind": "training", "model": {"preset": "llama3-70b"},
                              "training": {"tokens": "1T", "seq_len": 8192},
                              "compute": {"accelerator": "h100-sxm", "gpus": 512, "parallelism": {}}}
    where = intake
    for part in section.split("."):
        where = where[part]
    where[key] = value
    with pytest.raises(InputError, match=f"{section}.{key}.*mixture-of-experts"):
        compile_workload(intake)
    moe = {**intake, "model": {"preset": "mixtral-8x7b"}}
    assert compile_workload(moe).feasible is not None      # the same key on an MoE model is read


def test_mla_up_proj_recompute_on_a_model_without_mla_is_refused() -> None:
    """Megatron-Core's mla_up_proj recomputes multi-latent attention's up-projections: on Llama 3
    70B (grouped-query attention) it would mean nothing, so the key is named; on DeepSeek-V3 it is
    read, and the planner lists it as the layout's recompute."""
    intake: dict[str, Any] = {"kind": "training", "model": {"preset": "llama3-70b"},
                              "training": {"tokens": "1T", "seq_len": 8192},
                              "compute": {"accelerator": "h100-sxm", "gpus": 512,
                                          "parallelism": {"recompute": "mla_up_proj"}}}
    with pytest.raises(InputError, match=r"compute\.parallelism\.recompute.*no MLA"):
        compile_workload(intake)
    ds = {"kind": "training", "model": {"preset": "deepseek-v3"},
          "training": {"tokens": "1T", "seq_len": 4096, "global_batch_size": 2048, "precision": "fp8"},
          "compute": {"accelerator": "b200", "gpus": 256,
                      "parallelism": {"recompute": "mla_up_proj", "pp": 16, "ep": 8, "tp": 1}}}
    spec = compile_workload(ds)
    assert spec.feasible and spec.compute.parallelism.recompute == "mla_up_proj"


def test_a_compiled_result_given_as_an_intake_is_named_in_one_sentence(tmp_path: Path) -> None:
    """`wkc node-check --spec result.json` (the spec a user has at hand) once listed an 'unknown key'
    for each of the result's hundreds of outputs."""
    result = json.loads(compile_workload(GENERIC).model_dump_json())
    e = error_of(result)
    assert len(e.problems) == 1 and "wkc compile --json" in str(e) and "`intake` key" in str(e)
    assert parse_workload(result["intake"]).kind == "generic"     # the intake it holds compiles


def test_a_preset_is_named_in_any_letter_case() -> None:
    w = parse_workload({**TRAINING, "model": {"preset": " Llama3-8B "}})
    assert w.model.preset == "llama3-8b"                                 # type: ignore[attr-defined]
    with pytest.raises(InputError, match="did you mean 'llama3-8b'"):
        compile_workload({**TRAINING, "model": {"preset": "LLAMA3-8BX"}})


def test_a_tab_indent_is_named_as_the_cause() -> None:
    with pytest.raises(InputError, match="indents with spaces"):
        parse_yaml("kind: training\nmodel:\n\tpreset: llama3-8b\n", "t.yaml")


def test_choices_are_read_in_any_letter_case() -> None:
    """'BF16' and 'DLC' as datasheets write them; a pinned 'DLC' once collided with the 'dlc' it
    sized and made the answer infeasible."""
    spec = compile_workload({**TRAINING, "kind": "Training", "training": {**TRAINING["training"], "precision": "BF16"},
                             "facility": {"cooling": "DLC"}})
    assert spec.feasible and spec.intake["training"]["precision"] == "bf16"
    assert spec.intake["facility"]["cooling"] == "dlc"
    e = error_of({**TRAINING, "training": {**TRAINING["training"], "precision": "BF61"}})
    assert "did you mean 'bf16'" in e.allowed


@pytest.mark.parametrize("n", [7, 1_024, 95_367, 8.03e9, 174.6e9, 14.8e12, 2.5e15])
def test_a_count_as_the_reports_write_it_reads_back(n: float) -> None:
    """'174.6 billion', '14.8 trillion', '1,024': an intake accepts what a report printed."""
    from workload_compiler.report.format import format_quantity
    from workload_compiler.units import parse_count
    text = format_quantity(n, "count")
    assert parse_count(text) == pytest.approx(n, rel=1e-3), text
    assert parse_count(format_quantity(n, "tokens")) == pytest.approx(n, rel=1e-3)


def test_whole_numbers_take_thousands_separators_and_refuse_a_decimal_comma() -> None:
    w = parse_workload({**TRAINING, "compute": {"gpus": "1,024"}, "training": {**TRAINING["training"],
                                                                               "seq_len": "8,192"}})
    assert w.compute.gpus == 1024 and w.training.seq_len == 8192          # type: ignore[attr-defined]
    assert error_of({**TRAINING, "compute": {"gpus": "1,02"}}).field == "compute.gpus"


@pytest.mark.parametrize(("unit", "value"), [("requests/s", 20.0), ("requests/s", 0.5), ("s", 0.0468),
                                             ("s", 2.7e6), ("s", 1.0e8)])
def test_a_rate_or_a_duration_as_the_reports_write_it_reads_back(unit: str, value: float) -> None:
    """'20.0 req/s' and '3.2 years' were refused (unknown suffix 'req', unknown unit 'years')."""
    from workload_compiler.report.format import format_quantity
    from workload_compiler.units import parse_duration, parse_rate
    text = format_quantity(value, unit)
    back = parse_rate(text) if unit == "requests/s" else parse_duration(text)
    assert back == pytest.approx(value, rel=0.02), text


def test_a_bare_value_where_a_mapping_goes_is_shown_in_the_mappings_shape() -> None:
    e = error_of({"kind": "inference", "model": {"preset": "llama3-8b"}, "serving": {"ttft": "2s"}})
    assert e.field == "serving.ttft" and "(e.g. ttft: {p50: 2s})" in e.allowed
