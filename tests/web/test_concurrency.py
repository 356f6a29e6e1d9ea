"""Concurrent clients on loopback: recompiles and saves interleaved, no error, no lost or
duplicated revision (a small version of benchmarks/bench_web.py's 20 x 200)."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx

from live_server import serve
from shared_data import REPO_ROOT
from workload_compiler.intake.load import read_intake
from workload_compiler.web.settings import Settings

CLIENTS, OPS = 6, 10
INTAKE = read_intake(REPO_ROOT / "examples" / "llama3-70b-plan.yaml")
POWERS = ["2MW", "1.5MW", "1MW", "800kW", "600kW"]


def test_concurrent_recompiles_and_saves_lose_nothing(tmp_path: Path) -> None:
    errors: list[str] = []
    with serve(Settings(rate_per_minute=0), f"sqlite:///{tmp_path / 'race.sqlite3'}") as url:
        def client(n: int) -> None:
            with httpx.Client(base_url=url, timeout=120) as http:
                for i in range(OPS):
                    pins = {"facility.power": POWERS[(n + i) % len(POWERS)]}
                    if i % 2:
                        r = http.post(f"/api/projects/race-{n % 2}/revisions", json={"intake": INTAKE, "pins": pins,
                                                                                    "note": f"client {n} op {i}"})
                        ok = r.status_code == 201
                    else:
                        r = http.post("/api/compile", json={"intake": INTAKE, "pins": pins})
                        ok = r.status_code == 200 and r.json()["result"]["kind"] == "training"
                    if not ok:
                        errors.append(f"client {n} op {i}: {r.status_code} {r.text[:200]}")

        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        assert not errors, errors
        saves = CLIENTS * (OPS // 2)
        numbers = [r["number"] for p in ("race-0", "race-1")
                   for r in httpx.get(f"{url}/api/projects/{p}/revisions").json()]
        assert len(numbers) == saves
        for p in ("race-0", "race-1"):
            revs = httpx.get(f"{url}/api/projects/{p}/revisions").json()
            assert [r["number"] for r in revs] == list(range(1, len(revs) + 1))
            assert sorted(r["note"] for r in revs) == sorted(
                f"client {n} op {i}" for n in range(CLIENTS) if n % 2 == int(p[-1]) for i in range(1, OPS, 2))
