"""The workbench's pure parts: the form built from the schema, the state it posts, the sources an
intake comes from, the compile cache, the rate limiter and the revision diff."""

from __future__ import annotations

import json

import pytest

from shared_data import REPO_ROOT
from workload_compiler.errors import InputError
from workload_compiler.intake.load import known_kinds, read_intake
from workload_compiler.store.diff import compare, diff_documents, flatten
from workload_compiler.web.engine import CompileCache, state_key
from workload_compiler.web.forms import current_text, form_fields, intake_from_form, pin_fields, sections
from workload_compiler.web.guard import TokenBuckets
from workload_compiler.web.sources import model_from_hf, parse_yaml_text

GPT3 = read_intake(REPO_ROOT / "examples" / "gpt3-175b-a100.yaml")


def test_every_registered_kind_gets_a_form_from_its_schema() -> None:
    for kind in known_kinds():
        keys = [f.key for f in form_fields(kind)]
        assert keys and len(keys) == len(set(keys)) and "kind" not in keys
        assert {"facility.power", "fabric.switch"} <= set(keys)  # every archetype takes the infrastructure pins
    training = {f.key: f for f in form_fields("training")}
    assert training["training.tokens"].quantity == "count" and training["facility.power"].quantity == "power"
    assert training["training.precision"].control == "select" and "fp8" in training["training.precision"].options
    assert training["name"].text_only
    assert [s for s, _ in sections("training")][:3] == ["workload", "model", "training"]
    assert next(f.key for f in pin_fields("training", "facility")) == "facility.power"


def test_the_form_reads_values_as_yaml_does() -> None:
    intake = intake_from_form("training", {"f:model.preset": "gpt3-175b", "f:training.tokens": "300B",
                                           "f:compute.gpus": "1024", "f:storage.gpudirect_storage": "true",
                                           "f:name": "007", "f:facility.power": "  ", "f:not.a.field": "x"})
    assert intake == {"kind": "training", "model": {"preset": "gpt3-175b"}, "training": {"tokens": "300B"},
                      "compute": {"gpus": 1024}, "storage": {"gpudirect_storage": True}, "name": "007"}
    assert current_text(GPT3, "compute.parallelism.recompute") == "full"
    assert current_text(GPT3, "facility.power") == ""


def test_yaml_text_is_bounded_and_errors_name_the_line() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdef", "bcdefg", strict=True)) + "kind: training\n"
    with pytest.raises(InputError, match="at most"):
        parse_yaml_text(bomb)
    with pytest.raises(InputError, match="line 3"):
        parse_yaml_text("kind: training\nmodel: [unclosed\n")
    with pytest.raises(InputError, match="mapping"):
        parse_yaml_text("- just\n- a list\n")


def test_an_uploaded_config_json_becomes_the_model_fields() -> None:
    raw = (REPO_ROOT / "tests" / "fixtures" / "hf" / "mixtral-8x7b.json").read_bytes()
    model, notes = model_from_hf(raw, "mixtral.json")
    assert model["layers"] == 32 and model["moe"]["experts"] == 8 and model["moe"]["top_k"] == 2
    assert notes and "mixtral.json" in notes[0]
    ds, ds_notes = model_from_hf((REPO_ROOT / "tests" / "fixtures" / "hf" / "deepseek-v3.json").read_bytes(), "ds")
    assert ds["mla"]["kv_lora_rank"] == 512 and any("multi-token" in n for n in ds_notes)
    with pytest.raises(InputError, match="hf_config"):
        model_from_hf(b"{not json", "broken.json")
    with pytest.raises(InputError, match="architectures"):
        model_from_hf(json.dumps({"architectures": ["NoSuchForCausalLM"]}).encode(), "x.json")


def test_the_cache_compiles_once_per_state_and_names_bad_pins() -> None:
    cache = CompileCache(size=2)
    first = cache.compile(GPT3, {"facility.power": "1MW"})
    again = cache.compile(GPT3, {"facility.power": "1MW"})
    assert not first.cached and again.cached and again.spec is first.spec and cache.hits == 1
    assert state_key(GPT3, {"facility.power": "1MW"}) == first.key != state_key(GPT3, {})
    cache.compile(GPT3, {})
    cache.compile(GPT3, {"facility.power": "2MW"})
    assert cache.get(first.key) is None  # evicted: the cache is bounded
    with pytest.raises(InputError) as exc:
        cache.compile(GPT3, {"facility.powr": "1MW"})
    assert exc.value.field == "pins.facility.powr" and "facility.power" in exc.value.allowed


def test_token_buckets_allow_a_burst_then_the_rate() -> None:
    buckets = TokenBuckets(rate_per_minute=60, burst=3)
    assert [buckets.take("a", now=100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("a", now=100.0) == pytest.approx(1.0)
    assert buckets.take("b", now=100.0) == 0.0           # per client
    assert buckets.take("a", now=101.5) == 0.0           # refilled at one a second


def test_flatten_and_compare() -> None:
    doc = {"a": {"b": 1, "c": [{"d": 2}, {"d": 3}]}, "e": [1, 2], "f": {}}
    assert flatten(doc) == {"a.b": 1, "a.c[0].d": 2, "a.c[1].d": 3, "e": [1, 2], "f": {}}
    changes = compare(doc, {"a": {"b": 1.0000000000001, "c": [{"d": 2}]}, "e": [1, 2, 3]})
    assert [(c.path, c.kind) for c in changes] == [("a.c[1].d", "removed"), ("e", "changed"), ("f", "removed")]


def test_diff_documents_orders_inputs_outputs_assumptions() -> None:
    a = {"objective": {"t_s": 1.0}, "search": {"seconds": 0.1}, "assumptions": [{"field": "x", "value": 1}]}
    b = {"objective": {"t_s": 2.0}, "search": {"seconds": 0.9}, "assumptions": []}
    diff = diff_documents({"kind": "training"}, {}, a, {"kind": "training"}, {"facility.power": "1MW"}, b)
    assert [c.path for c in diff.inputs] == ["facility.power"]
    assert [c.path for c in diff.outputs] == ["objective.t_s"]  # the tool's own wall time is not an output
    assert [(c.path, c.kind) for c in diff.assumptions] == [("x", "removed")]


def test_yaml_dates_become_iso_text_for_the_page_and_the_store() -> None:
    from workload_compiler.web.sources import jsonable

    intake = parse_yaml_text("kind: training\nboundary: {cells: [{layer: Facility, when: 2026-01-15}]}\n")
    assert intake["boundary"]["cells"][0]["when"] == "2026-01-15"
    assert json.loads(json.dumps(intake)) == intake
    with pytest.raises(InputError):
        jsonable({"kind": "training", "x": object()})
