"""Reading an intake: a YAML file or a Python dict -> a validated workload of the right kind.

The archetype is chosen by `kind`; each kind is a pydantic model that forbids unknown keys, so a
typo is an error naming the key instead of a silently ignored field.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import InputError

# kind -> (module, class); inference and HPC register here as they are built.
_KINDS: dict[str, tuple[str, str]] = {
    "training": ("training", "TrainingWorkload"),
    "inference": ("inference", "InferenceWorkload"),
    "hpc": ("hpc", "HpcWorkload"),
    "generic": ("generic", "GenericWorkload"),
}


def workload_model(kind: str) -> type[BaseModel]:
    known = []
    for name, (module, cls) in _KINDS.items():
        try:
            mod = importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError:
            continue
        known.append(name)
        if name == kind:
            model: type[BaseModel] = getattr(mod, cls)
            return model
    raise InputError("kind", kind, f"one of: {', '.join(known)}")


def known_kinds() -> list[str]:
    """The archetypes an intake may name in `kind`, in registry order (those whose module exists)."""
    found = []
    for name, (module, _cls) in _KINDS.items():
        try:
            importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError:
            continue
        found.append(name)
    return found


def parse_workload(data: Any, *, base_dir: Path | None = None) -> BaseModel:
    """Validate a dict as a workload. Raises InputError or pydantic's ValidationError."""
    if not isinstance(data, dict):
        raise InputError("(intake)", type(data).__name__, "a mapping with a 'kind' key")
    if "kind" not in data:
        raise InputError("kind", None, "required: training, inference, hpc or generic")
    model = workload_model(str(data["kind"]))
    workload = model.model_validate(data)
    _anchor_paths(workload, base_dir)
    return workload


def _anchor_paths(workload: BaseModel, base_dir: Path | None) -> None:
    """A relative hf_config path is relative to the intake file, not to the shell's directory."""
    model = getattr(workload, "model", None)
    hf = getattr(model, "hf_config", None)
    if base_dir is not None and isinstance(hf, Path) and not hf.is_absolute():
        model.hf_config = base_dir / hf  # type: ignore[union-attr]
    measured = getattr(workload, "measured", None)
    cal = getattr(measured, "calibration_dir", None)
    if base_dir is not None and isinstance(cal, Path) and not cal.is_absolute():
        measured.calibration_dir = base_dir / cal  # type: ignore[union-attr]


def load_workload(path: str | Path) -> BaseModel:
    """Read a YAML intake file."""
    return parse_workload(read_intake(path), base_dir=Path(path).parent)


def read_intake(path: str | Path) -> Any:
    """The mapping a YAML intake file holds (not yet validated)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("FILE", str(p), "an existing YAML intake file") from None
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        raise InputError("FILE", str(p), f"a readable UTF-8 YAML file ({exc.__class__.__name__})") from None
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InputError("FILE", str(p), f"well-formed YAML (parse error{where})") from None
    return data


__all__ = ["ValidationError", "known_kinds", "load_workload", "parse_workload", "read_intake", "workload_model"]
