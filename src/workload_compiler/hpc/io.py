"""Scratch I/O: checkpoint and output bytes -> write bandwidth, capacity and (if pinned) stall.

Required job write bandwidth = max(output bytes per step / step time,
checkpoint bytes / (CHECKPOINT_STALL_FRACTION x checkpoint interval)): outputs stream at the rate
the run produces them; a checkpoint must land within a small share of its interval. Capacity =
all outputs of the run + KEEP_CHECKPOINTS checkpoints. With a pinned per-node scratch bandwidth
the writes stall the step: io time per step = (output per step + checkpoint x step / interval) /
(bandwidth per node x nodes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..perf.layout import FloatArray

# GROMACS writes a full-state checkpoint every 15 minutes by default
# (CheckpointOptions.period = 15; calibration rot-gromacs-checkpoint-interval).
CHECKPOINT_INTERVAL_S = 15 * 60.0
# ASSUMED: a checkpoint write may take at most 5% of its interval.
CHECKPOINT_STALL_FRACTION = 0.05
# ASSUMED: the last good checkpoint is kept while the next one is written.
KEEP_CHECKPOINTS = 2
# A contemporary MD node writes ~10 GB of trajectory per day (arXiv 2506.15585, reference/hpc.md).
MD_OUTPUT_BYTES_PER_NODE_DAY = 10e9

IO_FORMULA = ("scratch write bandwidth = max(output/step time, checkpoint/(5% x interval)); capacity = "
              "outputs + 2 checkpoints (hpc/io.py)")


@dataclass(frozen=True, kw_only=True)
class IoLoad:
    """What a run writes, and the scratch bandwidth per node when the intake pins it."""

    output_bytes_per_step: float
    checkpoint_bytes: float
    checkpoint_interval_s: float
    write_bandwidth_per_node_bytes_per_s: float | None
    gpus_per_node: int


def io_time_per_step(load: IoLoad | None, gpus: Any, base_step_s: Any) -> FloatArray:
    """Seconds per step the writes stall the run (0 unless the scratch bandwidth is pinned)."""
    g = np.asarray(gpus, dtype=np.float64)
    if load is None or load.write_bandwidth_per_node_bytes_per_s is None:
        return np.zeros_like(g)
    nodes = np.ceil(g / load.gpus_per_node)
    checkpoint = load.checkpoint_bytes * np.asarray(base_step_s) / load.checkpoint_interval_s
    per_step = load.output_bytes_per_step + checkpoint
    return np.asarray(per_step / (load.write_bandwidth_per_node_bytes_per_s * nodes))


@dataclass(frozen=True, kw_only=True)
class ScratchPlan:
    checkpoint_bytes: float
    checkpoint_interval_s: float
    checkpoints: int
    output_bytes_per_step: float
    output_total_bytes: float
    write_bandwidth_bytes_per_s: float            # job-wide requirement
    write_bandwidth_per_node_bytes_per_s: float
    capacity_bytes: float


def scratch_plan(load: IoLoad, step_s: float, steps: float, nodes: int) -> ScratchPlan:
    out_bw = load.output_bytes_per_step / step_s if step_s > 0 else 0.0
    ckpt_bw = load.checkpoint_bytes / (CHECKPOINT_STALL_FRACTION * load.checkpoint_interval_s)
    run_s = step_s * steps
    checkpoints = math.floor(run_s / load.checkpoint_interval_s)
    bw = max(out_bw, ckpt_bw)
    total_out = load.output_bytes_per_step * steps
    return ScratchPlan(
        checkpoint_bytes=load.checkpoint_bytes, checkpoint_interval_s=load.checkpoint_interval_s,
        checkpoints=checkpoints, output_bytes_per_step=load.output_bytes_per_step,
        output_total_bytes=total_out, write_bandwidth_bytes_per_s=bw,
        write_bandwidth_per_node_bytes_per_s=bw / max(nodes, 1),
        capacity_bytes=total_out + KEEP_CHECKPOINTS * load.checkpoint_bytes)
