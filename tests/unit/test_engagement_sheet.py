"""The workload sheet (starter article): known, to-measure, assumed, measured and derived numbers;
a measurement from another kind of machine is refused with the reason, never used."""

from __future__ import annotations

import pytest
from engagement_builders import IMAGE, compiled, image_with, intake

from workload_compiler import compile_workload
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.intake.sheet import Machine
from workload_compiler.provenance import Source

DECODE_ON_DGX = {"measured": {"value": "262.5/s", "unit": "images/s", "machine": {"system": "dgx-h100"},
                              "date": "2026-01-10", "tool": "wkc profile"}}


def rows(spec):  # type: ignore[no-untyped-def]
    return {r.item: r for r in spec.sheet.rows}


def test_the_example_sheet_shows_known_and_to_measure_fields_in_the_articles_sections() -> None:
    sheet = compiled(IMAGE).sheet
    assert sheet is not None
    by = {r.item: r for r in sheet.rows}
    assert by["samples per epoch"].status == "known" and by["samples per epoch"].value == 1281167
    assert by["decode rate per core"].status == "to_measure" and by["decode rate per core"].value is None
    assert "host CPU of dgx-h100" in (by["decode rate per core"].measure_on or "")
    assert by["GPU efficiency"].status == "assumed" and "planning figure" in (by["GPU efficiency"].why or "")
    assert by["host cores per GPU"].status == "assumed"          # the rule: all 112 cores / 8 GPUs
    assert by["FLOPs per sample"].status == "derived"
    assert by["source"].value.startswith("JPEG files") and by["source"].section == "input"
    assert {r.section for r in sheet.rows} == {"input", "preparation", "computation", "outputs", "dependencies"}
    assert sheet.to_measure == 2 and sheet.known >= 8 and "unrelated machine" in sheet.rule


def test_a_measurement_from_another_kind_of_machine_is_refused_with_the_reason() -> None:
    laptop = {"measured": {"value": "900/s", "machine": {"cpu": "Apple M2 Pro", "hostname": "laptop"}}}
    with pytest.raises(InputError) as exc:
        compile_workload(image_with(pipeline__decode_rate_per_core=laptop))
    text = str(exc.value)
    assert "sheet.fields.pipeline.decode_rate_per_core.measured.machine" in text
    assert "Apple M2 Pro" in text and "host CPU of dgx-h100" in text and "never used" in text


def test_a_gpu_rate_measured_on_another_accelerator_is_refused() -> None:
    a100 = {"measured": {"value": "2500/s", "machine": {"accelerator": "a100-sxm-80gb"}}}
    data = image_with(pipeline__gpu_samples_per_s=a100)
    with pytest.raises(InputError, match="accelerator h100-sxm"):
        compile_workload(data)


def test_a_measurement_from_the_sized_machine_closes_the_field_and_names_the_binding_stage() -> None:
    data = image_with(pipeline__decode_rate_per_core=DECODE_ON_DGX)
    data["pipeline"]["cpu_cores_per_gpu"] = 8
    spec = compile_workload(data)
    row = rows(spec)["decode rate per core"]
    assert row.status == "measured" and row.machine == "dgx-h100" and row.tool == "wkc profile"
    assert row.value == pytest.approx(262.5)
    assert spec.provenance["sheet.pipeline.decode_rate_per_core"].source == Source.MEASURED
    p = spec.pipeline
    assert p is not None and p.binding_stage == "cpu_decode" and p.input_bound
    assert "feeds 16,800 samples/s" in p.verdict and "input-bound" in p.verdict


def test_the_host_cpu_model_alone_is_enough_to_match() -> None:
    cat = load_catalog()
    compute = {"accelerator": "h100-sxm", "system": "dgx-h100"}
    assert Machine(cpu="Intel Xeon Platinum 8480C").cpu
    from workload_compiler.engagement.measurement import machine_matches
    assert machine_matches("host", Machine(cpu="Xeon Platinum 8480C"), compute, cat)
    assert not machine_matches("host", Machine(cpu="AMD EPYC 7742"), compute, cat)
    assert not machine_matches("system", Machine(system="dgx-a100"), compute, cat)
    assert machine_matches("accelerator", Machine(system="dgx-h100"), compute, cat)   # the system's GPU
    assert machine_matches("data", Machine(kind="anything"), compute, cat)


def test_to_measure_with_a_value_and_known_without_one_are_input_errors() -> None:
    data = intake(IMAGE)
    data["pipeline"]["decode_rate_per_core"] = "300/s"
    with pytest.raises(InputError, match="no value for a to_measure field"):
        compile_workload(data)
    data = image_with(pipeline__cpu_cores_per_gpu={"status": "known"})
    with pytest.raises(InputError, match="a known field has its value in the intake"):
        compile_workload(data)


def test_an_unknown_sheet_key_names_the_nearest_keys() -> None:
    data = image_with(pipeline__decode_rate={"status": "to_measure"})
    with pytest.raises(InputError, match=r"pipeline\.decode_rate_per_core"):
        compile_workload(data)


def test_an_assumed_field_needs_a_why() -> None:
    with pytest.raises(ValueError, match="needs a why"):
        compile_workload(image_with(pipeline__gpu_efficiency={"status": "assumed"}))


def test_training_sheet_marks_given_and_rule_filled_numbers() -> None:
    from engagement_builders import H100_4096
    by = rows(compiled(H100_4096))
    assert by["training tokens"].status == "known" and by["training tokens"].value == 2e12
    assert by["restart time"].status == "assumed" and "MegaScale" in (by["restart time"].why or "")
    assert by["checkpoint size"].status == "derived" and by["checkpoint size"].unit == "B"


def test_a_training_measurement_is_used_on_the_same_node_type_and_refused_on_another() -> None:
    from engagement_builders import H100_4096
    data = intake(H100_4096)
    entry = {"value": "420s", "unit": "s", "machine": {"system": "dgx-h100"}, "tool": "restart drill"}
    data["sheet"] = {"fields": {"reliability.restart_time": {"measured": entry}}}
    spec = compile_workload(data)
    assert (spec.reliability or {})["restart_s"] == 420
    assert rows(spec)["restart time"].status == "measured"
    entry["machine"] = {"system": "dgx-a100"}
    with pytest.raises(InputError, match="node type dgx-h100"):
        compile_workload(data)
