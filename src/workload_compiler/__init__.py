"""Workload Compiler: size GPU infrastructure from the workload up.

    from workload_compiler import compile_workload
    spec = compile_workload("examples/gpt3-175b-a100.yaml")     # a path, a mapping or a model

Errors: `WorkloadError` is the base of every error the tool raises on purpose; `InputError` (bad
input: field, value, what is allowed) and `InfeasibleError` (raised by inner passes only:
`compile_workload` returns an infeasible workload as a result) derive from it. `Infeasible` is the
older name of `InfeasibleError`.

The names load on first use, so `import workload_compiler` (and `wkc --help`) stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .compile import compile_workload, recompile
    from .errors import Infeasible, InfeasibleError, InputError, WorkloadError
    from .intake.load import load_workload, parse_workload
    from .spine.result import SystemSpec

_WHERE = {"compile_workload": "compile", "recompile": "compile", "Infeasible": "errors", "InfeasibleError": "errors",
          "InputError": "errors", "WorkloadError": "errors", "load_workload": "intake.load",
          "parse_workload": "intake.load", "SystemSpec": "spine.result"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Infeasible", "InfeasibleError", "InputError", "SystemSpec", "WorkloadError", "compile_workload",
           "load_workload", "parse_workload", "recompile"]
