"""The command line's contract: --version, help text for every option without placeholders,
errors in the words of the command line (flags), and an exit code that agrees with the verdict."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from workload_compiler.cli import main as cli_main
from workload_compiler.cli.main import app

EXAMPLES = Path(__file__).parents[2] / "examples"
runner = CliRunner()


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("wkc ") and result.stdout.split()[1][0].isdigit()


@pytest.mark.parametrize("command", list(cli_main._COMMANDS))
def test_every_option_has_help_and_no_placeholder(command: str) -> None:
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "<bool>" not in result.stdout
    for line in result.stdout.splitlines():
        cells = line.strip("│ ").split()
        if cells and cells[0].startswith("--"):
            words = [c for c in cells[1:] if not c.startswith("<") and not c.startswith("-")]
            assert words, f"{command}: {cells[0]} has no help text"


def test_the_command_list_shows_each_command_by_its_own_summary() -> None:
    registered = {c.name: c.callback for c in app.registered_commands}   # the real commands (tests load all)
    assert set(registered) == set(cli_main._COMMANDS)
    for word, (_, summary) in cli_main._COMMANDS.items():
        doc = inspect.getdoc(registered[word]) or ""
        assert " ".join(doc.split("\n\n")[0].split()) == summary, word


@pytest.mark.parametrize("argv", [["wkc"], ["wkc", "--help"]])
def test_the_bare_listing_shows_every_summary_whole_and_loads_nothing_heavy(argv: list[str]) -> None:
    """`wkc` / `wkc --help` as the console script runs them (a fresh process: the listing path is
    chosen by argv): each command with its whole summary, wrapped within 80 columns, never cut; and
    neither rich's help renderer nor the engine (pydantic, numpy) imported, which is its speed.
    (Bare `wkc` is click's usage error: the listing on stderr, exit 2.)"""
    code = ("import sys\nsys.argv = " + repr(argv) + "\nfrom workload_compiler.cli.main import app\n"
            "try:\n    app()\nexcept SystemExit:\n    pass\n"
            "print('LOADED', sorted(m for m in ('rich', 'pydantic', 'numpy', 'yaml') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "COLUMNS": "80"})
    listing, loaded = (run.stderr + run.stdout).split("LOADED")
    assert loaded.strip() == "[]"
    assert all(len(line) <= 80 for line in listing.splitlines())
    commands = listing.split("Commands:")[1]
    assert "..." not in commands and "…" not in commands
    flat = " ".join(commands.split())
    for word, (_, summary) in cli_main._COMMANDS.items():
        assert f"{word} {summary}" in flat, word


def test_fit_errors_name_the_flag() -> None:
    result = runner.invoke(app, ["fit", "--power", "abc", "--rack-power", "40kW"])
    assert result.exit_code == 2
    assert "--power: 'abc' is not allowed" in result.stderr and "power_w" not in result.stderr
    result = runner.invoke(app, ["fit", "--power", "2MW", "--rack-power", "40kW", "--model", "llama3-8bx"])
    assert result.exit_code == 2 and "--model" in result.stderr and "did you mean 'llama3-8b'" in result.stderr


def test_a_missed_target_is_a_warning_or_exit_3_with_strict() -> None:
    gpt3 = str(EXAMPLES / "gpt3-175b-a100.yaml")   # 31.8 d goodput-adjusted against a 30 d target
    result = runner.invoke(app, ["compile", gpt3, "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["verdict"] == "misses target"
    assert "warning: feasible, misses its target" in result.stderr
    strict = runner.invoke(app, ["compile", gpt3, "--json", "--strict"])
    assert strict.exit_code == 3 and json.loads(strict.stdout)["verdict"] == "misses target"
    met = runner.invoke(app, ["compile", str(EXAMPLES / "llama3.3-70b-chat.yaml"), "--strict", "--json"])
    assert met.exit_code == 0 and json.loads(met.stdout)["verdict"] == "meets target"


def test_infeasible_exits_3_and_still_prints_the_document(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text("kind: training\nmodel: {preset: llama3-8b}\ncompute: {accelerator: a100-sxm-80gb, gpus: 64}\n"
                 "facility: {rack_power: 1kW}\n", encoding="utf-8")
    result = runner.invoke(app, ["compile", str(f), "--json"])
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["feasible"] is False and doc["verdict"] == "infeasible" and doc["binding_constraint"]
    term = runner.invoke(app, ["compile", str(f)], env={"COLUMNS": "80"})
    assert term.exit_code == 3 and "INFEASIBLE" in "\n".join(term.stdout.splitlines()[1:4])


def test_plan_json_for_an_infeasible_workload_is_a_document(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text("kind: training\nmodel: {preset: llama3.1-405b}\ncompute: {accelerator: h100-sxm, gpus: 8}\n",
                 encoding="utf-8")
    result = runner.invoke(app, ["plan", str(f), "--json"])
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["feasible"] is False and "memory" in doc["binding_constraint"]


@pytest.mark.parametrize("args", [
    ["plan", str(EXAMPLES / "llama3-70b-plan.yaml"), "--top", "100000"],   # took 22 s and printed 39,851 lines
    ["plan", str(EXAMPLES / "llama3-70b-plan.yaml"), "--top", "0"],
    ["sensitivity", str(EXAMPLES / "gpt3-175b-a100.yaml"), "--top", "-3"],  # once dropped the last three rows
])
def test_list_lengths_out_of_range_are_refused_by_the_flag(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "--top" in result.output


TOKEN = re.compile(r"[\w.%+-]+")


def test_fit_reads_at_80_columns_without_split_words() -> None:
    """`wkc fit` with a model and a deadline: ten columns split their headers into letters at 80
    columns ('syste'/'m', 'toke'/'ns'); now a block a system where the table does not fit, and what
    binds under it in words."""
    args = ["fit", "--power", "2MW", "--rack-power", "40kW", "--model", "llama3-8b", "--tokens", "15T",
            "--deadline", "30d"]
    wide = runner.invoke(app, args, env={"COLUMNS": "1000"})
    narrow = runner.invoke(app, args, env={"COLUMNS": "80"})
    assert wide.exit_code == narrow.exit_code == 0
    assert all(len(line) <= 80 for line in narrow.stdout.splitlines())
    assert not set(TOKEN.findall(narrow.stdout)) - set(TOKEN.findall(wide.stdout))
    assert "tokens tokens" not in narrow.stdout and "dgx-h100: power:" in narrow.stdout


@pytest.mark.parametrize(("flag", "value"), [("--deadline", "0d"), ("--ttft", "0s")])
def test_fit_errors_name_the_flag_even_for_a_nested_field(flag: str, value: str) -> None:
    result = runner.invoke(app, ["fit", "--power", "2MW", "--rack-power", "40kW", "--model", "llama3-8b",
                                 "--tokens", "15T", flag, value])
    assert result.exit_code == 2 and f"{flag}: '{value}' is not allowed" in result.stderr


@pytest.mark.parametrize("args", [
    ["catalog"], ["catalog", "models"], ["catalog", "switches"], ["catalog", "nics"],
    ["sensitivity", str(EXAMPLES / "gpt3-175b-a100.yaml")],
    ["plan", str(EXAMPLES / "llama3-70b-plan.yaml")],
    ["fit", "--power", "2MW", "--rack-power", "40kW"],
], ids=lambda a: "-".join(a[:2]).replace("/", "_")[:40])
def test_listings_read_at_80_columns_without_cut_numbers_or_split_words(args: list[str]) -> None:
    """`wkc catalog` at 80 columns once cut its numbers ('1.5…' for 1.555 TB/s) and ids ('a10…'), and
    `wkc sensitivity` split its keys ('compute.st'/'ep_time_s'): a table where it fits, else a block
    an entry."""
    wide = runner.invoke(app, args, env={"COLUMNS": "1000"})
    narrow = runner.invoke(app, args, env={"COLUMNS": "80"})
    assert wide.exit_code == narrow.exit_code == 0
    lines = narrow.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    whole = set(TOKEN.findall(wide.stdout))
    longer = [w for w in whole if len(w) > 70]      # an address longer than the terminal has to fold
    tokens = {t for t in set(TOKEN.findall(narrow.stdout)) - whole if not any(t in w for w in longer)}
    assert not {t for t in tokens if not t.replace(".", "").isdigit() or "…" in t}, tokens   # timings differ
    assert not re.search(r"\d…", narrow.stdout)      # no number cut


def test_a_hall_beyond_the_largest_fabric_is_capped_by_the_fabric_and_the_other_systems_stand() -> None:
    """20 MW of direct liquid cooling holds 16,656 A100s by power, but a 3-tier fat tree of the DGX
    A100's 40-port HDR switches connects at most 16,000 (fabric/fat_tree.py): the command once failed
    whole (exit 3, no table) when the A100 training compile met that limit."""
    result = runner.invoke(app, ["fit", "--power", "20MW", "--rack-power", "130kW", "--cooling", "dlc",
                                 "--model", "llama3.1-405b", "--tokens", "15T", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["system"]: r for r in json.loads(result.stdout)["systems"]}
    a100 = rows["dgx-a100"]
    assert a100["gpus"] == 16_000 and a100["binding"].startswith("fabric")
    assert a100["train_gpus"] and a100["train_gpus"] <= 16_000
    assert rows["dgx-h100"]["train_gpus"]
