"""Fuzzing the OpenAPI document with schemathesis against the live server: whatever the
generated request, the answer is never a server error (5xx) and conforms to the documented
responses. Examples are bounded (CI time); the generation is derandomized."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import checks as sc
from schemathesis.specs.openapi import checks as oc

from live_server import serve
from workload_compiler.web.settings import Settings

MAX_EXAMPLES = 25


@pytest.fixture(scope="module")
def fuzz_url(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    db = tmp_path_factory.mktemp("fuzzdb") / "fuzz.sqlite3"
    with serve(Settings(rate_per_minute=0), f"sqlite:///{db}") as url:
        yield url


def _fuzz(operation: Any, base_url: str, calls: dict[str, int]) -> Callable[[], None]:
    """A hypothesis test of one operation: generated requests, the responses checked."""

    @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy())
    def run(case: schemathesis.Case) -> None:
        response = case.call(base_url=base_url, timeout=60)
        calls[operation.path] = calls.get(operation.path, 0) + 1
        case.validate_response(response, checks=[sc.not_a_server_error, oc.status_code_conformance,
                                                 oc.content_type_conformance])

    return run  # type: ignore[no-any-return]


def test_no_generated_request_gets_a_server_error(fuzz_url: str) -> None:
    schema = schemathesis.openapi.from_url(fuzz_url + "/openapi.json")
    failures: list[str] = []
    calls: dict[str, int] = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        try:
            _fuzz(operation, fuzz_url, calls)()
        except Exception as exc:  # collected per operation, reported together
            failures.append(f"{operation.method.upper()} {operation.path}: {str(exc)[:800]}")
    assert not failures, "\n\n".join(failures)
    assert len(calls) >= 10 and min(calls.values()) >= 1, calls  # every operation was exercised
    assert calls["/api/compile"] >= MAX_EXAMPLES // 2, calls
