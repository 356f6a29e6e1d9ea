"""The space of parallel layouts for one GPU count, as NumPy axes, and its structural rules as masks.

The space is the cartesian product of
  (tp, pp, cp, dp) with tp * pp * cp * dp = gpus      every ordered factorization into divisors
  vp   divisors of the layers, and 1 .. 8               virtual pipeline stages per rank (see below)
  split {even, balanced} or the pinned split         how the layers spread over the pipeline ranks
  mbs  powers of two up to the global batch             micro-batch size
  recompute {none, selective, full, op_selective, modules, mla_up_proj (MLA models only)},  zero {0, 1, 2, 3}
  ep   divisors of the expert count (MoE; 1 dense),  etp  powers of two up to the scale-up domain (MoE)
minus what the intake pins (a pinned axis has one value). `Space.decode` turns a range of flat
indices into axis arrays, so the planner walks the space in chunks without a Python object per
layout. `RULES` are the structural constraints, checked in order; a layout is counted under the
first rule it breaks, so the counts and the survivors add up to the size of the space.

Choices (Megatron-Core's, where it has one):
- TP must divide the attention heads, the KV heads (no KV-head replication: Megatron's
  `divide(num_query_groups, tp)`) and the MLP width, and stay inside one scale-up domain.
- Pipeline splits (perf/stages.py): `even` needs pp x vp to divide the layers (Megatron-Core's
  default); `balanced` counts the embedding and the loss as one layer each and spreads the
  L + 2 slots over the ranks, which a Megatron-Core layout string expresses for any pp and vp
  (it needs pp > 1, which would otherwise repeat `even`, and at least one slot per model chunk);
  a pinned split (first/last stage layers, embedding/loss as layers, a layout string) follows
  Megatron-Core's own assertions (planner/stage_pins.py). With vp > 1 the number of
  micro-batches must be a multiple of pp (the interleaved 1F1B schedule's requirement).
- CP > 1 needs seq_len % (2 cp) == 0 (load-balanced causal chunks); sequence parallelism (on
  whenever tp > 1 unless pinned off) needs the CP-local sequence divisible by tp.
- ZeRO > 0 with dp = 1 shards over one rank: the same layout as ZeRO 0, so it is left out.
- MoE: ep divides the experts; ep * etp divides tp * cp * dp (Megatron "MoE parallel folding");
  etp divides the expert MLP width and stays inside a scale-up domain.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..arch.model import ModelArch
from ..intake.common import ParallelismIntake
from ..perf.layout import RECOMPUTE_CODES, Hardware, IntArray, Layout, TrainingSetup, recompute_modes_for
from ..perf.offload import offload_possible
from ..perf.stages import BALANCED, EVEN, balanced_leads, balanced_split, even_split
from .stage_pins import StagePin, stage_pin

PINNED = 2   # the split axis value of a split the intake pins
MAX_FREE_VP = 8

BoolArray = npt.NDArray[np.bool_]
# The axes after the (tp, pp, cp, dp) rows, in the order of `Space.shape` and its flat indices.
# The outer rows hold (tp, pp, cp, dp, vp, split): every rule that reads only these (the pipeline
# split rules read pp, vp and split together) prunes whole rows before the product is formed.
OUTER = ("tp", "pp", "cp", "dp", "vp", "split")
INNER_AXES = ("mbs", "recompute", "zero", "ep", "etp")


def divisors(n: int) -> list[int]:
    """Positive divisors of n, ascending."""
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def _powers_of_two(limit: int) -> list[int]:
    return [1 << k for k in range(max(limit, 1).bit_length()) if 1 << k <= limit]


@dataclass(frozen=True, kw_only=True)
class Space:
    """Candidate values per axis; `rows` are (tp, pp, cp, dp, vp, split) (`OUTER`), the product of
    the factorizations `factors` (tp, pp, cp, dp) with the vp and split candidates."""

    gpus: int
    rows: IntArray
    factors: IntArray
    vp: IntArray
    mbs: IntArray
    recompute: IntArray
    zero: IntArray
    ep: IntArray
    etp: IntArray
    split: IntArray
    sp_pin: bool | None
    layers: int = 1
    stage_pin: StagePin | None = None
    offload: int = 0               # pinned activation-offload layers (perf/offload.py)
    offload_auto: bool = False     # the planner offloads the fewest layers that make a layout fit

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self.rows), *(len(getattr(self, n)) for n in INNER_AXES))

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @functools.cached_property
    def _inner(self) -> tuple[int, dict[str, IntArray]]:
        """The axes after the factor rows, decoded once: (their product size, value per inner index)."""
        shape = self.shape[1:]
        size = int(np.prod(shape))
        idx = np.unravel_index(np.arange(size, dtype=np.int64), shape)
        return size, {n: getattr(self, n)[i] for n, i in zip(INNER_AXES, idx, strict=True)}

    @functools.cached_property
    def _row_columns(self) -> tuple[IntArray, ...]:
        return tuple(np.ascontiguousarray(self.rows[:, k]) for k in range(len(OUTER)))

    def decode(self, flat: IntArray) -> dict[str, IntArray]:
        """Axis values of the layouts with these flat indices (C order over `shape`): one divmod by
        the inner size, then gathers from the row columns and the pre-decoded inner axes."""
        size, inner = self._inner
        row, pos = np.divmod(flat, size)
        outer = {n: c[row] for n, c in zip(OUTER, self._row_columns, strict=True)}
        return {**outer, **{n: v[pos] for n, v in inner.items()}}

    def block(self, start: int, stop: int) -> dict[str, IntArray]:
        """The layouts of rows start..stop with every inner value, as arrays that broadcast to
        (rows, *inner shape): each axis varies along its own dimension only, so the models compute
        what depends on a few axes once per combination of those axes. Flattened in C order, the
        block is flat indices start x inner size .. stop x inner size."""
        nd = 1 + len(INNER_AXES)
        out = {n: c[start:stop].reshape((-1,) + (1,) * (nd - 1)) for n, c in zip(OUTER, self._row_columns, strict=True)}
        for dim, n in enumerate(INNER_AXES, start=1):
            out[n] = getattr(self, n).reshape((1,) * dim + (-1,) + (1,) * (nd - 1 - dim))
        return out

    def sequence_parallel(self, tp: IntArray) -> BoolArray:
        """On wherever tp > 1 (Megatron's recommendation with TP), unless pinned off."""
        on = tp > 1
        return on & self.sp_pin if self.sp_pin is not None else on


def _factorizations(gpus: int, pins: ParallelismIntake) -> IntArray:
    """Every (tp, pp, cp, dp) of divisors with tp * pp * cp * dp = gpus, filtered by the pins."""
    d = np.asarray(divisors(gpus), dtype=np.int64)
    tp, pp, cp = (a.ravel() for a in np.meshgrid(d, d, d, indexing="ij"))
    # divide step by step: the product of three divisors of a large count overflows int64
    rest = gpus // tp
    ok = (rest % pp == 0) & ((rest // pp) % cp == 0)
    rows = np.stack([tp[ok], pp[ok], cp[ok], rest[ok] // pp[ok] // cp[ok]], axis=1)
    for col, pin in enumerate((pins.tp, pins.pp, pins.cp, pins.dp)):
        if pin is not None:
            rows = rows[rows[:, col] == pin]
    return rows


def _axis(pin: int | None, candidates: list[int]) -> IntArray:
    return np.asarray([pin] if pin is not None else candidates, dtype=np.int64)


def build_space(arch: ModelArch, setup: TrainingSetup, hw: Hardware, gpus: int,
                pins: ParallelismIntake | None = None) -> Space:
    """The candidate axes for `gpus` GPUs (see the module docstring)."""
    p = pins or ParallelismIntake()
    # the framework's own modes and ZeRO stages (catalog/data/frameworks.yaml), unless pinned
    fw = setup.framework
    offload = p.activation_offload_layers or 0
    if p.recompute is not None:
        recompute = [RECOMPUTE_CODES[p.recompute]]
    elif offload:     # Megatron-Core refuses offload beside recompute (perf/offload.py)
        recompute = [RECOMPUTE_CODES["none"]]
    else:
        recompute = sorted(recompute_modes_for(arch.is_mla, fw.recompute_modes))
    moe = arch.is_moe
    pinned_split = stage_pin(p, arch)
    if pinned_split is not None and pinned_split.layout is not None:
        vp_values = [pinned_split.layout_vp]
    else:
        # Interleaving depths: the divisors of L (the even split needs pp x vp | L) and every depth
        # up to 8 for the balanced split (a layout string takes any; the published recipes use
        # vp <= 8, and deeper interleaving only adds p2p traffic once the bubble is small).
        vp_values = sorted(set(divisors(arch.layers)) | set(range(1, min(arch.layers, MAX_FREE_VP) + 1)))
    factors = _factorizations(gpus, p)
    vp = _axis(p.vp, vp_values)
    split = np.asarray([PINNED] if pinned_split is not None else [EVEN, BALANCED], dtype=np.int64)
    f_idx, v_idx, s_idx = (a.ravel() for a in np.meshgrid(np.arange(len(factors)), np.arange(len(vp)),
                                                            np.arange(len(split)), indexing="ij"))
    rows = np.concatenate([factors[f_idx], vp[v_idx][:, None], split[s_idx][:, None]], axis=1).astype(np.int64)
    return Space(
        gpus=gpus,
        rows=rows.reshape(-1, len(OUTER)),
        factors=factors,
        vp=vp,
        mbs=_axis(p.micro_batch_size, _powers_of_two(setup.global_batch_size)),
        recompute=np.asarray(recompute, dtype=np.int64),
        zero=_axis(p.zero_stage, [z for z in (0, 1, 2, 3) if z in fw.zero_stages]),
        ep=_axis(p.ep, divisors(arch.moe_experts) if moe else [1]),
        etp=_axis(p.etp, _powers_of_two(hw.scale_up_domain_gpus) if moe else [1]),
        split=split,
        sp_pin=p.sequence_parallel,
        layers=arch.layers,
        stage_pin=pinned_split,
        offload=offload,
        offload_auto=p.activation_offload_layers is None and offload_possible(setup, hw),
    )


Values = dict[str, IntArray]
Rule = tuple[str, Callable[[Values], BoolArray]]


def rules(arch: ModelArch, setup: TrainingSetup, hw: Hardware, space: Space) -> list[Rule]:
    """(reason, ok-mask) in the order rejections are attributed; each mask is True where allowed."""
    seq, gbs, domain = setup.seq_len, setup.global_batch_size, hw.scale_up_domain_gpus

    def sp(v: Values) -> BoolArray:
        return space.sequence_parallel(v["tp"])

    out: list[Rule] = [
        ("tp exceeds scale-up domain", lambda v: v["tp"] <= domain),
        ("tp does not divide attention heads", lambda v: arch.attention_heads % v["tp"] == 0),
        ("tp does not divide kv heads", lambda v: arch.kv_heads % v["tp"] == 0),
    ]
    if arch.mamba_layers:
        # Megatron-Core MambaMixer splits heads and B/C groups over tp; its all-to-all context
        # parallelism (ssm/mamba_context_parallel.py) splits each tp rank's heads over cp, and its
        # groups over cp or cp over its groups
        mh, mg = arch.mamba_heads, arch.mamba_groups
        out += [
            ("tp x cp does not divide mamba heads", lambda v: mh % (v["tp"] * v["cp"]) == 0),
            ("tp does not divide mamba groups", lambda v: mg % v["tp"] == 0),
            ("cp and mamba groups per tp rank do not divide each other",
             lambda v: ((mg // v["tp"]) % v["cp"] == 0) | (v["cp"] % np.maximum(mg // v["tp"], 1) == 0)),
        ]
    if arch.mlp_blocks and arch.ffn_hidden_size:
        out.append(("tp does not divide ffn hidden size", lambda v: arch.ffn_hidden_size % v["tp"] == 0))
    # Rules on (tp, pp, cp, dp) alone and on one other axis alone come first: the search applies
    # them to the axes before it expands the product (search.py `_prefilter`).
    out += [
        # A stage needs at least one layer. Uneven stages are allowed without interleaving: the
        # models charge the largest, ceil(layers / pp), as Megatron's
        # --decoder-first/last-pipeline-num-layers allow; interleaving (vp > 1) needs equal chunks.
        ("pp exceeds layers", lambda v: v["pp"] <= arch.layers),
        ("cp does not divide sequence (2 cp chunks)",
         lambda v: (v["cp"] == 1) | (seq % (2 * v["cp"]) == 0)),
        ("sequence not divisible by tp under sequence parallelism",
         lambda v: ~sp(v) | ((seq // v["cp"]) % v["tp"] == 0)),
    ]
    if arch.is_moe:
        out += [
            ("ep does not divide experts", lambda v: arch.moe_experts % v["ep"] == 0),
            ("etp exceeds scale-up domain", lambda v: v["etp"] <= domain),
            ("etp does not divide expert ffn", lambda v: arch.moe_ffn_hidden_size % v["etp"] == 0),
        ]
    L = arch.layers
    pin = space.stage_pin
    out += [
        ("vp > 1 needs pp > 1", lambda v: (v["vp"] == 1) | (v["pp"] > 1)),
        ("even split needs pp x vp to divide the layers",
         lambda v: (v["split"] != EVEN) | (L % (v["pp"] * v["vp"]) == 0)),
        ("balanced split needs pp > 1", lambda v: (v["split"] != BALANCED) | (v["pp"] > 1)),
        ("balanced split needs a layer slot per model chunk",
         lambda v: (v["split"] != BALANCED) | ((L + 2) // v["pp"] >= v["vp"])),
        ("balanced split repeats the even one", lambda v: (v["split"] != BALANCED) | ~_same_as_even(L, v)),
    ]
    if space.offload:
        out.append(("activation offload needs pp 1 (Megatron-Core)", lambda v: v["pp"] == 1))
    if pin is not None:
        out.append(("the pinned pipeline split does not fit this pp x vp (Megatron-Core's rules)",
                    lambda v: pin.ok(L, v["pp"], v["vp"])))
    out += [
        ("batch not divisible by dp x micro-batch", lambda v: gbs % (v["dp"] * v["mbs"]) == 0),
        ("interleaving needs micro-batches divisible by pp",
         lambda v: (v["vp"] == 1) | ((gbs // (v["dp"] * v["mbs"])) % v["pp"] == 0)),
    ]
    if 0 in space.zero:
        # at dp 1 there is nothing to shard: zero > 0 is zero 0 again. A pinned zero > 0 stays
        # (Megatron-Core takes --use-distributed-optimizer at dp 1 and shards nothing).
        out.append(("zero > 0 at dp 1 repeats zero 0", lambda v: (v["zero"] == 0) | (v["dp"] > 1)))
    if arch.is_moe:
        out.append(("ep x etp does not divide tp x cp x dp",
                    lambda v: (v["tp"] * v["cp"] * v["dp"]) % (v["ep"] * v["etp"]) == 0))
    else:
        out.append(("ep or etp > 1 without experts", lambda v: (v["ep"] == 1) & (v["etp"] == 1)))
    return out


def _same_as_even(layers: int, v: Values) -> BoolArray:
    """Where the balanced split gives the layer counts of a valid even split (pp = 2, L / 2 layers each)."""
    first, mid, last = balanced_split(layers, v["pp"])
    per = layers // v["pp"]
    even_ok = layers % (v["pp"] * v["vp"]) == 0
    return np.asarray(even_ok & (first == per) & (last == per) & ((v["pp"] < 3) | (mid == per)))


def stage_layers(values: Values, space: Space) -> tuple[IntArray, ...]:
    """(first, middle, last, MTP on the middle, and the chunk-0 layers of first, middle and last)
    decoder layers of each layout's split."""
    pp, vp, split = values["pp"], values["vp"], values["split"]
    even = even_split(space.layers, pp, vp)
    bal = balanced_split(space.layers, pp)
    no_mtp_on_middle = np.zeros(np.shape(pp), dtype=np.int64)
    out = [np.where(split == BALANCED, b, e) for e, b in zip(even, bal, strict=True)] + [no_mtp_on_middle]
    # chunk-0 layers: the balanced split's light outer chunks; -1 (equal chunks) for the even split
    leads = [np.where(split == BALANCED, b, -1) for b in balanced_leads(bal[0], bal[1], bal[2], vp)]
    if space.stage_pin is not None:
        pinned = space.stage_pin.split(space.layers, pp, vp)
        out = [np.where(split == PINNED, p, o) for p, o in zip(pinned, out, strict=True)]
        pinned_leads = space.stage_pin.chunk_leads(space.layers, pp, vp)
        leads = [np.where(split == PINNED, p, o) for p, o in zip(pinned_leads, leads, strict=True)]
    return (*out, *leads)


def layout_of(values: Values, space: Space) -> Layout:
    """A Layout (NumPy arrays) from decoded axis values."""
    first, mid, last, mid_mtp, lead_first, lead_mid, lead_last = stage_layers(values, space)
    return Layout(tp=values["tp"], pp=values["pp"], dp=values["dp"], cp=values["cp"], ep=values["ep"],
                  etp=values["etp"], vp=values["vp"], mbs=values["mbs"], recompute=values["recompute"],
                  sp=space.sequence_parallel(values["tp"]), zero=values["zero"], first_layers=first,
                  mid_layers=mid, last_layers=last, mid_mtp=mid_mtp, first_lead=lead_first,
                  mid_lead=lead_mid, last_lead=lead_last, offload=np.asarray(space.offload))
