"""A path the file system refuses (a name longer than NAME_MAX: ENAMETOOLONG) is an InputError
naming the field wherever a user's path is read, never an OSError (issue 12: fuzz seed 87 found
`model.hf_config` given 5,000 characters raising OSError out of compile_workload)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workload_compiler import compile_workload
from workload_compiler.arch.hf_config import load_hf_config
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.measure.dataset import find_dataset
from workload_compiler.paths import existing_directory, is_directory

TOO_LONG = "z" * 5000


def test_a_name_too_long_is_an_input_error_naming_the_field() -> None:
    with pytest.raises(InputError) as exc:
        is_directory(TOO_LONG, "--fleet")
    assert exc.value.field == "--fleet" and "file system" in str(exc.value)
    with pytest.raises(InputError):
        existing_directory(TOO_LONG, "catalog_dir", "an existing directory")


def test_a_missing_or_plain_file_is_not_a_directory(tmp_path: Path) -> None:
    f = tmp_path / "a.yaml"
    f.write_text("x: 1\n", encoding="utf-8")
    assert not is_directory(tmp_path / "missing", "x") and not is_directory(f, "x") and is_directory(tmp_path, "x")
    with pytest.raises(InputError) as exc:
        existing_directory(f, "--input", "an existing directory of data files")
    assert "an existing directory of data files" in str(exc.value)


@pytest.mark.parametrize("read", [load_hf_config, lambda p: load_catalog(Path(p)), lambda p: find_dataset(Path(p))])
def test_every_reader_of_a_users_path_answers_with_an_input_error(read: object) -> None:
    with pytest.raises(InputError):
        read(TOO_LONG)  # type: ignore[operator]


def test_compile_answers_a_too_long_hf_config_path() -> None:
    intake = {"kind": "training", "model": {"hf_config": TOO_LONG},
              "training": {"tokens": "1B", "seq_len": 2048}, "compute": {"accelerator": "h100-sxm", "gpus": 8}}
    with pytest.raises(InputError) as exc:
        compile_workload(intake)
    assert "hf_config" in exc.value.field
