"""The intake boundary: clear errors naming field, value and what is allowed."""

from pathlib import Path

import pytest

from workload_compiler.errors import InputError
from workload_compiler.intake.load import load_workload, parse_workload

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_bundled_training_examples_load() -> None:
    for path in sorted(EXAMPLES.glob("*.yaml")):
        if path.name.startswith("offers-"):   # offers files go to `wkc supply --offers`, not compile
            continue
        assert load_workload(path).kind in ("training", "inference", "hpc", "generic")  # type: ignore[attr-defined]


def test_malformed_yaml_is_an_input_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: training\nmodel: {preset: [gpt3\n")
    with pytest.raises(InputError, match="line"):
        load_workload(bad)


def test_missing_file() -> None:
    with pytest.raises(InputError, match="existing YAML"):
        load_workload("/nonexistent/intake.yaml")


def test_unknown_kind_lists_the_kinds() -> None:
    with pytest.raises(InputError, match="training"):
        parse_workload({"kind": "rendering"})


def test_typo_key_is_rejected_with_its_path() -> None:
    with pytest.raises(InputError) as info:
        parse_workload({"kind": "training", "model": {"preset": "gpt3-175b"}, "trainig": {}})
    assert str(info.value).startswith("trainig: unknown key; did you mean 'training'?")


@pytest.mark.parametrize(("intake", "key", "belongs"), [
    ({"kind": "training", "model": {"preset": "llama3-8b"}, "gpus": 8}, "gpus", "compute.gpus"),
    ({"kind": "training", "model": {"preset": "llama3-8b"}, "precision": "fp8"}, "precision", "training.precision"),
    # a serving intake names the weights' precision `weights`: `precision` is what people write
    ({"kind": "inference", "model": {"preset": "llama3-8b"}, "precision": "fp4"}, "precision", "serving.weights"),
    ({"kind": "inference", "model": {"preset": "llama3-8b"}, "serving": {"dtype": "fp8"}}, "serving.dtype",
     "serving.weights"),
])
def test_a_key_in_the_wrong_section_names_where_it_belongs(intake: dict[str, object], key: str,
                                                          belongs: str) -> None:
    with pytest.raises(InputError) as info:
        parse_workload(intake)
    assert str(info.value).startswith(f"{key}: unknown key; did you mean {belongs}?")


def test_negative_gpus_rejected() -> None:
    with pytest.raises(InputError) as info:
        parse_workload({"kind": "training", "model": {"preset": "gpt3-175b"}, "compute": {"gpus": -8}})
    assert info.value.field == "compute.gpus" and info.value.value == -8


def test_quantities_parse_in_the_intake() -> None:
    w = parse_workload({"kind": "training", "model": {"preset": "gpt3-175b"},
                        "training": {"tokens": "300B"}, "target": {"time_to_train": "30d"}})
    assert w.training.tokens == 300e9  # type: ignore[attr-defined]
    assert w.target.time_to_train == 30 * 86400  # type: ignore[attr-defined]
