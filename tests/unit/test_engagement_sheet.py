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

HOST = "Intel(R) Xeon(R) Platinum 8480C"   # as /proc/cpuinfo names the DGX H100's CPU


def measured(value: object, unit: str, kind: str, machine: str, tool: str = "wkc profile 0.1.0") -> dict:  # type: ignore[type-arg]
    return {"measured": {"value": value, "unit": unit, "machine": {"kind": kind, "id": machine},
                         "date": "2026-01-10", "tool": tool, "repeats": 5, "spread": 4.0}}


def on_host(data: dict) -> dict:  # type: ignore[type-arg]
    """The intake with the nodes' host CPU named as the OS reports it."""
    data["compute"]["host_cpu"] = HOST
    return data


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


def test_a_measurement_from_another_cpu_is_refused_with_both_machines_named() -> None:
    laptop = measured("900/s", "items/s", "cpu", "Apple M2 Pro")
    with pytest.raises(InputError) as exc:
        compile_workload(on_host(image_with(pipeline__decode_rate_per_core=laptop)))
    text = str(exc.value)
    assert "sheet.fields.pipeline.decode_rate_per_core.measured.machine" in text
    assert "Apple M2 Pro" in text and HOST in text and "never applied to another" in text


def test_a_cpu_measurement_against_the_catalogs_cpu_words_says_how_to_name_the_host() -> None:
    with pytest.raises(InputError) as exc:
        compile_workload(image_with(pipeline__decode_rate_per_core=measured(260, "items/s", "cpu", HOST)))
    assert "2x Xeon Platinum 8480C" in str(exc.value) and "compute.host_cpu" in str(exc.value)


def test_a_value_for_another_machine_kind_is_refused_before_the_compile() -> None:
    # the sheet's first machine form ({system: ...}) is read as {kind: node, id: ...}
    node = {"measured": {"value": "262.5/s", "unit": "images/s", "machine": {"system": "dgx-h100"},
                         "date": "2026-01-10", "tool": "wkc profile"}}
    with pytest.raises(InputError) as exc:
        compile_workload(image_with(pipeline__decode_rate_per_core=node))
    text = str(exc.value)
    assert "sheet.fields.pipeline.decode_rate_per_core.measured.machine.kind" in text
    assert "'node'" in text and "cpu: pipeline.decode_rate_per_core is a property of the host CPU model" in text


def test_a_value_in_another_unit_is_refused() -> None:
    with pytest.raises(InputError, match=r"measured\.unit.*items/s \(the unit of pipeline\.decode_rate_per_core\)"):
        compile_workload(on_host(image_with(pipeline__decode_rate_per_core=measured(2e8, "B/s", "cpu", HOST))))


def test_a_gpu_rate_measured_on_another_accelerator_is_refused() -> None:
    a100 = measured(2500, "items/s", "accelerator", "a100-sxm-80gb", tool="bench")
    data = image_with(pipeline__gpu_samples_per_s=a100)
    with pytest.raises(InputError, match="accelerator this intake sizes: h100-sxm"):
        compile_workload(data)


def test_a_measurement_from_the_sized_machine_closes_the_field_and_names_the_binding_stage() -> None:
    data = on_host(image_with(pipeline__decode_rate_per_core=measured(262.5, "items/s", "cpu", HOST.upper())))
    data["pipeline"]["cpu_cores_per_gpu"] = 8
    spec = compile_workload(data)
    row = rows(spec)["decode rate per core"]
    assert row.status == "measured" and row.machine == f"cpu {HOST.upper()}" and row.tool == "wkc profile 0.1.0"
    assert row.value == pytest.approx(262.5) and "median of 5 repeats" in (row.why or "")
    assert rows(spec)["host CPU"].value == HOST and rows(spec)["host CPU"].status == "known"
    prov = spec.provenance
    assert prov["sheet.pipeline.decode_rate_per_core"].source == Source.MEASURED
    assert prov["compute.decode_rate_per_core"].source == Source.MEASURED
    rate = prov["pipeline.pipeline_samples_per_s"]
    assert rate.source == Source.MEASURED and HOST.upper() in (rate.machine or "") and rate.formula
    p = spec.pipeline
    assert p is not None and p.binding_stage == "cpu_decode" and p.input_bound
    assert "feeds 16,800 samples/s" in p.verdict and "input-bound" in p.verdict
    assert spec.measured is not None
    (entry,) = spec.measured.entries
    assert entry.status == "applied" and entry.origin == "sheet.fields.pipeline.decode_rate_per_core.measured"
    assert entry.machine_kind == "cpu" and entry.machine_id == " ".join(HOST.casefold().split())


def test_another_host_cpu_than_the_catalogs_leaves_the_cores_per_gpu_open() -> None:
    data = image_with()
    data["compute"]["host_cpu"] = "AMD EPYC 9654 96-Core Processor"
    by = rows(compile_workload(data))
    assert "host cores per GPU" not in by         # the catalog's 112 cores are the Xeon's, not this host's


def test_one_machine_rule_same_kind_and_the_same_id_case_folded() -> None:
    cat = load_catalog()
    from workload_compiler.measure.machine_match import canonical_id
    assert canonical_id("cpu", "Intel(R)  Xeon(R) Platinum 8480C", cat, "x") == canonical_id(
        "cpu", "intel(r) xeon(r) platinum 8480c", cat, "x")
    # no shared-words match: the catalog's words are not the OS's model name
    assert canonical_id("cpu", "Xeon Platinum 8480C", cat, "x") != canonical_id("cpu", HOST, cat, "x")
    assert canonical_id("accelerator", "H100-SXM", cat, "x") == "h100-sxm"
    with pytest.raises(InputError, match=r"x\.machine\.id"):
        canonical_id("node", "my-laptop", cat, "x")
    assert Machine.model_validate({"accelerator": "h100-sxm", "hostname": "n1"}) == Machine(
        kind="accelerator", id="h100-sxm", name="hostname n1")
    with pytest.raises(ValueError, match="measured on one machine"):
        Machine.model_validate({"system": "dgx-h100", "cpu": HOST})


def test_a_sheet_field_reads_a_value_of_the_measured_block_by_its_key() -> None:
    data = on_host(image_with(pipeline__decode_rate_per_core={"measured": "host.parse_records_per_s_per_core.image"}))
    data["pipeline"]["cpu_cores_per_gpu"] = 8
    with pytest.raises(InputError, match=r"the key of an entry of measured\.values"):
        compile_workload(data)
    data["measured"] = {"values": {"host.parse_records_per_s_per_core.image": measured(
        300, "items/s", "cpu", HOST)["measured"]}}
    spec = compile_workload(data)
    row = rows(spec)["decode rate per core"]
    assert row.status == "measured"
    assert "from measured.values.host.parse_records_per_s_per_core.image" in (row.why or "")
    assert spec.measured is not None
    (entry,) = spec.measured.entries
    assert entry.status == "applied"
    assert entry.note == "applied through sheet.fields.pipeline.decode_rate_per_core.measured"


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
    entry = {"value": "420s", "unit": "s", "machine": {"system": "dgx-h100"}, "tool": "restart drill",
             "date": "2026-01-10"}
    data["sheet"] = {"fields": {"reliability.restart_time": {"measured": entry}}}
    spec = compile_workload(data)
    assert (spec.reliability or {})["restart_s"] == 420
    assert rows(spec)["restart time"].status == "measured"
    assert spec.provenance["reliability.restart_s"].source == Source.MEASURED
    assert spec.provenance["reliability.goodput"].source == Source.MEASURED
    assert "node dgx-h100 - restart drill, 2026-01-10" in (spec.provenance["reliability.goodput"].machine or "")
    entry["machine"] = {"kind": "node", "id": "dgx-a100"}
    with pytest.raises(InputError, match="node this intake sizes: dgx-h100"):
        compile_workload(data)


def test_a_variant_on_another_machine_leaves_the_baselines_measurements_behind() -> None:
    from workload_compiler.engagement.measurement import leave_other_machines
    node = {"value": 420, "unit": "s", "machine": {"kind": "node", "id": "DGX-H100"}, "date": "2026-01-10",
            "tool": "drill"}
    acc = {"value": 3e12, "unit": "B/s", "machine": {"kind": "accelerator", "id": "h100-sxm"}, "date": "2026-01-10",
           "tool": "wkc calibrate"}
    data = {"kind": "training", "reliability": {"restart_time": 420},
            "measured": {"values": {"accelerator.hbm_bandwidth_bytes_per_s": acc}},
            "sheet": {"fields": {"reliability.restart_time": {"measured": node}}}}
    same, none = leave_other_machines(data, {"compute.gpus": 512}, "h100-sxm", "dgx-h100")
    assert none == [] and same is data
    # from an A100 baseline onto the machine they were measured on: kept (DGX-H100 is dgx-h100, case-folded)
    kept, none = leave_other_machines(data, {"compute.accelerator": "h100-sxm", "compute.system": "dgx-h100"},
                                      "a100-sxm-80gb", "dgx-a100")
    assert none == [] and kept["sheet"]["fields"]["reliability.restart_time"]["measured"] == node
    out, dropped = leave_other_machines(data, {"compute.accelerator": "h200-sxm", "compute.system": "dgx-h200"},
                                        "h100-sxm", "dgx-h100")
    assert dropped == ["accelerator.hbm_bandwidth_bytes_per_s (accelerator h100-sxm)",
                       "sheet.fields.reliability.restart_time (node DGX-H100)"]
    assert out["measured"]["values"] == {} and "restart_time" not in out["reliability"]
    assert out["sheet"]["fields"]["reliability.restart_time"]["status"] == "to_measure"
    assert data["reliability"]["restart_time"] == 420        # the baseline's intake is not changed


def test_an_alternative_on_another_accelerator_compiles_without_the_baselines_measurement() -> None:
    from engagement_builders import EXAMPLES
    data = intake(EXAMPLES / "gpt3-175b-a100.yaml")
    data["sheet"] = {"fields": {"reliability.restart_time": {"measured": {
        "value": 420, "unit": "s", "machine": {"kind": "node", "id": "dgx-a100"}, "date": "2026-01-10",
        "tool": "drill"}}}}
    spec = compile_workload(data)
    other = [a for a in spec.alternatives if a.pins.get("compute.accelerator")]
    assert other and all(a.feasible for a in other)
    assert all(any("sheet.fields.reliability.restart_time (node dgx-a100)" in n for n in a.notes) for a in other)
