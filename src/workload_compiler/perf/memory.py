"""Training memory per GPU by term (interface; the implementation is being written)."""

from __future__ import annotations

from ..arch.model import ModelArch
from .layout import FloatArray, Layout, TrainingSetup

MEMORY_TERMS = ("weights", "gradients", "optimizer", "activations", "runtime")


def training_memory_bytes(arch: ModelArch, setup: TrainingSetup, layout: Layout) -> dict[str, FloatArray]:
    """Bytes per GPU (the most loaded one: first pipeline stage) for each of MEMORY_TERMS and 'total'."""
    raise NotImplementedError
