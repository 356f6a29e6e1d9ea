"""The operating boundary and the boundary register as the intake sets them (seed 000), and the
operations inputs (restore time, service level) the spares pool is sized for.

    boundary:
      access_model: scheduler                  # bare_metal | scheduler | kubernetes | managed_api
      cells:                                   # layer x function -> actor, status, who, when
      - {layer: Facility, function: all, actor: Facility, status: confirmed, who: "DC ops", when: 2026-01-15}
      - {layer: Compute, function: RMA, actor: OEM, status: proposed, who: "SA team"}
      answers:                                 # the register items answered, by id (01 is filled by the sizing)
        "04": {status: proposed, owner: supplier, answer: "3-year term, monthly billing per GPU-hour"}
      substitution:                            # register item 03, as rules the supply check evaluates
        accelerators: [h200-sxm]
        max_time_increase: 0.10
    operations:
      restore_time: 5d                         # a failed part back in service (RMA or depot swap)
      service_level: 0.99                      # chance the spares pool covers a restore window

Layer, function and actor names are checked against catalog/data/software_stacks.yaml where the
sizing builds the boundary (engagement/boundary.py), so the error names the allowed values.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field, model_validator

from ..quantity import quantity
from ..units import Seconds
from . import limits as L
from .common import Strict
from .limits import limited

CellStatus = Literal["TO DEFINE", "proposed", "confirmed"]
RegisterStatus = Literal["OPEN", "proposed", "confirmed"]


class BoundaryCellIntake(Strict):
    layer: str = Field(description="a layer of the boundary, or 'all'")
    function: str = Field(default="all", description="Operate | Spares | RMA | Incidents | Data lifecycle | all")
    actor: str | None = Field(default=None, description="Client | Proposed operator | Facility | OEM")
    status: CellStatus = "proposed"
    who: str | None = Field(default=None, description="who proposed or confirmed it")
    when: dt.date | None = None

    @model_validator(mode="after")
    def _complete(self) -> BoundaryCellIntake:
        if self.status != "TO DEFINE" and self.actor is None:
            raise ValueError(f"a {self.status} cell names its actor")
        if self.status == "confirmed" and (self.who is None or self.when is None):
            raise ValueError("a confirmed cell says who confirmed it and when")
        return self


class RegisterAnswer(Strict):
    status: RegisterStatus = "proposed"
    owner: str | None = None
    answer: str | None = None

    @model_validator(mode="after")
    def _answered(self) -> RegisterAnswer:
        if self.status != "OPEN" and not self.answer:
            raise ValueError(f"a {self.status} register item needs its answer")
        return self


class SubstitutionRules(Strict):
    """Register item 03 as rules: which changes of accelerator, topology or vendor stay acceptable."""

    accelerators: list[str] = Field(default_factory=list, description="catalog ids acceptable besides the sized one")
    vendors: list[str] = Field(default_factory=list, description="accelerator vendors acceptable (any of their parts)")
    max_time_increase: float | None = quantity("fraction", "0.1 = 10% longer", default=None, ge=0)
    max_power_increase: float | None = quantity("fraction", "of IT power", default=None, ge=0)
    fabric_technologies: list[str] = Field(default_factory=list, description="e.g. infiniband, roce, ethernet")
    max_oversubscription: float | None = quantity("1", "leaf down:up ratio at most", default=None, ge=1)
    min_scale_up_domain_gpus: int | None = quantity("count", "GPUs per scale-up domain at least", default=None, ge=1)
    owner: str | None = None


class BoundaryIntake(Strict):
    access_model: str | None = Field(default=None, description="bare_metal | scheduler | kubernetes | managed_api")
    cells: list[BoundaryCellIntake] = Field(default_factory=list)
    answers: dict[Literal["01", "02", "03", "04", "05"], RegisterAnswer] = Field(
        default_factory=dict, description="answers to the register items, by id (01 is filled by the sizing)")
    substitution: SubstitutionRules | None = None


class OperationsIntake(Strict):
    restore_time: Seconds | None = limited(None, gt=0, le=L.MAX_DURATION, why=L.DURATION,
                                            description="a failed part back in service")
    service_level: float | None = Field(default=None, gt=0, lt=1, description="P(spares cover a restore window)")
    triage_time: Seconds | None = limited(None, gt=0, le=L.MAX_DURATION, why=L.DURATION,
                                           description="on-call time per incident")


__all__ = ["BoundaryCellIntake", "BoundaryIntake", "CellStatus", "OperationsIntake", "RegisterAnswer",
           "RegisterStatus", "SubstitutionRules"]
