"""The fewest GPUs that can hold a model at all, and the sentence that says why.

One replica's model state (weights, gradients and optimizer state) comes from the memory model
itself, on the unsharded layout (tp = pp = dp = 1, ZeRO 0), so the bound and the planner agree
on bytes per parameter. With every byte of it sharded over n GPUs (ZeRO-3/FSDP, or TP x PP x EP
multiplying to n), n >= state / HBM (perf.objective.min_gpus_to_hold). Activations, runtime
buffers and ZeRO-3 gather transients only add to it, so no layout exists below this count.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..arch.model import ModelArch
from ..perf.layout import Hardware, Layout, TrainingSetup
from ..perf.memory import training_memory_bytes
from ..perf.objective import min_gpus_to_hold
from ..units import format_bytes_decimal
from .search import MemoryFn

STATE_TERMS = ("weights", "gradients", "optimizer")
_TERM_WORDS = {"weights": "weights", "gradients": "gradients", "optimizer": "optimizer state"}


@dataclass(frozen=True, kw_only=True)
class HoldBound:
    """Fewest GPUs whose HBM holds one replica's model state; `terms` are bytes per replica."""

    gpus: int | None
    terms: dict[str, float]
    hbm_bytes: float
    accelerator_id: str
    gpus_per_node: int

    @property
    def state_bytes(self) -> float:
        return sum(self.terms.values())

    @property
    def binding_term(self) -> str:
        """The largest of weights, gradients, optimizer: what dominates the bound."""
        return max(self.terms, key=lambda t: self.terms[t])

    @property
    def whole_nodes_gpus(self) -> int | None:
        """The bound rounded up to whole nodes."""
        if self.gpus is None:
            return None
        node = self.gpus_per_node
        return -(-self.gpus // node) * node

    def explain(self) -> str:
        """'weights 0.35 TB + gradients 0.70 TB + optimizer state 2.10 TB = 3.15 TB per replica ...'"""
        parts = " + ".join(f"{_TERM_WORDS[t]} {format_bytes_decimal(b)}" for t, b in self.terms.items())
        return (f"{parts} = {format_bytes_decimal(self.state_bytes)} per replica "
                f"({_TERM_WORDS[self.binding_term]} the largest); fully sharded over n GPUs of "
                f"{format_bytes_decimal(self.hbm_bytes)} each, n >= {self.gpus} "
                f"({self.whole_nodes_gpus} in whole nodes of {self.gpus_per_node})")

    def shortfall(self, gpus: int) -> str:
        """'weights, gradients and optimizer state need 2.80 TB per replica but 8 x a100 hold 640 GB'."""
        return (f"weights, gradients and optimizer state need {format_bytes_decimal(self.state_bytes)} "
                f"per replica ({_TERM_WORDS[self.binding_term]} "
                f"{format_bytes_decimal(self.terms[self.binding_term])} the largest) but {gpus} x "
                f"{self.accelerator_id} hold {format_bytes_decimal(gpus * self.hbm_bytes)}; "
                f"at least {self.gpus} GPUs are needed")


def replica_state_bytes(arch: ModelArch, setup: TrainingSetup,
                        memory_fn: MemoryFn = training_memory_bytes) -> dict[str, float]:
    """Weights, gradients and optimizer bytes of one unsharded replica, from the memory model."""
    one = Layout.of(tp=1, pp=1, dp=1, cp=1, ep=1, etp=1, vp=1, mbs=1, recompute=2, sp=False, zero=0)
    mem = memory_fn(arch, setup, one)
    return {t: float(mem[t]) for t in STATE_TERMS}


def fewest_gpus_to_hold(arch: ModelArch, setup: TrainingSetup, hw: Hardware,
                        memory_fn: MemoryFn = training_memory_bytes) -> HoldBound:
    terms = replica_state_bytes(arch, setup, memory_fn)
    return HoldBound(gpus=min_gpus_to_hold(sum(terms.values()), hw.hbm_bytes), terms=terms,
                     hbm_bytes=hw.hbm_bytes, accelerator_id=hw.accelerator_id,
                     gpus_per_node=hw.gpus_per_node)
