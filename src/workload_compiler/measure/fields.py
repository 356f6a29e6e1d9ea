"""The measurable fields: what a measurement may replace, in which unit, bound to which machine kind.

Chosen with care: a measurement replaces an assumed or fitted number only where the number is a
property of one machine and the tool measures that property directly.

- GEMM efficiency (e_max, per-kernel overhead t0) and sustained HBM bandwidth are properties of
  one accelerator (`wkc calibrate`); they replace the fitted constants of perf/fitted.py and the
  HBM fractions (perf/efficiency.py, inference/fitted.py, hpc/fitted.py) for that accelerator.
- NCCL bus bandwidth inside the scale-up domain and across nodes is a property of the node type
  (NVSwitch generation, NICs per GPU, PCIe layout); it replaces NVLINK_EFFICIENCY / NIC_EFFICIENCY
  x line rate (perf/collectives.py) for that system (the generic pipeline's gradient all-reduce too).
- The profiling exercise (`wkc profile`) measures the host it runs on: one process reading the data
  set's files, parsing them, doing NumPy arithmetic. These are the workload sheet's data-path numbers
  for that CPU model. No input of the transformer training, inference or HPC models is a CPU rate,
  so they are recorded with the workload (and read by a data-pipeline stage that sizes loader cores
  on the same CPU model), never applied to a GPU node's storage tier or compute: a single-process
  read of one directory is not a parallel filesystem's per-node bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..intake.measured import MachineKind

GEMM_PRECISIONS = ("bf16", "fp16", "fp8")       # what `wkc calibrate` times (torch.matmul, torch._scaled_mm)
PARSE_FORMATS = ("json", "csv", "image")        # what `wkc profile` parses
TRAINING, INFERENCE, HPC, GENERIC = "training", "inference", "hpc", "generic"


@dataclass(frozen=True, kw_only=True)
class MeasurableField:
    key: str                      # with one {choice} placeholder when `choices` is set
    unit: str
    kind: MachineKind
    replaces: str                 # the assumption or fitted constant it takes the place of
    read_by: frozenset[str]       # archetypes whose model reads it
    low: float                    # plausible range; outside it the entry is refused as a typo or unit slip
    high: float
    choices: tuple[str, ...] = ()


FIELDS: tuple[MeasurableField, ...] = (
    MeasurableField(key="accelerator.gemm_e_max.{choice}", unit="1", kind="accelerator", choices=GEMM_PRECISIONS,
                    replaces="perf/fitted.py gemm_e_max (large-GEMM fraction of the dense peak), this precision",
                    read_by=frozenset({TRAINING}), low=0.05, high=1.05),
    MeasurableField(key="accelerator.gemm_kernel_overhead_s.{choice}", unit="s", kind="accelerator",
                    choices=GEMM_PRECISIONS,
                    replaces="perf/fitted.py gemm_kernel_overhead_s (fixed cost of one GEMM kernel), this precision",
                    read_by=frozenset({TRAINING}), low=0.0, high=1e-3),
    MeasurableField(key="accelerator.hbm_bandwidth_bytes_per_s", unit="B/s", kind="accelerator",
                    replaces="HBM efficiency x datasheet bandwidth (perf/efficiency.py HBM_EFFICIENCY, "
                             "inference/fitted.py HBM_EFFICIENCY, hpc/fitted.py stream_fraction)",
                    read_by=frozenset({TRAINING, INFERENCE, HPC}), low=1e9, high=1e14),
    MeasurableField(key="fabric.scale_up_busbw_bytes_per_s.{choice}", unit="B/s", kind="node",
                    choices=("all_reduce", "all_to_all"),
                    replaces="perf/collectives.py NVLINK_EFFICIENCY x per-GPU scale-up bandwidth, this collective",
                    read_by=frozenset({TRAINING, INFERENCE, GENERIC}), low=1e8, high=1e13),
    MeasurableField(key="fabric.scale_out_busbw_bytes_per_s.{choice}", unit="B/s", kind="node",
                    choices=("all_reduce", "all_to_all"),
                    replaces="perf/collectives.py NIC_EFFICIENCY x per-GPU NIC line rate, this collective",
                    read_by=frozenset({TRAINING, INFERENCE, GENERIC}), low=1e7, high=1e12),
    MeasurableField(key="host.read_bytes_per_s", unit="B/s", kind="cpu",
                    replaces="nothing in these models: the workload sheet's storage read of this host",
                    read_by=frozenset(), low=1e3, high=1e12),
    MeasurableField(key="host.parse_records_per_s_per_core.{choice}", unit="items/s", kind="cpu",
                    choices=PARSE_FORMATS,
                    replaces="nothing in these models: the workload sheet's decode rate per core of this CPU",
                    read_by=frozenset(), low=1e-3, high=1e10),
    MeasurableField(key="host.parse_bytes_per_s_per_core.{choice}", unit="B/s", kind="cpu", choices=PARSE_FORMATS,
                    replaces="nothing in these models: the workload sheet's decode rate per core of this CPU",
                    read_by=frozenset(), low=1e3, high=1e12),
    MeasurableField(key="host.compute_flops_per_s", unit="FLOP/s", kind="cpu",
                    replaces="nothing in these models: the CPU arithmetic rate of this host (NumPy)",
                    read_by=frozenset(), low=1e6, high=1e16),
)


def field_keys() -> list[str]:
    """Every concrete key, placeholders expanded."""
    keys: list[str] = []
    for f in FIELDS:
        keys += [f.key.format(choice=c) for c in f.choices] if f.choices else [f.key]
    return keys


def lookup(key: str) -> tuple[MeasurableField, str | None]:
    """(field, its choice) for a concrete key; InputError naming the known keys otherwise."""
    for f in FIELDS:
        if not f.choices and key == f.key:
            return f, None
        stem = f.key.removesuffix("{choice}")
        if f.choices and key.startswith(stem) and key[len(stem):] in f.choices:
            return f, key[len(stem):]
    import difflib
    near = difflib.get_close_matches(key, field_keys(), n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(near)}? " if near else ""
    raise InputError(f"measured.values.{key}", key, f"{hint}a measurable field, one of: {', '.join(field_keys())}")
