"""Workload Compiler: size GPU infrastructure from the workload up.

    from workload_compiler import compile_workload, load_workload
    spec = compile_workload(load_workload("examples/gpt3-175b-a100.yaml"))
"""

from .compile import compile_workload, recompile
from .errors import Infeasible, InputError
from .intake.load import load_workload, parse_workload
from .spine.result import SystemSpec

__all__ = ["Infeasible", "InputError", "SystemSpec", "compile_workload", "load_workload", "parse_workload", "recompile"]
