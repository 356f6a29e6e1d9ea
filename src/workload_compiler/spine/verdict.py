"""The verdict of a result, in one word and one line, shared by the report and the exit code.

    meets target   feasible, and every target given is met
    feasible       feasible; no target was given to meet
    target open    feasible, but whether a target is met is not known yet: the time is a lower bound
                   until a stage left open (a CPU rate to measure) is known
    misses target  a configuration exists, but a target (deadline, GPU cap, hall power) collides
    infeasible     no configuration within the pins; the binding constraint is named

`wkc compile` exits 0 for the first four (a missed or open target is printed as a warning on stderr
and in the report's first line) and 3 for infeasible; `--strict` makes a missed target exit 3 too.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from .result import SystemSpec

VerdictCode = Literal["meets target", "feasible", "target open", "misses target", "infeasible"]


class Verdict(NamedTuple):
    code: VerdictCode
    text: str


def verdict(spec: SystemSpec) -> Verdict:
    if not spec.feasible:
        return Verdict("infeasible", f"infeasible: {spec.binding_constraint or 'no configuration fits'}")
    details = [str(c.get("detail") or c.get("constraint")) for c in spec.collisions]
    meets = _targets_met(spec)
    if details or meets is False:
        return Verdict("misses target", "feasible, misses its target: " + ("; ".join(details) or
                                                                           "the target is not met"))
    if meets is True:
        return Verdict("meets target", "feasible, meets its target")
    open_why = spec.objective.get("target_open") if spec.objective is not None else None
    if open_why:
        return Verdict("target open", f"feasible; whether it meets its target is open: {open_why}")
    return Verdict("feasible", "feasible (no target given)")


def _targets_met(spec: SystemSpec) -> bool | None:
    """The objective's own verdict (training, HPC), or the latency targets against what the
    serving layer reaches (inference); None when no target was given."""
    objective = spec.objective
    if objective is None:
        return None
    if objective.get("meets_target") is not None:
        return bool(objective.get("meets_target"))
    serving = spec.inference
    pairs = [(serving.get(got) if serving is not None else None, objective.get(target))
             for got, target in (("ttft_s", "ttft_target_s"), ("tpot_s", "tpot_target_s"))]
    given = [(got, target) for got, target in pairs if target is not None]
    if not given:
        return None
    return all(got is not None and got <= target * (1 + 1e-9) for got, target in given)


__all__ = ["Verdict", "VerdictCode", "verdict"]
