"""Pipeline stages as the frameworks define them: how many decoder layers each pipeline rank holds,
and how many micro-batches (or model chunks) it keeps in flight.

Three ranks stand for the pipeline (every other rank is one of these shapes): the first (rank 0:
the embedding, the most micro-batches in flight), the busiest middle rank (rank 1 holds the most
in flight among the middle ranks; a layout string's heaviest middle rank is charged there) and the
last (the output head, the loss and, by default, the MTP modules). With pp = 1 the first rank is
the whole model; with pp = 2 there is no middle rank.

Splits of L decoder layers over pp ranks (`Layout.first_layers` etc.; the planner's `split` axis):
- even: L / pp each (Megatron-Core's default, which requires pp to divide L, and pp x vp with
  interleaving). `Layout.first_layers = -1` means this, charged as ceil(L / (pp vp)) per chunk.
- balanced: the embedding and the loss counted as one layer each, the L + 2 slots spread as evenly
  as possible (Megatron-Core `--account-for-embedding-in-pipeline-split` and
  `--account-for-loss-in-pipeline-split`; Llama 3, arXiv:2407.21783 §3.3.2: "one fewer layer on
  the first and the last stage"). Left-over slots go to the middle ranks first. Any L >= pp - 2
  can be split so, and a Megatron-Core layout string expresses it for any vp (`layout_string`).
- pinned: `first_stage_layers` / `last_stage_layers` (`--decoder-first/last-pipeline-num-layers`,
  the rest spread evenly over the middle ranks) or a `pipeline_layout` string.

Chunks with interleaving: the even split and pinned first/last stage layers give every chunk of a
rank layers_r / vp layers (Megatron-Core asserts they divide). The balanced split puts the
embedding's and the loss's slots in the first rank's chunk 0 and the last rank's last chunk, as
Megatron-Core's account-for-embedding/loss does per virtual stage; left-over layers go to the later
chunks, so chunk 0, the one with the most micro-batches in flight, is the lightest
(`balanced_leads`). In flight and the layers stored at the peak: perf/schedule_peak.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arch.model import ModelArch
from .layout import FloatArray, IntArray, Layout
from .schedule_peak import chunks_in_flight, stored_layer_microbatches

EVEN, BALANCED = 0, 1
SPLIT_NAMES = {EVEN: "even", BALANCED: "balanced"}


@dataclass(frozen=True)
class Stages:
    """Per representative rank (first, middle, last): arrays of the layout's broadcast shape."""

    layers: tuple[FloatArray, FloatArray, FloatArray]      # decoder layers on the rank (all chunks)
    mtp: tuple[FloatArray, FloatArray, FloatArray]         # MTP modules on the rank
    present: tuple[FloatArray, FloatArray, FloatArray]     # 1.0 where the rank exists
    in_flight: tuple[FloatArray, FloatArray, FloatArray]   # chunks in flight (vp > 1) or micro-batches
    stored: tuple[FloatArray, FloatArray, FloatArray]      # layer-micro-batches stored at the peak
    moe_layers: tuple[FloatArray, FloatArray, FloatArray]  # of the decoder layers, those with experts


def balanced_split(layers: int, pp: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """(first, busiest middle, last) decoder layers with the embedding and the loss as one layer
    each: L + 2 slots, q = (L + 2) // pp per rank, the r left over go to the middle ranks first,
    then to rank 0; rank 0 and the last rank build one decoder layer fewer than their slots."""
    pp = np.asarray(pp, dtype=np.int64)
    slots = layers + 2
    q, r = np.divmod(slots, np.maximum(pp, 1))
    middles = np.maximum(pp - 2, 0)
    single = pp == 1
    first = np.where(single, layers, q + (r > middles) - 1)
    mid = np.where(pp >= 3, q + (r > 0), 0)
    last = np.where(single, 0, q + (r > middles + 1) - 1)
    return first.astype(np.int64), mid.astype(np.int64), last.astype(np.int64)


def balanced_leads(first: IntArray, mid: IntArray, last: IntArray, vp: IntArray,
                   ) -> tuple[IntArray, IntArray, IntArray]:
    """Decoder layers in chunk 0 of the first, middle and last rank under the balanced split: the
    first rank's chunk 0 holds the embedding's slot and the floor share of its slots, a middle rank's
    the floor share of its layers, the last rank's the ceiling share of its slots (its last chunk
    holds the loss's slot and the floor share)."""
    vp = np.maximum(np.asarray(vp, dtype=np.int64), 1)
    first, mid, last = (np.asarray(x, dtype=np.int64) for x in (first, mid, last))
    single = vp == 1
    lead_first = np.where(single, first, np.maximum((first + 1) // vp - 1, 0))
    lead_mid = np.where(single, mid, mid // vp)
    lead_last = np.where(single, last, np.minimum(-(-(last + 1) // vp), last))
    return lead_first, lead_mid, lead_last


def chunk_layers(layers: int, lead: int, vp: int, *, larger_later: bool = True) -> list[int]:
    """A rank's decoder layers per chunk: `lead` in chunk 0 (-1: the even share), the rest spread
    over the other chunks, larger chunks later (the last rank: earlier, its last chunk holds the loss)."""
    if vp == 1:
        return [layers]
    if lead < 0:
        lead = layers // vp
    q, r = divmod(layers - lead, vp - 1)
    rest = [q + (c >= vp - 1 - r if larger_later else c < r) for c in range(vp - 1)]
    return [lead, *rest]


def even_split(layers: int, pp: IntArray, vp: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """ceil(L / (pp vp)) layers per chunk on every rank: L / pp where pp x vp divides L."""
    pp, vp = np.asarray(pp, dtype=np.int64), np.asarray(vp, dtype=np.int64)
    per_rank = vp * (-(-layers // (pp * vp)))
    return per_rank, np.where(pp >= 3, per_rank, 0), np.where(pp >= 2, per_rank, 0)


def pinned_split(layers: int, pp: IntArray, first: int | None, last: int | None,
                 ) -> tuple[IntArray, IntArray, IntArray]:
    """Megatron-Core's uneven first/last stages; the middle ranks share the rest evenly (rounded
    up here; the planner's rules keep only the pp that divide it, as Megatron-Core asserts)."""
    pp = np.asarray(pp, dtype=np.int64)
    f = np.full(pp.shape, -1 if first is None else first, dtype=np.int64)
    lst = np.full(pp.shape, -1 if last is None else last, dtype=np.int64)
    stages_left = pp - (f >= 0) - (lst >= 0)
    rest = layers - np.maximum(f, 0) - np.maximum(lst, 0)
    per = np.where(stages_left > 0, -(-rest // np.maximum(stages_left, 1)), 0)
    f = np.where(f >= 0, f, per)
    lst = np.where(pp == 1, 0, np.where(lst >= 0, lst, per))
    return f, np.where(pp >= 3, per, 0), lst


def _moe_before(n: FloatArray, a: ModelArch) -> FloatArray:
    """MoE layers among the first n layers (pattern: dense first, then every interval-th)."""
    k = np.ceil((n - a.moe_dense_layers) / a.moe_layer_interval)
    return np.asarray(np.clip(k, 0.0, float(a.moe_layers)))


def _moe_on_rank(n: FloatArray, start: FloatArray, vp: FloatArray, a: ModelArch) -> FloatArray:
    """MoE layers among a rank's n decoder layers: its first chunk (n / vp layers from `start`)
    counted exactly, its later chunks at the model's mean MoE share."""
    if not a.is_moe:
        return np.asarray(0.0 * n)
    chunk = n / vp
    first = _moe_before(start + chunk, a) - _moe_before(start, a)
    return np.asarray(np.clip(first + (n - chunk) * (a.moe_layers / a.layers), 0.0, n))


def resolve_stages(arch: ModelArch, layout: Layout, micro: FloatArray) -> Stages:
    """The three representative ranks of every layout. `micro` is the number of micro-batches."""
    layers, mtp_layers = arch.layers, arch.mtp_layers
    f8 = np.float64
    pp, vp = layout.pp.astype(f8), layout.vp.astype(f8)
    unset = layout.first_layers < 0
    ev_f, ev_m, ev_l = even_split(layers, layout.pp, layout.vp)
    first = np.where(unset, ev_f, layout.first_layers).astype(f8)
    mid = np.where(unset, ev_m, layout.mid_layers).astype(f8)
    last = np.where(unset, ev_l, layout.last_layers).astype(f8)
    single = (pp == 1.0).astype(f8)
    has_mid = (pp >= 3.0).astype(f8)
    has_last = 1.0 - single
    mid_mtp = layout.mid_mtp.astype(f8) * has_mid
    mtp_last = np.maximum(float(mtp_layers) - mid_mtp, 0.0)
    m = np.asarray(micro, dtype=f8)

    def f(x: FloatArray | float) -> FloatArray:
        # no broadcast to the layout's shape: each quantity keeps the shape of the axes it reads
        # (the planner's blocks broadcast rows against the inner axes), its consumers broadcast it
        return np.asarray(x, dtype=f8)

    # where each rank's first chunk starts in the model (the last rank's layers end the model; the
    # ceil of the even split may overcount the others)
    n = (first, mid * has_mid, last * has_last)
    starts = (0.0 * pp, first / vp, np.maximum(layers - n[2], 0.0) / vp)
    moe = tuple(f(_moe_on_rank(n[k], starts[k], vp, arch)) for k in range(3))
    ranks = (0.0, 1.0, pp - 1.0)
    leads = (layout.first_lead, layout.mid_lead, layout.last_lead)
    flights = [chunks_in_flight(pp, vp, rank, m) for rank in ranks]

    def stored(k: int) -> FloatArray:
        lead = np.where(leads[k] < 0, n[k] / vp, leads[k])
        return stored_layer_microbatches(pp, vp, flights[k], m, n[k], lead)

    return Stages(
        layers=(f(n[0]), f(n[1]), f(n[2])),
        moe_layers=(moe[0], moe[1], moe[2]),
        mtp=(f(single * mtp_layers), f(mid_mtp), f(has_last * mtp_last)),
        present=(f(1.0), f(has_mid), f(has_last)),
        in_flight=(flights[0], flights[1], flights[2]),
        stored=(stored(0), stored(1), stored(2)),
    )


def layout_string(first: int, mid: int, last: int, pp: int, vp: int, mtp_on_last: int = 0,
                  leads: tuple[int, int, int] = (-1, -1, -1)) -> str:
    """A Megatron-Core `--pipeline-model-parallel-layout` that realizes the split with chunk 0 of
    each rank holding `leads` layers (`chunk_layers`)."""
    per_rank = [chunk_layers(first, leads[0], vp)] + [chunk_layers(mid, leads[1], vp)
                                                      for _ in range(max(pp - 2, 0))]
    if pp > 1:
        per_rank.append(chunk_layers(last, leads[2], vp, larger_later=False))
    stages: list[str] = []
    for c in range(vp):
        for r in range(pp):
            s = "t" * per_rank[r][c]
            if r == 0 and c == 0:
                s = "E" + s
            if r == pp - 1 and c == vp - 1:
                s += "m" * mtp_on_last + "L"
            stages.append(s)
    return _compress("|".join(stages))


def _compress(text: str) -> str:
    """'tttt' -> 't*4' inside each stage, and runs of identical stages -> '(...|)*n'."""
    parts = text.split("|")

    def short(stage: str) -> str:
        out, i = [], 0
        while i < len(stage):
            j = i
            while j < len(stage) and stage[j] == stage[i]:
                j += 1
            out.append(stage[i] if j - i == 1 else f"{stage[i]}*{j - i}")
            i = j
        return "".join(out)

    pieces, i = [], 0
    while i < len(parts):
        j = i
        while j + 1 < len(parts) - 1 and parts[j + 1] == parts[i]:
            j += 1
        n = j - i + 1
        if n > 2 and i + n < len(parts):
            pieces.append(f"({short(parts[i])}|)*{n}")
            i = j + 1
            continue
        pieces.append(short(parts[i]) + ("|" if i < len(parts) - 1 else ""))
        i += 1
    return "".join(pieces)


__all__ = ["BALANCED", "EVEN", "SPLIT_NAMES", "Stages", "balanced_leads", "balanced_split", "chunk_layers",
           "even_split", "layout_string", "pinned_split", "resolve_stages"]
