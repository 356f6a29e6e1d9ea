"""The pipeline split a user pinned, in any of Megatron-Core's three ways, turned into the decoder
layers of the representative ranks (perf/stages.py) for every pp the planner tries.

- `first_stage_layers` / `last_stage_layers` (`--decoder-first/last-pipeline-num-layers`): the
  middle ranks share the rest evenly; Megatron-Core asserts that they divide it and, with
  interleaving, that every rank's count divides by vp.
- `embedding_as_layer` / `loss_as_layer` (`--account-for-embedding/loss-in-pipeline-split`):
  L + 1 + 1 slots, which pp must divide (and vp the slots per rank); rank 0 builds one decoder
  layer fewer for the embedding, the last rank one fewer for the loss.
- `pipeline_layout` (`--pipeline-model-parallel-layout`): every stage spelled out; pp is required
  and vp is the number of stages / pp.
The two flag families cannot be combined (Megatron-Core asserts the same), nor either with a layout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arch.model import ModelArch
from ..errors import InputError
from ..intake.common import ParallelismIntake
from ..perf.layout import IntArray
from ..perf.pipeline_layout import parse_layout
from ..perf.stages import pinned_split

P = "compute.parallelism."


@dataclass(frozen=True, kw_only=True)
class StagePin:
    """A pinned split: one of the three forms, already validated against the model."""

    first: int | None = None          # first/last stage layers
    last: int | None = None
    embedding_slot: int = 0           # account-for-embedding / loss slots (0 or 1 each)
    loss_slot: int = 0
    layout: tuple[int, int, int, int] | None = None   # (first, busiest middle, last, MTP on that middle)
    leads: tuple[int, int, int] = (-1, -1, -1)        # their chunk-0 decoder layers (-1: even chunks)
    layout_pp: int = 0
    layout_vp: int = 0
    text: str = ""

    @property
    def accounting(self) -> bool:
        return self.embedding_slot + self.loss_slot > 0

    def split(self, layers: int, pp: IntArray, vp: IntArray,
              ) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        """(first, middle, last, MTP on the middle) decoder layers for each (pp, vp)."""
        pp = np.asarray(pp, dtype=np.int64)
        zeros = np.zeros(pp.shape, dtype=np.int64)
        if self.layout is not None:
            fl, ml, ll, mm = self.layout
            return zeros + fl, zeros + ml, zeros + ll, zeros + mm
        if self.accounting:
            slots = layers + self.embedding_slot + self.loss_slot
            per = slots // np.maximum(pp, 1)
            first = np.where(pp == 1, layers, per - self.embedding_slot)
            last = np.where(pp == 1, 0, per - self.loss_slot)
            return first, np.where(pp >= 3, per, 0), last, zeros
        pf, pm, pl = pinned_split(layers, pp, self.first, self.last)
        return pf, pm, pl, zeros

    def chunk_leads(self, layers: int, pp: IntArray, vp: IntArray) -> tuple[IntArray, IntArray, IntArray]:
        """Decoder layers of chunk 0 on the first, middle and last rank (-1: the rank's even share).
        Megatron-Core's account-for-embedding/loss gives every virtual stage slots / (pp vp) slots,
        so the embedding's (loss's) slot makes the first (last) rank's chunk 0 (last chunk) lighter."""
        pp, vp = np.asarray(pp, dtype=np.int64), np.asarray(vp, dtype=np.int64)
        shape = np.broadcast_shapes(pp.shape, vp.shape)
        if self.layout is not None:
            first, mid, last = (np.full(shape, lead, dtype=np.int64) for lead in self.leads)
            return first, mid, last
        even = np.full(shape, -1, dtype=np.int64)
        if not self.accounting:
            return even, even, even
        per_chunk = (layers + self.embedding_slot + self.loss_slot) // np.maximum(pp * vp, 1)
        interleaved = vp > 1
        return np.where(interleaved, per_chunk - self.embedding_slot, -1), even, np.where(interleaved, per_chunk, -1)

    def ok(self, layers: int, pp: IntArray, vp: IntArray) -> np.ndarray:
        """Where Megatron-Core accepts the split (its assertions, per pp and vp)."""
        pp, vp = np.asarray(pp, dtype=np.int64), np.asarray(vp, dtype=np.int64)
        if self.layout is not None:
            return np.asarray((pp == self.layout_pp) & (vp == self.layout_vp))
        if self.accounting:
            slots = layers + self.embedding_slot + self.loss_slot
            per = slots // np.maximum(pp, 1)
            return np.asarray((pp > 1) & (slots % pp == 0) & (per % vp == 0) & (per >= 1))
        f = -1 if self.first is None else self.first
        last = -1 if self.last is None else self.last
        left = pp - (f >= 0) - (last >= 0)
        rest = layers - max(f, 0) - max(last, 0)
        even_rest = np.where(left > 0, rest % np.maximum(left, 1) == 0, rest == 0)
        first_v, mid_v, last_v, _ = self.split(layers, pp, vp)
        per_rank_vp = (first_v % vp == 0) & (mid_v % vp == 0) & (last_v % vp == 0)
        return np.asarray((pp > 1) & (rest >= 0) & even_rest & per_rank_vp)


def stage_pin(pins: ParallelismIntake, arch: ModelArch) -> StagePin | None:
    """The pinned split of the intake, validated; None when the planner chooses the split."""
    flags = pins.first_stage_layers is not None or pins.last_stage_layers is not None
    account = bool(pins.embedding_as_layer) or bool(pins.loss_as_layer)
    if pins.pipeline_layout is not None:
        if flags or account:
            raise InputError(P + "pipeline_layout", pins.pipeline_layout,
                             "a layout alone: it already places every layer, so first/last_stage_layers and "
                             "embedding/loss_as_layer cannot be given with it")
        if pins.pp is None:
            raise InputError(P + "pp", None, "the pipeline size the layout is for (Megatron-Core needs "
                             "--pipeline-model-parallel-size with --pipeline-model-parallel-layout)")
        parsed = parse_layout(pins.pipeline_layout, pins.pp, arch.layers, arch.mtp_layers)
        if pins.vp is not None and pins.vp != parsed.vp:
            raise InputError(P + "vp", pins.vp, f"{parsed.vp}: the layout has {len(parsed.stages)} stages "
                             f"over pp = {pins.pp} ranks")
        shape = parsed.representative()
        return StagePin(layout=(shape.first, shape.mid, shape.last, shape.mid_mtp), leads=shape.leads,
                        layout_pp=pins.pp, layout_vp=parsed.vp, text=pins.pipeline_layout)
    if flags and account:
        raise InputError(P + "first_stage_layers", pins.first_stage_layers,
                         "first/last_stage_layers or embedding/loss_as_layer, not both (Megatron-Core asserts "
                         "the same)")
    if flags:
        taken = (pins.first_stage_layers or 0) + (pins.last_stage_layers or 0)
        if taken > arch.layers:
            raise InputError(P + "first_stage_layers", taken,
                             f"first + last stage layers at most the model's {arch.layers} layers")
        return StagePin(first=pins.first_stage_layers, last=pins.last_stage_layers)
    if account:
        return StagePin(embedding_slot=int(bool(pins.embedding_as_layer)), loss_slot=int(bool(pins.loss_as_layer)))
    return None


__all__ = ["StagePin", "stage_pin"]
