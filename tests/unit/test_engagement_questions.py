"""Next questions and the learning path (starter article): open fields first, then the largest
sensitivities, then the boundary's open decisions; the path follows which kind is open."""

from __future__ import annotations

from engagement_builders import CHAT, H100_4096, IMAGE, compiled

from workload_compiler.reliability import goodput


def test_to_measure_fields_come_first_with_the_threshold_they_must_reach() -> None:
    q = compiled(IMAGE).next_questions
    assert q is not None
    first = q.questions[0]
    assert first.status == "to_measure" and first.key == "pipeline.decode_rate_per_core"
    gpu = next(s for s in compiled(IMAGE).pipeline.stages if s.name == "gpu_compute")  # type: ignore[union-attr]
    per_core = (gpu.samples_per_s_per_gpu or 0) / 14
    assert f"{per_core:,.0f} samples/s per core" in first.effect
    assert q.learning_path[0].path == "foundations"
    assert "Program 02" in q.programs


def test_the_checkpoint_interval_question_states_the_goodput_it_moves() -> None:
    spec = compiled(H100_4096)
    q = spec.next_questions
    assert q is not None
    ckpt = next(x for x in q.questions if x.key == "reliability.checkpoint_interval")
    rel = spec.reliability or {}
    base = rel["goodput"]
    half = goodput(interval_s=rel["checkpoint_interval_s"] / 2, stall_s=rel["checkpoint_stall_s"],
                   restart_s=rel["restart_s"], mtbf_s=rel["job_mtbf_s"])[0]
    double = goodput(interval_s=rel["checkpoint_interval_s"] * 2, stall_s=rel["checkpoint_stall_s"],
                     restart_s=rel["restart_s"], mtbf_s=rel["job_mtbf_s"])[0]
    assert ckpt.effect_size is not None
    assert abs(ckpt.effect_size - max(abs(half - base), abs(double - base)) / base) < 1e-9
    assert ckpt.question == "What is your checkpoint interval?" and "goodput" in ckpt.effect
    ranked = [x.effect_size for x in q.questions if x.status == "assumed"]
    assert ranked == sorted(ranked, reverse=True)   # largest sensitivity first


def test_a_service_is_pointed_at_serving_measurements() -> None:
    q = compiled(CHAT).next_questions
    assert q is not None and "serving" in [s.path for s in q.learning_path]
