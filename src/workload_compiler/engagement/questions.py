"""Next questions for the customer, from the sheet's open fields and the largest sensitivities, and
the starter article's learning path chosen by which kind of question is open.

Order: fields still to measure first (nothing can replace them), then assumptions by how far a
plausible change moves the result (goodput for checkpoint interval, failure rate, restart time and
write bandwidth, computed with reliability.goodput at half and twice the sized value; time to
result for the generic pipeline's rates; the spares pool for the restore time), then the
boundary's open decisions.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ..catalog.loader import package_yaml
from ..reliability import goodput
from ..spine.doc import Doc
from .operations import OperationsLoad, poisson_spares
from .register import BoundaryRegister
from .sheet import WorkloadSheet
from .view import get_path, number

MIN_EFFECT = 1e-3   # a lever that moves the result by less than 0.1% is not worth the customer's time
Topic = Literal["foundations", "networking_placement", "serving", "operations"]
_TOPICS: tuple[tuple[str, Topic], ...] = (
    ("serving.", "serving"), ("inference.", "serving"), ("fabric.", "networking_placement"),
    ("compute.parallelism", "networking_placement"), ("compute.gpus", "networking_placement"),
    ("compute.accelerator", "networking_placement"), ("compute.system", "networking_placement"),
    ("software.", "networking_placement"), ("operations.", "operations"), ("boundary.", "operations"),
    ("reliability.failure_rate", "operations"), ("reliability.restart", "operations"),
)


class Question(Doc):
    question: str
    key: str | None = Field(default=None, description="the intake key the answer sets")
    status: str = Field(description="to_measure | assumed | open decision")
    topic: Topic
    effect: str = Field(description="what the answer moves, in words and numbers")
    effect_size: float | None = Field(default=None, description="relative change of the result it moves (0.05 = 5%)")


class LearningStep(Doc):
    path: str
    title: str
    why: str
    questions: int


class NextQuestions(Doc):
    questions: list[Question]
    learning_path: list[LearningStep]
    programs: str
    source: str


def topic_of(key: str | None) -> Topic:
    for prefix, topic in _TOPICS:
        if key and key.startswith(prefix):
            return topic
    return "foundations"


def _goodput_swing(doc: dict[str, Any], lever: str) -> tuple[float, float, float] | None:
    """(goodput at the sized value, at half, at twice) of one reliability lever."""
    t, c = number(doc, "reliability.checkpoint_interval_s"), number(doc, "reliability.checkpoint_stall_s")
    r, m = number(doc, "reliability.restart_s"), number(doc, "reliability.job_mtbf_s")
    if None in (t, c, r, m):
        return None
    assert t is not None and c is not None and r is not None and m is not None
    base = number(doc, "reliability.goodput") or goodput(interval_s=t, stall_s=c, restart_s=r, mtbf_s=m)[0]

    def at(scale: float) -> float:
        args = {"interval_s": t, "stall_s": c, "restart_s": r, "mtbf_s": m}
        name = {"interval": "interval_s", "stall": "stall_s", "restart": "restart_s", "failures": "mtbf_s"}[lever]
        args[name] = args[name] * (1 / scale if lever == "failures" else scale)
        return goodput(**args)[0]

    return base, at(0.5), at(2.0)


def _reliability_questions(doc: dict[str, Any], given: set[str]) -> list[Question]:
    out: list[Question] = []
    levers = (("reliability.checkpoint_interval", "interval", "What is your checkpoint interval?",
               "storage.checkpoint_interval_s"),
              ("reliability.failure_rate", "failures", "What failure rate do you see per GPU-day on this hardware?",
               None),
              ("reliability.restart_time", "restart", "How long from a failure to training again (restart time)?",
               "reliability.restart_s"),
              ("storage.write_bandwidth", "stall", "What write bandwidth does your storage give a checkpoint?",
               "storage.checkpoint_write_bytes_per_s"))
    for key, lever, text, _path in levers:
        if key in given or (lever == "failures" and {"reliability.failures_per_gpu_day",
                                                        "reliability.failures_per_node_day"} & given):
            continue
        swing = _goodput_swing(doc, lever)
        if swing is None:
            continue
        base, half, double = swing
        size = max(abs(half - base), abs(double - base)) / base
        if size < MIN_EFFECT:
            continue
        word = {"interval": "the interval", "failures": "the failure rate", "restart": "the restart time",
                "stall": "the checkpoint stall"}[lever]
        out.append(Question(
            question=text, key=key, status="assumed", topic=topic_of(key), effect_size=size,
            effect=(f"it moves goodput by up to {100 * size:.2g}%: {100 * base:.2f}% as sized, {100 * half:.2f}% at "
                    f"half {word}, {100 * double:.2f}% at twice")))
    return out


def _generic_questions(doc: dict[str, Any], assumed: set[str]) -> list[Question]:
    out: list[Question] = []
    if {"compute.gpu_efficiency", "pipeline.gpu_efficiency"} & assumed:
        bound = get_path(doc, "pipeline.binding_stage")
        effect = ("the pipeline is compute-bound at an assumed efficiency: the time to result scales with it one "
                  "for one" if bound == "gpu_compute" else
                  "it sets what the GPUs consume, so the read, decode and copy rates the input must reach")
        out.append(Question(
            question="What samples/s does one GPU reach on this model (or what share of the peak)?",
            key="pipeline.gpu_samples_per_s", status="assumed", topic="foundations",
            effect_size=1.0 if bound == "gpu_compute" else None, effect=effect))
    return out


def _operations_questions(ops: OperationsLoad | None, assumed: set[str]) -> list[Question]:
    out: list[Question] = []
    if ops is None:
        return out
    if "operations.restore_time_s" in assumed:
        gpu = next((p for p in ops.parts if p.part == "GPU"), None)
        if gpu is not None and gpu.spares is not None:
            double = poisson_spares(gpu.rate_per_gpu_day * ops.fleet_gpus * 2 * ops.restore_time_s / 86400,
                                    ops.service_level)
            size = (double - gpu.spares) / ops.fleet_gpus   # spares as a share of the fleet
            out.append(Question(
                question="How long does your OEM take to put a replacement part in service (RMA turnaround)?",
                key="operations.restore_time", status="assumed", topic="operations", effect_size=size,
                effect=f"GPU spares: {gpu.spares} at {ops.restore_time_s / 86400:.1f} days, {double} at twice that"))
    if ops.on_call_time_per_week_s is None:
        out.append(Question(
            question="How long does the on-call engineer spend per incident (triage time)?",
            key="operations.triage_time", status="open decision", topic="operations",
            effect=f"{ops.incidents_per_week:,.2g} incidents a week become on-call hours"))
    return out


def _boundary_questions(register: BoundaryRegister | None, undefined: int) -> list[Question]:
    out: list[Question] = []
    if undefined:
        out.append(Question(
            question="Who holds spares, RMAs and incidents for each layer (client, proposed operator, facility, OEM)?",
            key="boundary.cells", status="open decision", topic="operations",
            effect=f"{undefined} spares/RMA/incident responsibilities are TO DEFINE"))
    for item in register.items if register else []:
        if item.status == "OPEN" and item.id in ("03", "04"):
            key = "boundary.substitution" if item.id == "03" else "boundary.answers"
            out.append(Question(question=item.question, key=key,
                                status="open decision", topic="operations",
                                effect=f"register item {item.id} ({item.title}) is open; {item.decided_by}"))
    return out


def _open_questions(sheet: WorkloadSheet, doc: dict[str, Any]) -> list[Question]:
    out: list[Question] = []
    stages = {s["name"]: s for s in get_path(doc, "pipeline.stages") or []}
    gpu_rate = number(doc, "compute.gpu_samples_per_s_per_gpu")
    cores = number(doc, "compute.cpu_cores_per_gpu")
    for row in sheet.rows:
        if row.status != "to_measure":
            continue
        effect = f"still to measure on {row.measure_on}" if row.measure_on else "still to measure"
        if row.key == "pipeline.decode_rate_per_core" and gpu_rate and cores:
            effect = (f"the binding stage stays open until it is measured: the loader keeps the GPUs busy at "
                      f"{gpu_rate / cores:,.0f} samples/s per core or more ({row.measure_on})")
        elif row.key and stages and any(s.get("open_reason") and row.key in str(s.get("open_reason"))
                                        for s in stages.values()):
            effect = f"a stage of the data path stays open until it is measured ({row.measure_on})"
        out.append(Question(question=f"What is your {row.item}?", key=row.key, status="to_measure",
                            topic=topic_of(row.key), effect=effect))
    return out


def next_questions(doc: dict[str, Any], sheet: WorkloadSheet, register: BoundaryRegister | None,
                   ops: OperationsLoad | None, given: set[str], assumed: set[str]) -> NextQuestions:
    """`given`: the intake keys the user set; `assumed`: the paths the sizing filled by a rule."""
    ranked = sorted(_reliability_questions(doc, given) + _generic_questions(doc, assumed)
                    + _operations_questions(ops, assumed), key=lambda q: -(q.effect_size or 0.0))
    questions = _open_questions(sheet, doc) + ranked + _boundary_questions(
        register, ops.undefined_responsibilities if ops else 0)
    data = package_yaml("engagement.yaml")["learning_paths"]
    counts: dict[str, int] = {}
    for q in questions:
        if q.status in ("to_measure", "assumed"):
            counts[q.topic] = counts.get(q.topic, 0) + 1
    if doc.get("kind") == "inference":
        counts.setdefault("serving", 0)
    steps = [LearningStep(path=str(p["id"]), title=str(p["title"]), questions=counts[p["id"]],
                          why=f"{counts[p['id']]} open or assumed question(s) of this kind; begin here when "
                              f"{p['when']}")
             for p in data["paths"] if p["id"] in counts]
    steps.sort(key=lambda s: -s.questions)
    return NextQuestions(questions=questions, learning_path=steps, programs=str(data["programs"]),
                         source=str(data["source"]))


__all__ = ["LearningStep", "NextQuestions", "Question", "next_questions", "topic_of"]
