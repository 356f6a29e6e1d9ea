"""Projects and revisions on SQLite and PostgreSQL: append-only numbering, immutability enforced by
the database, a crash mid-save that leaves the last committed revision intact, concurrent savers
that never lose or duplicate a number, and the diff between two revisions."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from shared_data import REPO_ROOT
from workload_compiler import compile_workload, recompile
from workload_compiler.errors import InputError
from workload_compiler.intake.load import read_intake
from workload_compiler.store.revisions import Store, diff_revisions, parse_rev
from workload_compiler.versions import catalog_version, tool_version

GPT3 = REPO_ROOT / "examples" / "gpt3-175b-a100.yaml"


@pytest.fixture(scope="module")
def gpt3() -> tuple[dict, object, object]:  # type: ignore[type-arg]
    intake = read_intake(GPT3)
    return intake, compile_workload(intake), recompile(intake, {"facility.power": "1MW"})


def test_revisions_are_numbered_in_order_and_keep_what_made_them(db_url: str, gpt3) -> None:  # type: ignore[no-untyped-def]
    intake, base, pinned = gpt3
    store = Store.open(db_url)
    first = store.save("acme", intake, {}, base, "baseline")
    second = store.save("acme", intake, {"facility.power": "1MW"}, pinned, "hall pinned")
    other = store.save("globex", intake, {}, base)
    assert (first.label, second.label, other.label) == ("REV 01", "REV 02", "REV 01")
    assert [r.number for r in store.revisions("acme")] == [1, 2]
    stored = store.revision("acme", 2)
    assert stored.pins == {"facility.power": "1MW"} and stored.intake == intake
    assert stored.info.tool_version == tool_version() and stored.info.catalog_version == catalog_version()
    assert stored.spec().model_dump(mode="json") == pinned.model_dump(mode="json")
    assert [(n, c) for n, c, _ in store.projects()] == [("acme", 2), ("globex", 1)]
    store.close()


def test_the_database_refuses_to_change_or_delete_a_revision(db_url: str, gpt3) -> None:  # type: ignore[no-untyped-def]
    intake, base, _ = gpt3
    store = Store.open(db_url)
    store.save("acme", intake, {}, base)
    for statement in ("UPDATE revisions SET note = 'rewritten'", "DELETE FROM revisions"):
        with pytest.raises(DBAPIError, match="immutable"), store.engine.begin() as conn:
            conn.execute(text(statement))
    assert store.revision("acme", 1).info.note == ""
    store.close()


def test_migrations_are_idempotent_and_at_head(db_url: str) -> None:
    Store.open(db_url).close()
    store = Store.open(db_url)
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0001"
    store.close()


CRASH = textwrap.dedent("""
    import os, signal, sys
    from sqlalchemy import event
    from sqlalchemy.orm import Session
    from workload_compiler import compile_workload
    from workload_compiler.intake.load import read_intake
    from workload_compiler.store.revisions import Store

    store = Store.open(sys.argv[1])
    intake = read_intake(sys.argv[2])
    spec = compile_workload(intake)

    @event.listens_for(Session, "after_flush")
    def _die(session, context):  # the INSERT has reached the database; COMMIT has not
        print("flushed", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    store.save("acme", intake, {"facility.power": "1MW"}, spec, "never committed")
""")


def test_a_crash_mid_save_leaves_the_last_committed_revision_intact(db_url: str, gpt3) -> None:  # type: ignore[no-untyped-def]
    intake, base, pinned = gpt3
    store = Store.open(db_url)
    store.save("acme", intake, {}, base, "committed")
    store.close()
    run = subprocess.run([sys.executable, "-c", CRASH, db_url, str(GPT3)], capture_output=True, text=True, timeout=120)
    assert run.returncode == -9 and "flushed" in run.stdout, run.stderr  # killed between INSERT and COMMIT
    after = Store.open(db_url)
    assert [(r.number, r.note) for r in after.revisions("acme")] == [(1, "committed")]
    assert after.revision("acme", 1).result == base.model_dump(mode="json")
    assert after.save("acme", intake, {"facility.power": "1MW"}, pinned).label == "REV 02"
    after.close()


def test_concurrent_savers_never_lose_or_duplicate_a_revision(db_url: str, gpt3) -> None:  # type: ignore[no-untyped-def]
    intake, base, _ = gpt3
    store = Store.open(db_url)
    errors: list[BaseException] = []
    saved: list[int] = []
    lock = threading.Lock()

    def saver(worker: int) -> None:
        try:
            for i in range(5):
                info = store.save("race", intake, {}, base, f"worker {worker} save {i}")
                with lock:
                    saved.append(info.number)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=saver, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert sorted(saved) == list(range(1, 31))
    assert [r.number for r in store.revisions("race")] == list(range(1, 31))
    store.close()


def test_diff_names_the_inputs_then_every_output_that_moved(db_url: str, gpt3) -> None:  # type: ignore[no-untyped-def]
    intake, base, pinned = gpt3
    store = Store.open(db_url)
    store.save("acme", intake, {}, base)
    store.save("acme", intake, {"facility.power": "1MW"}, pinned)
    diff = diff_revisions(store.revision("acme", 1), store.revision("acme", 2))
    assert [(c.path, c.old, c.new) for c in diff.inputs] == [("facility.power", None, "1MW")]
    moved = {c.path: c for c in diff.outputs}
    assert any(p.startswith("collisions[") and c.new == "facility power" for p, c in moved.items())
    assert "search.seconds" not in moved and not any(p.startswith("pins") for p in moved)
    assert diff_revisions(store.revision("acme", 1), store.revision("acme", 1)).empty
    store.close()


def test_unknown_projects_and_revisions_are_named(db_url: str, gpt3) -> None:  # type: ignore[no-untyped-def]
    intake, base, _ = gpt3
    store = Store.open(db_url)
    store.save("acme", intake, {}, base)
    with pytest.raises(InputError, match=r"REV 07.*REV 01"):
        store.revision("acme", 7)
    with pytest.raises(InputError, match="project"):
        store.revisions("nobody")
    with pytest.raises(InputError, match="project"):
        store.save("../etc", intake, {}, base)
    store.close()


@pytest.mark.parametrize(("text", "number"), [("1", 1), ("02", 2), ("REV 02", 2), ("rev-3", 3), ("rev07", 7)])
def test_revision_labels_parse(text: str, number: int) -> None:
    assert parse_rev(text) == number


@pytest.mark.parametrize("text", ["0", "REV", "two", "-1", "REV 1.5"])
def test_bad_revision_labels_are_input_errors(text: str) -> None:
    with pytest.raises(InputError, match="revision"):
        parse_rev(text)


def test_an_intake_with_a_yaml_date_is_stored_as_iso_text(db_url: str, gpt3) -> None:  # type: ignore[no-untyped-def]
    import datetime

    intake, base, _ = gpt3
    dated = {**intake, "boundary": {"cells": [{"layer": "Facility", "when": datetime.date(2026, 1, 15)}]}}
    store = Store.open(db_url)
    store.save("dated", dated, {}, base)
    assert store.revision("dated", 1).intake["boundary"]["cells"][0]["when"] == "2026-01-15"
    store.close()
