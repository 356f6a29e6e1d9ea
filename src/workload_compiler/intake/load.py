"""Reading an intake: a YAML file or a Python dict -> a validated workload of the right kind.

The archetype is chosen by `kind`; each kind is a pydantic model that forbids unknown keys, so a
typo is an error naming the key instead of a silently ignored field.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..errors import MISSING, Described, InputError, canonical_id, near_miss
from .problems import input_error
from .yaml_reader import parse_yaml, read_text

# kind -> (module, class); inference and HPC register here as they are built.
_KINDS: dict[str, tuple[str, str]] = {
    "training": ("training", "TrainingWorkload"),
    "inference": ("inference", "InferenceWorkload"),
    "hpc": ("hpc", "HpcWorkload"),
    "generic": ("generic", "GenericWorkload"),
}


def workload_model(kind: Any) -> type[BaseModel]:
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
    raise InputError("kind", kind, f"{near_miss(kind, known)}one of: {', '.join(known)}")


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


# keys every result document carries and no intake has (spine/result.py SystemSpec)
RESULT_KEYS = frozenset({"schema_version", "feasible", "assumptions"})


def parse_workload(data: Any, *, base_dir: Path | None = None) -> BaseModel:
    """Validate a dict as a workload. Raises InputError naming every field that is not allowed."""
    if data is None:
        raise InputError("(intake)", MISSING, "a mapping with a 'kind' key (the document is empty)")
    if not isinstance(data, dict):
        raise InputError("(intake)", data, "a mapping with a 'kind' key (training, inference, hpc or generic)")
    if "kind" not in data:
        raise InputError("kind", MISSING, "required: training, inference, hpc or generic")
    if data.keys() >= RESULT_KEYS:
        # a compiled result (`wkc compile --json`) handed where an intake goes: one sentence, not an
        # "unknown key" for each of its hundreds of outputs
        raise InputError("(intake)", Described("a compiled result (the output of `wkc compile --json`), not an "
                                               "intake"), "the intake itself (the result's `intake` key holds "
                                                          "the one it was compiled from)")
    if isinstance(data["kind"], str):   # a choice in any letter case ('Training')
        data = {**data, "kind": canonical_id(data["kind"])}
    model = workload_model(data["kind"])
    try:
        workload = model.model_validate(data)
    except ValidationError as exc:
        raise input_error(exc, model) from None
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
    """The mapping a YAML intake file holds (not yet validated): size, depth, aliases and duplicate
    keys checked (intake/yaml_reader.py)."""
    return parse_yaml(read_text(str(path)), str(path))


__all__ = ["ValidationError", "known_kinds", "load_workload", "parse_workload", "read_intake", "workload_model"]
