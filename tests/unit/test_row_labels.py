"""Every section of the result prints each field under its own label: a label drops the unit ending
its value shows (report/rows.py, 'checkpoint_interval_s' -> 'checkpoint interval'); where two keys
differ only by that ending (checkpoint_write_s, checkpoint_write_bytes_per_s) the ending is said in a
word instead ('checkpoint write time', 'checkpoint write rate'), never the same label twice."""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel

from workload_compiler.quantity import unit_of
from workload_compiler.report.rows import Row, clashing_fields
from workload_compiler.spine.result import KIND_SECTIONS, SystemSpec


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in get_args(annotation) for m in _models(a)]


def _sections() -> set[type[BaseModel]]:
    found: set[type[BaseModel]] = set()
    todo = [m for f in SystemSpec.model_fields.values() for m in _models(f.annotation)]
    todo += [m for kind in KIND_SECTIONS.values() for m in kind.values()]
    while todo:
        model = todo.pop()
        if model in found:
            continue
        found.add(model)
        todo += [m for f in model.model_fields.values() for m in _models(f.annotation)]
    return found


def test_no_section_prints_two_fields_under_one_label() -> None:
    clashes = []
    sections = _sections()
    assert len(sections) > 50       # the walk reaches the nested sections, not only the layers
    for model in sections:
        seen: dict[str, str] = {}
        clash = clashing_fields(model)
        for name in model.model_fields:
            words = Row(path=name, label=name, text="", unit=unit_of(model, name), clash=name in clash).words
            if words in seen:
                clashes.append(f"{model.__name__}: {seen[words]} and {name} both print as '{words}'")
            seen[words] = name
    assert not clashes, clashes


def test_keys_that_differ_by_their_unit_ending_say_it_in_a_word() -> None:
    from workload_compiler.storage.plan import StorageLayer
    words = {n: Row(path=n, label=n, text="", unit=unit_of(StorageLayer, n),
                    clash=n in clashing_fields(StorageLayer)).words for n in StorageLayer.model_fields}
    assert (words["checkpoint_write_s"], words["checkpoint_write_bytes_per_s"]) == (
        "checkpoint write time", "checkpoint write rate")
    assert words["checkpoint_interval_s"] == "checkpoint interval"      # no sibling reads alike: the short label


def test_the_html_and_workbench_panels_use_the_same_labels_as_the_terminal() -> None:
    from workload_compiler.compile import compile_workload
    from workload_compiler.report.view import panels
    spec = compile_workload({"kind": "inference", "model": {"preset": "llama3.1-8b"},
                             "serving": {"input_tokens": 1000, "output_tokens": 200}})
    storage = next(p for p in panels(spec) if p.layer.key == "storage")
    labels = [r.label for r in storage.details]
    assert "replica load" in labels and "fleet read" in labels and "fleet load" in labels
    assert not any(label.endswith((" s", " bytes per s")) for label in labels), labels
