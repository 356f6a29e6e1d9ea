"""Write measured values into an intake or workload sheet (`wkc profile --into`, `wkc calibrate --into`).

The file's `measured:` block is rewritten with the new values merged over the old (same key: the
new one wins); everything else in the file, comments included, is left as it was: the block is
replaced as text, from its `measured:` line to the next top-level key, or appended when absent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError
from ..intake.measured import MeasuredIntake, MeasuredValue

_TOP_KEY = re.compile(r"^[^\s#-][^:]*:")


def merged_block(text: str, values: dict[str, MeasuredValue]) -> dict[str, Any]:
    """The file's measured block (validated) with `values` merged over it, as plain data."""
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError:
        raise InputError("--into", "(unparsable YAML)", "a well-formed YAML intake or sheet") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("--into", type(data).__name__, "a YAML mapping (an intake or a workload sheet)")
    current = MeasuredIntake.model_validate(data.get("measured") or {})
    merged = {**current.values, **values}
    block: dict[str, Any] = {}
    if current.calibration_dir is not None:
        block["calibration_dir"] = str(current.calibration_dir)
    block["values"] = {k: v.model_dump(mode="json", exclude_none=True) for k, v in sorted(merged.items())}
    return block


def with_measured(text: str, values: dict[str, MeasuredValue]) -> str:
    """`text` with its top-level `measured:` block replaced by the merged one."""
    block = yaml.safe_dump({"measured": merged_block(text, values)}, sort_keys=False, width=100)
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith("measured:")), None)
    if start is None:
        sep = "" if not text or text.endswith("\n") else "\n"
        return text + sep + ("\n" if text.strip() else "") + block
    end = next((j for j in range(start + 1, len(lines)) if _TOP_KEY.match(lines[j])), len(lines))
    return "".join(lines[:start]) + block + "".join(lines[end:])


def write_into(path: Path, values: dict[str, MeasuredValue]) -> bool:
    """Merge `values` into the file at `path` (created when missing). True when it existed."""
    existed = path.exists()
    text = path.read_text(encoding="utf-8") if existed else ""
    new = with_measured(text, values)
    yaml.safe_load(new)   # what we write parses
    path.write_text(new, encoding="utf-8")
    return existed
