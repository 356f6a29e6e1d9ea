"""The space of parallel layouts for one GPU count, as NumPy axes, and its structural rules as masks.

The space is the cartesian product of
  (tp, pp, cp, dp) with tp * pp * cp * dp = gpus      every ordered factorization into divisors
  vp   divisors of the layer count                      virtual pipeline stages per rank
  mbs  powers of two up to the global batch             micro-batch size
  recompute {none, selective, full, op_selective},  zero {0, 1, 2, 3}
  ep   divisors of the expert count (MoE; 1 dense),  etp  powers of two up to the scale-up domain (MoE)
minus what the intake pins (a pinned axis has one value). `Space.decode` turns a range of flat
indices into axis arrays, so the planner walks the space in chunks without a Python object per
layout. `RULES` are the structural constraints, checked in order; a layout is counted under the
first rule it breaks, so the counts and the survivors add up to the size of the space.

Choices (Megatron-Core's, where it has one):
- TP must divide the attention heads, the KV heads (no KV-head replication: Megatron's
  `divide(num_query_groups, tp)`) and the MLP width, and stay inside one scale-up domain.
- pp * vp must divide the layers, at vp = 1 too, so PP divides them evenly (the memory and step
  models would take uneven stages, charging the largest, ceil(layers / pp), but the search does
  not enumerate them); with vp > 1 the number of micro-batches must be a multiple of pp (the
  interleaved 1F1B schedule's requirement).
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
from ..perf.layout import RECOMPUTE_CODES, Hardware, IntArray, Layout, TrainingSetup

BoolArray = npt.NDArray[np.bool_]
# The axes after the (tp, pp, cp, dp) rows, in the order of `Space.shape` and its flat indices.
INNER_AXES = ("vp", "mbs", "recompute", "zero", "ep", "etp")


def divisors(n: int) -> list[int]:
    """Positive divisors of n, ascending."""
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def _powers_of_two(limit: int) -> list[int]:
    return [1 << k for k in range(max(limit, 1).bit_length()) if 1 << k <= limit]


@dataclass(frozen=True, kw_only=True)
class Space:
    """Candidate values per axis; `factors` rows are (tp, pp, cp, dp)."""

    gpus: int
    factors: IntArray
    vp: IntArray
    mbs: IntArray
    recompute: IntArray
    zero: IntArray
    ep: IntArray
    etp: IntArray
    sp_pin: bool | None

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self.factors), *(len(getattr(self, n)) for n in INNER_AXES))

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
    def _factor_columns(self) -> tuple[IntArray, ...]:
        return tuple(np.ascontiguousarray(self.factors[:, k]) for k in range(4))

    def decode(self, flat: IntArray) -> dict[str, IntArray]:
        """Axis values of the layouts with these flat indices (C order over `shape`): one divmod by
        the inner size, then gathers from the factor columns and the pre-decoded inner axes."""
        size, inner = self._inner
        row, pos = np.divmod(flat, size)
        tp, pp, cp, dp = (c[row] for c in self._factor_columns)
        return {"tp": tp, "pp": pp, "cp": cp, "dp": dp, **{n: v[pos] for n, v in inner.items()}}

    def sequence_parallel(self, tp: IntArray) -> BoolArray:
        """On wherever tp > 1 (Megatron's recommendation with TP), unless pinned off."""
        on = tp > 1
        return on & self.sp_pin if self.sp_pin is not None else on


def _factorizations(gpus: int, pins: ParallelismIntake) -> IntArray:
    """Every (tp, pp, cp, dp) of divisors with tp * pp * cp * dp = gpus, filtered by the pins."""
    d = np.asarray(divisors(gpus), dtype=np.int64)
    tp, pp, cp = (a.ravel() for a in np.meshgrid(d, d, d, indexing="ij"))
    ok = gpus % (tp * pp * cp) == 0
    rows = np.stack([tp[ok], pp[ok], cp[ok], gpus // (tp[ok] * pp[ok] * cp[ok])], axis=1)
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
    recompute = (sorted(RECOMPUTE_CODES.values()) if p.recompute is None
                 else [RECOMPUTE_CODES[p.recompute]])
    moe = arch.is_moe
    return Space(
        gpus=gpus,
        factors=_factorizations(gpus, p),
        vp=_axis(p.vp, divisors(arch.layers)),
        mbs=_axis(p.micro_batch_size, _powers_of_two(setup.global_batch_size)),
        recompute=np.asarray(recompute, dtype=np.int64),
        zero=_axis(p.zero_stage, [0, 1, 2, 3]),
        ep=_axis(p.ep, divisors(arch.moe_experts) if moe else [1]),
        etp=_axis(p.etp, _powers_of_two(hw.scale_up_domain_gpus) if moe else [1]),
        sp_pin=p.sequence_parallel,
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
    if arch.dense_mlp_layers and arch.ffn_hidden_size:
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
    out += [
        ("vp > 1 needs pp > 1", lambda v: (v["vp"] == 1) | (v["pp"] > 1)),
        ("pp x vp does not divide layers (interleaving)",
         lambda v: (v["vp"] == 1) | (arch.layers % (v["pp"] * v["vp"]) == 0)),
        ("batch not divisible by dp x micro-batch", lambda v: gbs % (v["dp"] * v["mbs"]) == 0),
        ("interleaving needs micro-batches divisible by pp",
         lambda v: (v["vp"] == 1) | ((gbs // (v["dp"] * v["mbs"])) % v["pp"] == 0)),
        ("zero > 0 needs dp > 1", lambda v: (v["zero"] == 0) | (v["dp"] > 1)),
    ]
    if arch.is_moe:
        out.append(("ep x etp does not divide tp x cp x dp",
                    lambda v: (v["tp"] * v["cp"] * v["dp"]) % (v["ep"] * v["etp"]) == 0))
    else:
        out.append(("ep or etp > 1 without experts", lambda v: (v["ep"] == 1) & (v["etp"] == 1)))
    return out


def layout_of(values: Values, space: Space) -> Layout:
    """A Layout (NumPy arrays) from decoded axis values."""
    return Layout(tp=values["tp"], pp=values["pp"], dp=values["dp"], cp=values["cp"], ep=values["ep"],
                  etp=values["etp"], vp=values["vp"], mbs=values["mbs"], recompute=values["recompute"],
                  sp=space.sequence_parallel(values["tp"]), zero=values["zero"])
