"""The seed conversation ("From Watts to Weights", seeds/001): a 1T-parameter model in 30 days, the
data center supports 256 GPUs. The compiler must name the collision and quantify alternatives."""

import json
from pathlib import Path

from typer.testing import CliRunner

from workload_compiler.cli.main import app

EXAMPLE = Path(__file__).parents[2] / "examples" / "one-trillion-30-days.yaml"


def test_one_trillion_in_30_days_on_256_gpus() -> None:
    result = CliRunner().invoke(app, ["compile", str(EXAMPLE), "--json"])
    doc = json.loads(result.stdout)
    assert doc["collisions"], "the 256-GPU cap must collide with the requirement"
    quantified = [a for a in doc["alternatives"]
                  if a.get("gpus") and a.get("time_to_train_s") and a.get("it_power_w")]
    assert len({a["name"] for a in doc["alternatives"]}) >= 4
    assert len(quantified) >= 3
    # At least one alternative meets the 30-day target; those that keep the 1T model on 1T tokens
    # need more than the 256 GPUs (a smaller model or fewer tokens may fit them).
    meeting = [a for a in quantified if a["meets_target"]]
    same_work = [a for a in meeting if a["lever"] not in ("model", "tokens")]
    assert same_work and all(a["gpus"] > 256 for a in same_work)


def test_fit_answers_the_hall_question() -> None:
    # Issue: "2 MW at 40 kW a rack, air cooled: how many H100 / B200 / GB200, and how long to train
    # Llama 3.1 405B on 15T tokens?" — with what binds for each.
    result = CliRunner().invoke(app, ["fit", "--power", "2MW", "--rack-power", "40kW", "--cooling", "air",
                                      "--model", "llama3.1-405b", "--tokens", "15T", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["system"]: r for r in json.loads(result.stdout)["systems"]}
    assert rows["dgx-h100"]["gpus"] > 0 and rows["dgx-h100"]["binding"] == "power"
    assert rows["dgx-h100"]["time_to_train_s"] > 0
    assert rows["dgx-b200"]["gpus"] > 0
    assert rows["dgx-b200"]["time_to_train_s"] < rows["dgx-h100"]["time_to_train_s"]
    assert not rows["gb200-nvl72"]["feasible"] and "rack" in rows["gb200-nvl72"]["binding"]
    assert rows["dgx-h100"]["facility_power_w"] <= 2e6


def test_fit_rejects_a_hall_without_power() -> None:
    result = CliRunner().invoke(app, ["fit", "--power", "0MW", "--rack-power", "40kW"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    result = CliRunner().invoke(app, ["fit", "--power", "2MW", "--rack-power", "40kW", "--cooling", "steam"])
    assert result.exit_code == 2 and "cooling" in result.output


def test_a_pinned_hall_caps_the_cluster(tmp_path: Path) -> None:
    # Reverse mode through the intake: "this hall delivers 2 MW" bounds the GPU count; the spec says
    # how many fit and uses at most that many.
    f = tmp_path / "hall.yaml"
    f.write_text("kind: training\nmodel: {preset: llama3-70b}\ntraining: {tokens: 2T, seq_len: 8192, "
                 "global_batch_size: 512}\ncompute: {accelerator: h100-sxm}\n"
                 "facility: {power: 2MW, rack_power: 40kW, cooling: air}\n")
    doc = json.loads(CliRunner().invoke(app, ["compile", str(f), "--json"]).stdout)
    hall_gpus = doc["provenance"]["facility.hall_gpus"]
    assert hall_gpus["source"] == "derived"
    assert 0 < doc["compute"]["gpus"] <= 904     # 2 MW at PUE 1.56 holds 113 DGX H100 (wkc fit)
    assert doc["facility"]["facility_power_w"] <= 2e6 * 1.001
