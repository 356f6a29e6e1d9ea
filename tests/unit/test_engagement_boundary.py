"""The operating boundary and the boundary register (seed 000): layers x functions x actors, each
cell TO DEFINE until the intake proposes or confirms it; the five register items, item 01 filled
from the sizing; "No capacity is implied by this register"."""

from __future__ import annotations

import re

import pytest
from engagement_builders import CHAT, H100_4096, compiled, intake

from workload_compiler import compile_workload
from workload_compiler.engagement.boundary import operating_boundary
from workload_compiler.errors import InputError
from workload_compiler.intake.boundary import BoundaryIntake


def test_every_cell_starts_to_define_with_the_seed_layers_functions_and_actors() -> None:
    b = operating_boundary("kubernetes", BoundaryIntake())
    assert {"Facility", "Firmware", "Fabric", "Storage", "Monitoring"} <= set(b.layers)
    assert b.functions == ["Operate", "Spares", "RMA", "Incidents", "Data lifecycle"]
    assert b.actors == ["Client", "Proposed operator", "Facility", "OEM"]
    assert len(b.cells) == len(b.layers) * len(b.functions)
    assert {c.status for c in b.cells} == {"TO DEFINE"} and all(c.actor is None for c in b.cells)
    # the access model only suggests, for the software layers' day-to-day operation
    assert b.cell("OS and drivers", "Operate").suggestion == "Proposed operator (the Kubernetes access model)"
    assert b.cell("Facility", "Operate").suggestion is None
    assert "not available service tiers" in b.note


def test_intake_cells_are_applied_with_who_and_when() -> None:
    spec = compiled(H100_4096)
    b = spec.operating_boundary
    assert b is not None and b.access_model == "scheduler"
    fac = [b.cell("Facility", f) for f in b.functions]
    assert all(c.status == "confirmed" and c.actor == "Facility" and c.when == "2026-01-15" for c in fac)
    rma = b.cell("Compute", "RMA")
    assert (rma.actor, rma.status, rma.who) == ("OEM", "proposed", "SA team")
    assert b.status_counts["confirmed"] == 5 and b.status_counts["proposed"] == 4


def test_bad_cells_name_the_field_and_what_is_allowed() -> None:
    data = intake(H100_4096)
    data["boundary"]["cells"].append({"layer": "Cooling tower", "actor": "OEM"})
    with pytest.raises(InputError, match=r"boundary.cells\[5\].layer.*Facility"):
        compile_workload(data)
    data = intake(H100_4096)
    data["boundary"]["cells"] = [{"layer": "Storage", "actor": "Client", "status": "confirmed"}]
    with pytest.raises(ValueError, match="who confirmed it and when"):
        compile_workload(data)
    data = intake(H100_4096)
    data["software"] = {"access_model": "kubernetes"}
    with pytest.raises(InputError, match=r"boundary\.access_model"):
        compile_workload(data)


def test_register_item_01_is_filled_from_the_sizing() -> None:
    spec = compiled(H100_4096)
    reg = spec.boundary_register
    assert reg is not None and [i.id for i in reg.items] == ["01", "02", "03", "04", "05"]
    assert reg.note.startswith("No capacity is implied by this register.")
    scope = {e.resource: e for e in reg.items[0].scope}
    fabric = spec.fabric or {}
    leaves = fabric["scale_out"]["leaf_switches"]
    assert scope["compute-fabric leaf switches"].quantity == leaves and scope["compute-fabric leaf switches"].exclusive
    domains = scope["NVLink domains of 8 GPUs"]
    assert domains.quantity == 4096 / 8 and domains.exclusive and "TP" in domains.why
    assert scope["GPUs (dgx-h100)"].quantity == 4096
    item = reg.items[0]
    assert item.status == "proposed" and item.owner == "Sizing input"
    assert f"{leaves:,} compute-fabric leaf switches" in (item.answer or "")
    assert "fabric.scale_out" in item.depends_on


def test_register_02_reads_the_storage_headroom_and_03_holds_the_rules() -> None:
    spec = compiled(H100_4096)
    reg = spec.boundary_register
    assert reg is not None
    shared = {e.resource.split(" (")[0]: e for e in reg.items[1].scope}
    storage = spec.storage or {}
    head = shared["storage read headroom"]
    assert head.quantity == pytest.approx(storage["tier_read_bytes_per_s"] - storage["read_bytes_per_s"])
    assert not head.exclusive and reg.items[1].status == "OPEN"
    rules = reg.items[2].rules
    assert rules is not None and rules.accelerators == ["h200-sxm"] and rules.max_time_increase == 0.10
    assert reg.items[2].status == "proposed" and "h200-sxm" in (reg.items[2].answer or "")
    assert reg.items[4].status == "proposed" and "certificate" in (reg.items[4].answer or "")
    assert "RMAs a year" in (reg.items[4].sizing_view or "")


def test_an_infeasible_compile_registers_nothing_sized_rather_than_an_empty_scope() -> None:
    # Llama 3 70B's model state alone (16 bytes per parameter, 1.13 TB) overflows 8 x 80 GB H100
    spec = compile_workload({"kind": "training", "model": {"preset": "llama3-70b"},
                             "training": {"tokens": "1T", "seq_len": 8192, "global_batch_size": 1024},
                             "compute": {"accelerator": "h100-sxm", "gpus": 8}})
    reg = spec.boundary_register
    assert not spec.feasible and reg is not None
    texts = [reg.items[0].answer or "", reg.items[2].sizing_view or "", reg.items[3].sizing_view or ""]
    assert all(t.startswith("nothing sized") for t in texts), texts
    assert not any("None" in t or "Exclusive: ." in t or "nan" in t for t in texts)   # item 04 said "nan GPU-hours"


def test_an_inference_service_gets_the_boundary_of_its_access_model() -> None:
    spec = compiled(CHAT)
    assert spec.operating_boundary is not None and spec.operating_boundary.access_model == "kubernetes"
    assert spec.boundary_register is not None and spec.boundary_register.items[2].status == "OPEN"


def test_software_boundary_keeps_the_first_results_shape_filled_from_the_sections() -> None:
    """`software.boundary` was a result key before the sections moved to the top level: kept, compact."""
    spec = compiled(H100_4096)
    assert spec.software is not None
    b = spec.software["boundary"]
    rows = {r["layer"]: r for r in b["rows"]}
    assert rows["Facility"] == {"layer": "Facility", "kind": "system layer", "operator": "Facility",
                                "candidates": ["Client", "Proposed operator", "Facility", "OEM"],
                                "status": "confirmed", "suggestion": None}
    assert rows["Compute"]["status"] == "TO DEFINE"              # its Operate cell is not set
    assert {"Spares", "RMA", "Incidents", "Data lifecycle"} <= {r["layer"] for r in b["rows"]
                                                                if r["kind"] == "operational function"}
    assert rows["RMA"]["status"] == "TO DEFINE" and rows["RMA"]["operator"] is None   # not every layer agreed
    assert [(e["id"], e["title"], e["decided_by"]) for e in b["entries"]] == [
        ("01", "Resource scope", "Sizing input"), ("02", "Shared layers", "Operating model"),
        ("03", "Substitution rule", "Client decision"), ("04", "Commercial envelope", "Supplier confirmation"),
        ("05", "Lifecycle & exit", "Contract confirmation")]
    assert "4,096 GPUs" in b["entries"][0]["sizing_input"] and "No capacity is implied" in b["note"]
    assert b["access_model"] == spec.operating_boundary.access_model   # type: ignore[union-attr]


def test_the_reports_show_the_boundary_once() -> None:
    from workload_compiler.report.markdown import render_markdown
    md = render_markdown(compiled(H100_4096))
    assert "## Operating boundary" in md and "| boundary." not in md


def test_a_count_of_one_reads_in_the_singular() -> None:
    """A serving fleet of a few GPUs needs one compute-fabric leaf: '1 compute-fabric leaf switch', not
    '1 ... switches' (the resource's name, which scripts look entries up by, stays plural), while its
    GPUs, more than one, stay plural."""
    from engagement_builders import EXAMPLES

    reg = compile_workload(EXAMPLES / "nemotron-nano-reasoning.yaml").boundary_register
    assert reg is not None
    answer = reg.items[0].answer or ""
    gpus = re.search(r"(\d+) GPUs \(dgx-h100\)", answer)
    assert "; 1 compute-fabric leaf switch;" in answer and gpus is not None and int(gpus.group(1)) > 1
    assert "compute-fabric leaf switches" in {e.resource for e in reg.items[0].scope}


def test_one_served_gpu_reads_in_the_singular_in_the_register_and_the_mig_verdict() -> None:
    """The MIG example at a quarter of its load and without N+1 needs one H100: '1 GPU held', '1 GPU
    partitioned', '1 slice' (they read '1 GPUs', '1 slices')."""
    import yaml
    from engagement_builders import EXAMPLES

    w = yaml.safe_load((EXAMPLES / "llama3.1-8b-mig.yaml").read_text(encoding="utf-8"))
    w["serving"].pop("availability")
    w["serving"]["request_rate"] = "0.5/s"
    spec = compile_workload(w)
    assert spec.boundary_register is not None and spec.mig is not None
    assert (spec.boundary_register.items[3].sizing_view or "").startswith("1 GPU held for the service's term")
    assert "needs 1 GPU partitioned" in spec.mig.verdict and "1 slice = " in spec.mig.verdict
