"""Small builders shared by the engagement tests: the bundled examples compiled once per process,
and intake dicts with one change."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

from workload_compiler import compile_workload
from workload_compiler.intake.load import read_intake
from workload_compiler.spine.result import SystemSpec

EXAMPLES = Path(__file__).parents[2] / "examples"
IMAGE = EXAMPLES / "image-classifier-generic.yaml"
H100_4096 = EXAMPLES / "llama3.1-405b-4096-h100.yaml"
OFFERS = EXAMPLES / "offers-llama3.1-405b.yaml"
CHAT = EXAMPLES / "llama3.3-70b-chat.yaml"
MIG = EXAMPLES / "llama3.1-8b-mig.yaml"
HPL = EXAMPLES / "hpc-dense-linear-algebra.yaml"


@functools.cache
def compiled(path: Path) -> SystemSpec:
    return compile_workload(path)


def intake(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = copy.deepcopy(read_intake(path))
    return data


def image_with(**fields: Any) -> dict[str, Any]:
    """The article's example with sheet fields replaced (None removes one)."""
    data = intake(IMAGE)
    for key, value in fields.items():
        dotted = key.replace("__", ".")
        if value is None:
            data["sheet"]["fields"].pop(dotted, None)
        else:
            data["sheet"]["fields"][dotted] = value
    return data
