"""The workbench over real HTTP on loopback: pages, the JSON API, errors that name the field and
never show a stack trace, the token, the body cap, the rate limit, offline assets, reports."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import httpx
import pytest

from live_server import serve
from shared_data import REPO_ROOT
from workload_compiler.errors import InputError
from workload_compiler.intake.load import read_intake
from workload_compiler.web.settings import Settings

HTML = {"accept": "text/html"}
GPT3 = read_intake(REPO_ROOT / "examples" / "gpt3-175b-a100.yaml")


def _no_trace(text: str) -> None:
    assert "Traceback" not in text and 'File "' not in text


def test_the_first_page_has_an_example_compiled_in_six_layers(base_url_live: str) -> None:
    r = httpx.get(base_url_live + "/", headers=HTML)
    assert r.status_code == 200
    assert "GPT-3 175B" in r.text and 'data-testid="verdict"' in r.text
    assert len(re.findall(r'data-testid="layer-(objective|compute|fabric|storage|software|facility)"', r.text)) == 6
    # offline: every script and stylesheet comes from this server
    assert re.findall(r'(?:src|href)="(https?:)?//', r.text) == []
    assert '/static/htmx-2.0.11.min.js' in r.text


def test_htmx_is_vendored_with_its_version_and_license(base_url_live: str) -> None:
    js = httpx.get(base_url_live + "/static/htmx-2.0.11.min.js")
    assert js.status_code == 200 and 'version:"2.0.11"' in js.text.replace(" ", "")
    assert "Zero-Clause BSD" in httpx.get(base_url_live + "/static/htmx-2.0.11.LICENSE.txt").text


@pytest.mark.parametrize("kind", ["training", "inference", "hpc"])
def test_each_archetype_has_an_intake_page_built_from_its_schema(base_url_live: str, kind: str) -> None:
    r = httpx.get(base_url_live + f"/intake/{kind}", headers=HTML)
    assert r.status_code == 200
    fields = re.findall(r'name="f:([a-z0-9_.]+)"', r.text)
    from workload_compiler.web.forms import form_fields
    assert sorted(set(fields)) == sorted(f.key for f in form_fields(kind)) and len(fields) > 20


def test_compile_api_answers_and_caches(base_url_live: str) -> None:
    intake = {**GPT3, "name": "cache probe"}
    first = httpx.post(base_url_live + "/api/compile", json={"intake": intake}, timeout=60)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["result"]["compute"]["gpus"] == 1024 and body["cached"] is False and body["compile_s"] > 0
    again = httpx.post(base_url_live + "/api/compile", json={"intake": intake}, timeout=60).json()
    assert again["cached"] is True and again["key"] == body["key"]


def test_a_partial_intake_compiles_with_its_assumptions_beside_the_fields(base_url_live: str) -> None:
    form = {"kind": "training", "source": "fields", "state_intake": "{}", "state_pins": "{}",
            "f:model.preset": "llama3-8b", "f:training.tokens": "1T", "f:compute.accelerator": "h100-sxm",
            "f:compute.gpus": "64"}
    r = httpx.post(base_url_live + "/compile", data=form, headers=HTML, timeout=60)
    assert r.status_code == 200, r.text
    assert 'data-testid="assumed-compute.system"' in r.text      # filled by a rule, marked beside its field
    assert 'data-testid="assumed-training.seq_len"' in r.text


@pytest.mark.parametrize(("body", "field"), [
    ({"intake": {**GPT3, "compute": {"gpus": "many"}}}, "compute.gpus"),
    ({"intake": {"kind": "painting"}}, "kind"),
    ({"intake": GPT3, "pins": {"facility.powr": "1MW"}}, "pins.facility.powr"),
    ({"intake": {**GPT3, "facility": {"power": "2 bananas"}}}, "facility.power"),
    ({"pins": {}}, "intake"),
])
def test_api_errors_name_the_field(base_url_live: str, body: dict, field: str) -> None:  # type: ignore[type-arg]
    r = httpx.post(base_url_live + "/api/compile", json=body, timeout=60)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["field"] == field or any(p["field"] == field for p in error["problems"]), error
    _no_trace(r.text)


def test_page_errors_are_pages_or_fragments_that_name_the_field(base_url_live: str) -> None:
    form = {"kind": "training", "source": "fields", "state_intake": "{}", "state_pins": "{}",
            "f:model.preset": "gpt3-175b", "f:compute.gpus": "abc"}
    page = httpx.post(base_url_live + "/compile", data=form, headers=HTML)
    assert page.status_code == 422 and "<!DOCTYPE html>" in page.text and "compute.gpus" in page.text
    fragment = httpx.post(base_url_live + "/compile", data=form, headers={**HTML, "HX-Request": "true"})
    assert fragment.status_code == 422 and fragment.headers["HX-Retarget"] == "#messages"
    assert 'data-testid="error-field">compute.gpus' in fragment.text
    missing = httpx.get(base_url_live + "/no/such/page", headers=HTML)
    assert missing.status_code == 404 and "<!DOCTYPE html>" in missing.text
    for r in (page, fragment, missing):
        _no_trace(r.text)


def test_pinning_the_facility_power_brings_the_collision(base_url_live: str) -> None:
    state = {"kind": "training", "state_intake": json.dumps(GPT3), "state_pins": "{}", "prev_key": "",
             "active_layer": "facility", "pin:facility.power": "1MW"}
    r = httpx.post(base_url_live + "/pin", data=state, headers={**HTML, "HX-Request": "true"}, timeout=60)
    assert r.status_code == 200
    drawn = re.search(r"facility power</b>: the system draws (\d+\.\d\d) MW[^<]*the hall delivers 1\.00 MW", r.text)
    assert drawn is not None and float(drawn.group(1)) > 1.0
    assert 'data-testid="layer-facility" open' in r.text and "facility.power = 1MW" in r.text
    assert "<!DOCTYPE" not in r.text  # a fragment: only the workbench block is swapped


def test_figures_and_reports_come_from_the_compiled_state(base_url_live: str) -> None:
    key = httpx.post(base_url_live + "/api/compile", json={"intake": GPT3}, timeout=60).json()["key"]
    for name in ("step", "memory", "power", "alternatives"):
        svg = httpx.get(base_url_live + f"/figure/{key}/{name}.svg", timeout=60)
        assert svg.status_code == 200 and svg.text.startswith("<svg"), name
    tornado = httpx.get(base_url_live + f"/figure/{key}/sensitivity.svg", timeout=120)  # computed when asked for
    assert tornado.text.startswith("<svg") and "Sensitivity" in tornado.text
    state = {"state_intake": json.dumps(GPT3), "state_pins": "{}"}
    html = httpx.post(base_url_live + "/report.html", data=state, timeout=60)
    assert "attachment" in html.headers["content-disposition"] and html.text.count("<svg") >= 5  # with the tornado
    assert "Sensitivity: which assumptions move" in html.text
    pdf = httpx.post(base_url_live + "/report.pdf", data=state, timeout=120)
    assert pdf.content.startswith(b"%PDF") and pdf.headers["content-type"] == "application/pdf"
    md = httpx.post(base_url_live + "/report.md", data=state, timeout=60)
    assert md.text.startswith("# GPT-3")


def test_save_list_and_diff_through_the_api(base_url_live: str) -> None:
    url = base_url_live + "/api/projects/api-demo/revisions"
    one = httpx.post(url, json={"intake": GPT3, "note": "baseline"}, timeout=60)
    two = httpx.post(url, json={"intake": GPT3, "pins": {"facility.power": "1MW"}}, timeout=60)
    assert (one.status_code, two.status_code) == (201, 201)
    assert [r["revision"] for r in httpx.get(url).json()] == ["REV 01", "REV 02"]
    diff = httpx.get(base_url_live + "/api/projects/api-demo/diff/1/2").json()
    assert diff["changes"]["Inputs"] == [{"path": "facility.power", "old": "—", "new": "1MW", "kind": "added"}]
    assert httpx.get(base_url_live + "/api/projects/api-demo/revisions/3").status_code == 422


def test_openapi_documents_the_api(base_url_live: str) -> None:
    spec = httpx.get(base_url_live + "/openapi.json").json()
    assert {"/api/compile", "/api/projects/{project}/revisions", "/api/schema/{name}"} <= set(spec["paths"])
    assert "422" in spec["paths"]["/api/compile"]["post"]["responses"]
    assert httpx.get(base_url_live + "/api/schema/intake").json()["x-schema-version"]


def test_a_token_guards_every_page_but_health() -> None:
    token = "t0ken-for-the-test-1234"
    with serve(Settings(token=token)) as url:
        assert httpx.get(url + "/", headers=HTML).status_code == 401
        assert httpx.get(url + "/api/examples").status_code == 401
        assert httpx.get(url + "/api/examples", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert httpx.get(url + "/api/examples", headers={"authorization": f"Bearer {token}"}).status_code == 200
        assert httpx.get(url + "/healthz").status_code == 200
        hop = httpx.get(url + f"/?token={token}", headers=HTML)
        assert hop.status_code == 303 and "token" not in hop.headers["location"]
        cookie = hop.headers["set-cookie"].split(";")[0]
        assert httpx.get(url + "/api/examples", headers={"cookie": cookie}).status_code == 200


def test_limits_out_of_range_are_refused_by_their_flag() -> None:
    """A negative --rate once started a server whose token buckets never refilled; --max-body 0 one
    that refused every request."""
    with pytest.raises(InputError, match="--rate"):
        Settings(rate_per_minute=-5).checked()
    with pytest.raises(InputError, match="--max-body"):
        Settings(max_body_bytes=0).checked()
    assert Settings(rate_per_minute=0, max_body_bytes=4096).checked().rate_per_minute == 0


def test_binding_beyond_loopback_needs_a_token() -> None:
    with pytest.raises(InputError, match="token"):
        Settings(host="0.0.0.0").checked()
    with pytest.raises(InputError, match="16 characters"):
        Settings(host="0.0.0.0", token="short").checked()
    assert Settings(host="0.0.0.0", token="x" * 16).checked().token == "x" * 16
    run = subprocess.run([sys.executable, "-m", "workload_compiler.cli.main", "serve", "--host", "0.0.0.0"],
                         capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert run.returncode == 2 and "token" in run.stderr and "Traceback" not in run.stderr


def test_request_bodies_over_the_limit_are_refused() -> None:
    with serve(Settings(max_body_bytes=10_000)) as url:
        r = httpx.post(url + "/api/compile", content=b"{" + b" " * 20_000 + b"}",
                       headers={"content-type": "application/json"})
        assert r.status_code == 413 and r.json()["error"]["field"] == "body"

        def chunks():  # type: ignore[no-untyped-def]  # no Content-Length: counted as it streams
            for _ in range(30):
                yield b" " * 1000
        streamed = httpx.post(url + "/api/compile", content=chunks(), headers={"content-type": "application/json"})
        assert streamed.status_code == 413


def test_the_rate_limit_answers_429_with_retry_after() -> None:
    # one token a minute: however slow the machine, no token comes back within the test
    with serve(Settings(rate_per_minute=1, rate_burst=5)) as url:
        codes = [httpx.get(url + "/api/examples").status_code for _ in range(7)]
        assert codes[:5] == [200] * 5 and codes[-1] == 429
        r = httpx.get(url + "/api/examples")
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1 and r.json()["error"]["field"] == "rate"


def test_an_uploaded_config_json_and_yaml_file_compile(base_url_live: str) -> None:
    hf = (REPO_ROOT / "tests" / "fixtures" / "hf" / "mixtral-8x7b.json").read_bytes()
    form = {"kind": "inference", "source": "hf", "state_intake": "{}", "state_pins": "{}",
            "f:compute.accelerator": "h100-sxm", "f:serving.weights": "fp8"}
    r = httpx.post(base_url_live + "/compile", data=form, files={"hf_config": ("config.json", hf)}, headers=HTML,
                   timeout=120)
    assert r.status_code == 200, r.text[:500]
    assert 'data-testid="note">model read from config.json' in r.text and 'data-testid="verdict"' in r.text
    assert "moe.experts" in r.text and 'value="8"' in r.text      # the architecture is now in the form
    yaml_file = (REPO_ROOT / "examples" / "hpc-cfd-lbm.yaml").read_bytes()
    r = httpx.post(base_url_live + "/compile", data={"kind": "training", "source": "yaml"},
                   files={"yaml_file": ("lbm.yaml", yaml_file)}, headers=HTML, timeout=120)
    assert r.status_code == 200 and 'aria-selected="true" data-testid="kind-hpc"' in r.text


def test_wkc_serve_prints_the_database_and_serves_an_example(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import os
    import time

    from live_server import free_port

    port = free_port()
    env = {**os.environ, "WKC_DATABASE_URL": f"sqlite:///{tmp_path / 'serve.sqlite3'}"}
    proc = subprocess.Popen([sys.executable, "-m", "workload_compiler.cli.main", "serve", "--port", str(port)],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env, cwd=REPO_ROOT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", headers=HTML, timeout=60)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, "wkc serve did not start"
                time.sleep(0.3)
        assert page.status_code == 200 and 'data-testid="verdict"' in page.text and "GPT-3 175B" in page.text
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    assert f"database: SQLite file {tmp_path / 'serve.sqlite3'}" in stderr
    assert f"workbench: http://localhost:{port}/" in stderr


def test_a_post_from_another_sites_page_is_refused(base_url_live: str) -> None:
    body = {"intake": GPT3}
    foreign = httpx.post(base_url_live + "/api/compile", json=body, headers={"origin": "https://evil.example"})
    assert foreign.status_code == 403 and foreign.json()["error"]["field"] == "origin"
    same = httpx.post(base_url_live + "/api/compile", json=body, headers={"origin": base_url_live}, timeout=60)
    assert same.status_code == 200
