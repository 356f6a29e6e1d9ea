"""Watts to weights: what fits in a hall, what binds, and what a model takes there.

For each system type, the hall fit (facility/hall_fit.py) gives the GPUs that power, rack density,
cooling and floor space allow; the training spine then compiles the model on at most that many
GPUs (the largest count with a layout) and reports the time to train, or, against a deadline, the
tokens trainable in it.
"""

from __future__ import annotations

from typing import Any

from ..catalog.loader import Catalog
from ..errors import InfeasibleError
from ..facility import Hall, fit_hall
from ..intake.common import ComputeIntake, ModelIntake
from ..intake.limits import MAX_GPUS
from ..intake.training import TargetIntake, TrainingRun, TrainingWorkload
from .result import ComputeLayer, ObjectiveLayer
from .training import compile_training

# The system types a hall is sized for by default: the reference system of each current accelerator.
DEFAULT_SYSTEMS = ("dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "dgx-b300", "gb200-nvl72", "gb300-nvl72",
                   "mi300x-oam-8")


def fit_model_in_hall(hall: Hall, catalog: Catalog, *, systems: tuple[str, ...] = DEFAULT_SYSTEMS,
                      model: ModelIntake | None = None, training: TrainingRun | None = None,
                      deadline_s: float | None = None) -> list[dict[str, Any]]:
    from ..intake.infrastructure import InfrastructureIntake
    from .infrastructure import hall_equipment
    rows: list[dict[str, Any]] = []
    entries = [catalog.system(s) for s in systems if s in catalog.systems]
    # network gear billed as the compiled facility layer bills it, so the count is one it fits
    fits = [f for s in entries for f in fit_hall(hall, [s], equipment_for=hall_equipment(
        s, catalog, InfrastructureIntake()))]
    for fit in fits:
        row: dict[str, Any] = fit.model_dump(mode="json")
        if model is not None and fit.feasible and fit.gpus > 0:
            system = catalog.system(fit.system)
            w = TrainingWorkload(kind="training", name=f"{model.preset or 'model'} on {fit.system}", model=model,
                                 training=training or TrainingRun(), target=TargetIntake(),
                                 compute=ComputeIntake(accelerator=system.accelerator, system=system.id,
                                                       max_gpus=min(fit.gpus, MAX_GPUS)))
            try:
                spec = compile_training(w, catalog, with_alternatives=False)
            except InfeasibleError as exc:   # this system's row says what binds; the other rows stand
                row.update(train_gpus=None, time_to_train_s=None, train_binding=f"{exc.binding}: {exc.detail}")
                rows.append(row)
                continue
            t = (spec.objective.goodput_adjusted_time_to_train_s or spec.objective.time_to_train_s
                 if isinstance(spec.objective, ObjectiveLayer) else None)
            if spec.feasible and isinstance(spec.compute, ComputeLayer) and isinstance(spec.objective, ObjectiveLayer) \
                    and t is not None:
                row.update(train_gpus=spec.compute.gpus, time_to_train_s=t, mfu=spec.compute.mfu,
                           layout=spec.compute.parallelism.model_dump())
                if deadline_s is not None:
                    # At fixed GPUs, time scales with FLOPs = (6N + attention) x tokens: the token
                    # budget scales exactly; the parameter count approximately (attention aside).
                    row["tokens_by_deadline"] = spec.objective.tokens * deadline_s / t
                    row["params_by_deadline_estimate"] = spec.objective.params * deadline_s / t
                    row["meets_deadline"] = bool(t <= deadline_s)
            else:
                row.update(train_gpus=None, time_to_train_s=None, train_binding=spec.binding_constraint)
        rows.append(row)
    return rows
