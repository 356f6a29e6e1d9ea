"""`wkc save`, `wkc revisions`, `wkc diff` on a SQLite file named by $WKC_DATABASE_URL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from shared_data import REPO_ROOT

GPT3 = str(REPO_ROOT / "examples" / "gpt3-175b-a100.yaml")


def test_save_list_and_diff(tmp_path: Path) -> None:
    env = {**os.environ, "WKC_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}"}

    def wkc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "workload_compiler.cli.main", *args], capture_output=True,
                              text=True, timeout=300, cwd=REPO_ROOT, env=env)

    assert "saved acme REV 01" in wkc("save", "acme", GPT3, "--note", "baseline").stdout
    assert "saved acme REV 02" in wkc("save", "acme", GPT3, "--set", "facility.power=1MW").stdout
    listed = json.loads(wkc("revisions", "acme", "--json").stdout)
    assert [(r["revision"], r["note"]) for r in listed] == [("REV 01", "baseline"), ("REV 02", "")]
    assert json.loads(wkc("revisions", "--json").stdout)[0]["revisions"] == 2
    diff = json.loads(wkc("diff", "acme", "1", "REV 02", "--json").stdout)
    assert diff["changes"]["Inputs"] == [{"path": "facility.power", "old": "—", "new": "1MW", "kind": "added"}]
    assert any(r["new"] == "facility power" for r in diff["changes"]["Outputs that moved"])
    text = wkc("diff", "acme", "1", "2").stdout
    assert "Inputs (1)" in text and "facility.power" in text
    # at 80 columns every moved path is whole (it was cut: 'compute.step_breakdown…' six times over)
    narrow = subprocess.run([sys.executable, "-m", "workload_compiler.cli.main", "diff", "acme", "1", "2"],
                            capture_output=True, text=True, timeout=300, cwd=REPO_ROOT, env={**env, "COLUMNS": "80"})
    assert "…" not in narrow.stdout and all(len(line) <= 80 for line in narrow.stdout.splitlines())
    missing = wkc("diff", "acme", "1", "9")
    assert missing.returncode == 2 and "REV 09" in missing.stderr and "Traceback" not in missing.stderr
    bad_pin = wkc("save", "acme", GPT3, "--set", "facility.powr=1MW")
    assert bad_pin.returncode == 2 and "facility.power" in bad_pin.stderr
