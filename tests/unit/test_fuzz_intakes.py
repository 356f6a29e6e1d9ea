"""Every input is answered cleanly: a result whose every number is finite, or one of our errors
(InputError, or another WorkloadError), never an exception that is not ours and never an
InfeasibleError out of compile_workload. Hypothesis drives hostile edits of small intakes of each
kind (tests/intake_mutations.py); bounded to a few tens of seconds (the large run is
tools/fuzz_intakes.py)."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from intake_mutations import EVERY_VALUE, EXAMPLES, SMALL, _set, mutate_valid, non_finite
from workload_compiler import compile_workload
from workload_compiler.cli.main import app
from workload_compiler.errors import InfeasibleError, InputError, WorkloadError
from workload_compiler.intake.load import workload_model
from workload_compiler.intake.pins import intake_keys

# Fast bases: the small intakes and the examples that compile in well under a second.
FAST = {"gpt3-175b-a100", "llama3.3-70b-chat", "hpc-cfd-fv", "hpc-molecular-dynamics", "hpc-weather-climate"}
BASES: list[dict[str, Any]] = [*SMALL]
for p in EXAMPLES:
    if p.stem in FAST:
        import yaml
        BASES.append(yaml.safe_load(p.read_text(encoding="utf-8")))
KEYS = {kind: intake_keys(workload_model(kind)) for kind in ("training", "inference", "hpc")}
VALUES = st.one_of(st.sampled_from(EVERY_VALUE), st.integers(min_value=-10, max_value=2**70),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                   st.floats(min_value=1e-9, max_value=1e9))
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def answered(intake: Any) -> str:
    """'result' or 'error'; fails the test on anything else."""
    try:
        spec = compile_workload(intake)
    except InfeasibleError as exc:   # must come back as feasible: false
        raise AssertionError(f"InfeasibleError raised out of compile_workload: {exc}") from exc
    except (InputError, WorkloadError) as exc:
        assert str(exc) and len(str(exc)) < 5000, "an error message is short and says something"
        return "error"
    doc = spec.model_dump(mode="json")
    assert not non_finite(doc), non_finite(doc)[:3]
    json.dumps(doc, allow_nan=False)
    if not spec.feasible:
        assert spec.binding_constraint
    return "result"


@FUZZ
@given(data=st.data())
def test_hostile_edits_of_any_key_are_answered_cleanly(data: st.DataObject) -> None:
    base = data.draw(st.sampled_from(BASES))
    edits = data.draw(st.lists(st.tuples(st.sampled_from(KEYS[base["kind"]]), VALUES), min_size=1, max_size=3))
    intake = base
    for key, value in edits:
        intake = _set(intake, key, value)
    answered(intake)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(BASES), seed=st.integers(min_value=0, max_value=2**32 - 1),
       edits=st.integers(min_value=1, max_value=4))
def test_valid_values_at_the_edges_of_their_ranges_are_answered_cleanly(base: dict[str, Any], seed: int,
                                                                         edits: int) -> None:
    """Values the schema accepts, at its bounds: what reaches the arithmetic."""
    answered(mutate_valid(base, random.Random(seed), edits))


@FUZZ
@given(data=st.data())
def test_whole_documents_of_any_shape_are_answered_cleanly(data: st.DataObject) -> None:
    doc = data.draw(st.one_of(
        VALUES, st.lists(VALUES, max_size=3),
        st.dictionaries(st.sampled_from(["kind", "model", "training", "serving", "compute", "x"]),
                        st.one_of(VALUES, st.sampled_from(["training", "inference", "hpc"]),
                                  st.dictionaries(st.text(max_size=8), VALUES, max_size=3)), max_size=5)))
    try:
        answered(doc)
    except TypeError as exc:   # compile_workload's own refusal of a non-intake argument is ours too
        raise AssertionError(f"not ours: {exc}") from exc


HOSTILE_YAML = {
    "alias bomb": "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)),
    "deep nesting": "kind: training\nmodel: " + "[" * 5000 + "]" * 5000 + "\n",
    "duplicate key": "kind: training\nmodel: {preset: gpt3-175b}\ncompute: {gpus: 8}\ncompute: {gpus: 16}\n",
    "unknown tag": "kind: !!python/object:os.system training\n",
    "not a mapping": "- a\n- b\n",
    "empty": "",
    "tabs": "kind:\ttraining\n\tmodel: x\n",
}


def test_hostile_yaml_is_refused_fast_with_a_short_message(tmp_path: Path) -> None:
    runner = CliRunner()
    for name, text in HOSTILE_YAML.items():
        f = tmp_path / "w.yaml"
        f.write_text(text, encoding="utf-8")
        t0 = time.perf_counter()
        result = runner.invoke(app, ["compile", str(f), "--json"])
        assert time.perf_counter() - t0 < 5, f"{name}: slow"   # a guard, not a benchmark: the bomb hung > 120 s
        assert result.exit_code == 2, (name, result.output)
        assert "Traceback" not in result.output and len(result.output) < 2000, name
        if name == "duplicate key":
            assert "'compute' given twice (lines 3 and 4)" in result.output
        if name == "alias bomb":
            assert "after aliases are expanded" in result.output


FLAG_VALUES = st.one_of(st.sampled_from(["2MW", "40kW", "abc", "0", "-1", "1e30W", "inf", "nan", "", "5", "1e9MW"]),
                        st.text(max_size=6))


@settings(max_examples=25, deadline=None)
@given(power=FLAG_VALUES, rack=FLAG_VALUES, cooling=st.sampled_from(["air", "dlc", "foo", ""]),
       tokens=st.one_of(st.none(), st.none(), st.none(), FLAG_VALUES))
def test_fit_flags_are_answered_cleanly(power: str, rack: str, cooling: str, tokens: str | None) -> None:
    args = ["fit", "--power", power, "--rack-power", rack, "--cooling", cooling, "--json"]
    if tokens is not None:
        args += ["--model", "llama3-8b", "--tokens", tokens]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 2, 3), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code == 2:
        assert "--" in result.stderr, "the error names the flag"
    if result.exit_code == 0:
        def refuse(name: str) -> None:
            raise ValueError(name)
        json.loads(result.stdout, parse_constant=refuse)
