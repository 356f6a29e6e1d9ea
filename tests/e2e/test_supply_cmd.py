"""`wkc supply FILE --offers offers.yaml` end to end: three offers (one fits, one substitution, one
gap) ranked, per-layer results with numbers, open confirmations; JSON, Markdown and the terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from workload_compiler.cli.main import app

EXAMPLES = Path(__file__).parents[2] / "examples"
REQ = EXAMPLES / "llama3.1-405b-4096-h100.yaml"
OFFERS = EXAMPLES / "offers-llama3.1-405b.yaml"
runner = CliRunner()


def supply_json(req: Path = REQ, offers: Path = OFFERS) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = runner.invoke(app, ["supply", str(req), "--offers", str(offers), "--json"])
    return result.exit_code, json.loads(result.stdout) if result.stdout.startswith("{") else {}


def test_three_offers_are_ranked_with_their_verdicts_and_open_confirmations() -> None:
    code, doc = supply_json()
    assert code == 0
    by = {o["id"]: o for o in doc["offers"]}
    assert {k: o["verdict"] for k, o in by.items()} == {"A": "fits", "B": "substitution", "C": "gap"}
    assert [o["rank"] for o in doc["offers"]] == [1, 2, 3]
    assert doc["offers"][-1]["id"] == "C"                 # a gap ranks last
    # ranked by time from order (lead time + run): B's 6 weeks beat A's 10
    assert by["B"]["time_from_order_s"] < by["A"]["time_from_order_s"]
    assert by["B"]["time_from_order_s"] == by["B"]["lead_time_s"] + by["B"]["time_to_result_s"]
    # open confirmations: what the offer has not confirmed, of the seed's five
    items = {c["item"] for c in by["A"]["open_confirmations"]}
    assert items == {"vendor lead time", "deployment schedule", "SLA terms"}
    assert len(by["C"]["open_confirmations"]) == 5
    assert "No capacity is implied" in doc["note"]


def test_the_substitution_is_recompiled_and_judged_by_rule_03() -> None:
    _, doc = supply_json()
    b = next(o for o in doc["offers"] if o["id"] == "B")
    sub = b["substitution"]
    assert sub["accelerator"] == "h200-sxm" and sub["system"] == "dgx-h200" and sub["feasible"]
    assert sub["accepted"] is True and "rule 03" in sub["rule"]
    assert abs(sub["time_change"]) <= 0.10 and sub["time_to_result_s"] > 0 and sub["it_power_w"] > 0
    req = doc["requirement"]
    assert sub["time_change"] == sub["time_to_result_s"] / req["time_to_result_s"] - 1


def test_gaps_carry_their_numbers() -> None:
    _, doc = supply_json()
    c = next(o for o in doc["offers"] if o["id"] == "C")
    gaps = {(g["layer"], g["detail"].split(":")[0]): g for g in c["layers"] if g["status"] == "gap"}
    run_days = c["substitution"]["time_to_result_s"] / 86400
    compute = gaps[("compute", f"1,024 GPUs short; on 3,072 the run takes {run_days:,.1f} d")]
    assert compute["shortfall"] == 1024 and c["substitution"]["gpus"] == 3072
    assert c["substitution"]["time_change"] > 0        # fewer GPUs: a longer run, recompiled
    assert any(k[0] == "fabric" and "roce" in k[1] for k in gaps)
    rack = gaps[("facility", "rack power")]
    assert rack["shortfall"] > 0 and rack["unit"] == "W"
    assert ("software", "the offer provides kubernetes; the sizing requires scheduler") in gaps


def test_a_substitution_outside_rule_03_is_a_gap(tmp_path: Path) -> None:
    offers = yaml.safe_load(OFFERS.read_text())
    b = next(o for o in offers["offers"] if o["id"] == "B")
    b["system"] = "dgx-b200"
    path = tmp_path / "offers.yaml"
    path.write_text(yaml.safe_dump({"offers": [b]}))
    code, doc = supply_json(offers=path)
    assert code == 0
    o = doc["offers"][0]
    assert o["verdict"] == "gap" and o["substitution"]["accepted"] is False
    assert "b200 is not among the acceptable accelerators" in o["substitution"]["rule"]


def test_markdown_and_terminal_show_the_ranked_table() -> None:
    md = runner.invoke(app, ["supply", str(REQ), "--offers", str(OFFERS), "--md"])
    assert md.exit_code == 0 and md.stdout.startswith("# Supply check")
    header = next(line for line in md.stdout.splitlines() if line.startswith("| # |"))
    assert header.count("|") - 1 == 11 and "Open confirmations:" in md.stdout
    term = runner.invoke(app, ["supply", str(REQ), "--offers", str(OFFERS)], env={"COLUMNS": "80"})
    assert term.exit_code == 0
    assert "substitution" in term.stdout and "open: deployment schedule" in term.stdout
    assert all(len(line) <= 80 for line in term.stdout.splitlines())


def _supply_with(tmp_path: Path, offer: str) -> Any:
    """`wkc supply` of the requirement against one offer written as a YAML flow mapping."""
    path = tmp_path / "offers.yaml"
    path.write_text(f"offers:\n- {offer}\n")
    return runner.invoke(app, ["supply", str(REQ), "--offers", str(path)])


def test_bad_offers_are_input_errors(tmp_path: Path) -> None:
    result = _supply_with(tmp_path, "{id: X, count: 8}")
    assert result.exit_code == 2 and "name the offered system" in result.stderr
    result = _supply_with(tmp_path, "{id: X, count: 8, system: dgx-h999}")
    assert result.exit_code == 2 and "dgx-h100" in result.stderr


def test_offer_numbers_are_bounded_with_their_reason_and_unknown_keys_get_a_suggestion(tmp_path: Path) -> None:
    """A lead time of 1e30 days once ranked as an offer ('2739726027397260107042521088.0'), and an unknown
    key listed no keys at all."""
    result = _supply_with(tmp_path, "{id: X, count: 8, system: dgx-h100, lead_time: 1e30d}")
    assert result.exit_code == 2 and "offers[0].lead_time" in result.stderr and "100 years" in result.stderr
    result = _supply_with(tmp_path, "{id: X, count: 8, system: dgx-h100, fabric: {per_gpu_bandwidth: 1e-300B/s}}")
    assert result.exit_code == 2 and "at least 1,000,000 (1 MB/s" in result.stderr
    result = _supply_with(tmp_path, "{id: X, count: 8, system: dgx-h100, prise: 3}")
    assert result.exit_code == 2 and "did you mean 'price'" in result.stderr


def test_measured_values_stay_with_the_requirements_machine_and_are_an_open_confirmation(tmp_path: Path) -> None:
    """A measurement of the requirement's node (sheet) and accelerator (`measured`) is not applied to an
    offer of other hardware: the substitution is still recompiled, and re-measuring is left open."""
    data = yaml.safe_load(REQ.read_text())
    run = {"date": "2026-01-10", "tool": "drill"}
    sheet = data.setdefault("sheet", {})
    sheet["fields"] = {**sheet.get("fields", {}), "reliability.restart_time": {"measured": {
        "value": 420, "unit": "s", "machine": {"kind": "node", "id": "dgx-h100"}, **run}}}
    data["measured"] = {"values": {"accelerator.hbm_bandwidth_bytes_per_s": {
        "value": 2.9e12, "unit": "B/s", "machine": {"kind": "accelerator", "id": "h100-sxm"}, **run}}}
    req = tmp_path / "req.yaml"
    req.write_text(yaml.safe_dump(data, sort_keys=False))
    code, doc = supply_json(req)
    assert code == 0
    by = {o["id"]: o for o in doc["offers"]}
    assert by["B"]["verdict"] == "substitution" and by["B"]["time_to_result_s"]
    (left,) = [c for c in by["B"]["open_confirmations"] if c["item"] == "measurements on the offered hardware"]
    assert "sheet.fields.reliability.restart_time (node dgx-h100)" in left["detail"]
    assert "accelerator.hbm_bandwidth_bytes_per_s (accelerator h100-sxm)" in left["detail"]
    assert not any(c["item"] == "measurements on the offered hardware" for c in by["A"]["open_confirmations"])


def test_an_unreadable_offers_file_is_named_as_the_offers_file(tmp_path: Path) -> None:
    bad = tmp_path / "offers.yaml"
    bad.write_text("offers: [\n")
    for path in (bad, tmp_path / "missing.yaml"):
        r = runner.invoke(app, ["supply", str(REQ), "--offers", str(path)])
        assert r.exit_code == 2 and "--offers" in r.stderr and "Traceback" not in r.output


def test_a_serving_fleet_is_sized_again_on_another_accelerator_within_the_offer(tmp_path: Path) -> None:
    req = tmp_path / "serve.yaml"
    req.write_text(yaml.safe_dump({
        "kind": "inference", "model": {"preset": "llama3.1-8b"}, "compute": {"accelerator": "b200"},
        "serving": {"input_tokens": 1000, "output_tokens": 500, "request_rate": "50/s", "weights": "fp8",
                    "ttft": {"p99": "2s"}, "tpot": {"p99": "50ms"}}}))
    offers = tmp_path / "offers.yaml"
    offers.write_text(yaml.safe_dump({"offers": [{"id": "H", "system": "dgx-h100", "count": 16},
                                                 {"id": "T", "system": "dgx-h100", "count": 1}]}))
    code, doc = supply_json(req, offers)
    assert code == 0
    by = {o["id"]: o for o in doc["offers"]}
    need = doc["requirement"]["gpus"]
    h = by["H"]["substitution"]
    # the same load on H100s: a count of its own, found by the search, within the 16 offered
    assert h["feasible"] and h["accelerator"] == "h100-sxm" and need <= h["gpus"] <= 16
    compute = next(c for c in by["H"]["layers"] if c["layer"] == "compute")
    assert f"{h['gpus']} of its 16 GPUs" in compute["detail"]
    # one H100 cannot carry it: a gap, with the search's reason
    t = by["T"]["substitution"]
    assert not t["feasible"] and by["T"]["verdict"] == "gap" and t["binding"]
