"""Megatron-Core's pipeline layout string (`--pipeline-model-parallel-layout`), parsed and validated.

A layout lists the virtual pipeline stages in order, separated by `|`; each stage is a run of
layer letters: `E` embedding, `t` a transformer (decoder) layer, `m` a multi-token-prediction
layer, `L` the loss (output head). `x*n` repeats a letter, `(...)*n` repeats a group (groups may
hold `|`), commas are cosmetic. Virtual stage s runs on pipeline rank s mod pp, as chunk s // pp
(Megatron-Core `PipelineParallelLayerLayout`: the 1-D list is read as `layout[vpp * pp + pp_rank]`).

    "Et*3|(tt|)*29,m|L" with pp 16: 32 stages, vp 2; rank 0 holds E+3t and 2t, rank 14 2t and m,
    rank 15 2t and L (Megatron-Core docs, "Custom Pipeline Model Parallel Layout", DeepSeek-V3).

Rules checked (Megatron-Core `validate_layer_layout`): the first layer is E and the last is L,
each exactly once; the decoder layers number the model's layers and the MTP layers its MTP
modules; no decoder layer after an MTP layer; the stage count divides by pp.
Errors name the position (0-based character offset) of the offending token.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError

FIELD = "compute.parallelism.pipeline_layout"
LETTERS = {"E": "embedding", "t": "decoder", "m": "mtp", "L": "loss"}
MAX_REPEAT = 100_000      # no real model has more layers; bounds the expansion of a typo


@dataclass(frozen=True)
class ParsedLayout:
    """Layer letters per virtual stage, in order; `ranks()` regroups them by pipeline rank."""

    stages: tuple[str, ...]
    pp: int

    @property
    def vp(self) -> int:
        return len(self.stages) // self.pp

    def rank_stages(self, rank: int) -> tuple[str, ...]:
        """The chunks of one pipeline rank, chunk 0 first."""
        return tuple(self.stages[c * self.pp + rank] for c in range(self.vp))

    def decoder_layers_per_rank(self) -> tuple[int, ...]:
        return tuple(sum(s.count("t") for s in self.rank_stages(r)) for r in range(self.pp))

    def mtp_rank(self) -> int | None:
        """The pipeline rank whose chunks hold the MTP layers (None without MTP)."""
        for r in range(self.pp):
            if any("m" in s for s in self.rank_stages(r)):
                return r
        return None

    def representative(self) -> RankShapes:
        """The first, the busiest middle and the last rank (perf/stages.py): decoder layers, MTP
        modules on that middle rank, and the decoder layers of each one's chunk 0."""
        counts = self.decoder_layers_per_rank()

        def lead(rank: int) -> int:
            return self.rank_stages(rank)[0].count("t")

        if self.pp == 1:
            return RankShapes(counts[0], 0, 0, 0, (counts[0], -1, -1))
        middle = range(1, self.pp - 1)
        mtp = self.mtp_rank()
        # the busiest middle rank by work: an MTP module costs about a layer plus the output head
        busiest = max(middle, key=lambda r: counts[r] + 2 * (r == mtp), default=None)
        if busiest is None:
            return RankShapes(counts[0], 0, counts[-1], 0, (lead(0), -1, lead(self.pp - 1)))
        mid_mtp = sum(s.count("m") for s in self.rank_stages(busiest))
        return RankShapes(counts[0], counts[busiest], counts[-1], mid_mtp,
                          (lead(0), lead(busiest), lead(self.pp - 1)))


@dataclass(frozen=True)
class RankShapes:
    """Decoder layers of the representative ranks and of their chunk 0 (-1 where a rank is absent)."""

    first: int
    mid: int
    last: int
    mid_mtp: int
    leads: tuple[int, int, int]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, what: str, at: int | None = None) -> InputError:
        where = self.pos if at is None else at
        return InputError(FIELD, self.text, f"{what} at position {where}; a layout is stages of "
                          "E (embedding), t (decoder layer), m (MTP layer), L (loss) separated by '|', "
                          "with x*n and (...)*n repeats, e.g. 'Et*3|(tt|)*29,m|L'")

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def number(self) -> int:
        start = self.pos
        while self.peek().isdigit():
            self.pos += 1
        if start == self.pos:
            raise self.error("expected a repeat count after '*'")
        n = int(self.text[start:self.pos])
        if n < 1 or n > MAX_REPEAT:
            raise self.error(f"repeat count {n} outside 1..{MAX_REPEAT}", start)
        return n

    def sequence(self, closing: str) -> str:
        """Expand tokens until `closing` (')' inside a group, '' at the end); returns letters and '|'."""
        out: list[str] = []
        while True:
            ch = self.peek()
            if ch == closing:
                return "".join(out)
            if ch == "":
                raise self.error("unclosed '('")
            if ch in " ,\t":
                self.pos += 1
                continue
            if ch == "(":
                open_at = self.pos
                self.pos += 1
                group = self.sequence(")")
                self.pos += 1           # the ')'
                if self.peek() != "*":
                    raise self.error("expected '*n' after a group", open_at)
                self.pos += 1
                n = self.number()
                if len(group) * n > MAX_REPEAT * 4:
                    raise self.error("layout expands to too many layers", open_at)
                out.append(group * n)
                continue
            if ch in LETTERS or ch == "|":
                self.pos += 1
                if ch != "|" and self.peek() == "*":
                    self.pos += 1
                    out.append(ch * self.number())
                else:
                    out.append(ch)
                continue
            if ch == ")":
                raise self.error("')' without '('")
            raise self.error(f"unknown token {ch!r}")


def expand_layout(text: str, pp: int) -> ParsedLayout:
    """The stages of a layout, syntax checked only (a layout the planner wrote, read back)."""
    return ParsedLayout(stages=tuple(_Parser(text).sequence("").split("|")), pp=pp)


def parse_layout(text: str, pp: int, layers: int, mtp_layers: int = 0) -> ParsedLayout:
    """Parse and validate a layout for `pp` pipeline ranks and a model of `layers` decoder layers."""
    stages = expand_layout(text, max(pp, 1)).stages
    flat = "".join(stages)

    def bad(what: str) -> InputError:
        return InputError(FIELD, text, f"{what} (expanded: {len(stages)} stages)")

    if not flat or flat[0] != "E":
        raise bad("the first layer must be E (embedding)")
    if flat[-1] != "L":
        raise bad("the last layer must be L (loss)")
    if flat.count("E") != 1 or flat.count("L") != 1:
        raise bad("E and L must each appear exactly once")
    if flat.count("t") != layers:
        raise bad(f"{flat.count('t')} decoder layers (t) but the model has {layers}")
    if flat.count("m") != mtp_layers:
        raise bad(f"{flat.count('m')} MTP layers (m) but the model has {mtp_layers}")
    if "m" in flat and "t" in flat[flat.index("m"):]:
        raise bad("decoder layers (t) must come before MTP layers (m)")
    if pp < 1 or len(stages) % pp:
        raise bad(f"{len(stages)} stages do not divide into pp = {pp} pipeline ranks")
    return ParsedLayout(stages=stages, pp=pp)


__all__ = ["FIELD", "ParsedLayout", "RankShapes", "expand_layout", "parse_layout"]
