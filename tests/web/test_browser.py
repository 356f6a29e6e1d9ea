"""The workbench in Debian's Chromium (Playwright): fill a training intake, compile, save REV 01,
pin the facility power and see the collision appear, save REV 02, diff it against REV 01, download
the HTML and PDF reports. A screenshot of the layer view is kept in test-artifacts/."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Page, Request, expect

pytestmark = pytest.mark.browser
expect.set_options(timeout=90_000)  # a compile on a shared 2-core machine can take many seconds


def _offline_guard(page: Page, base_url: str) -> list[str]:
    """Every request must go to the workbench itself; anything else is recorded and aborted."""
    outside: list[str] = []
    host = urlparse(base_url).netloc

    def check(route, request: Request) -> None:  # type: ignore[no-untyped-def]
        if urlparse(request.url).netloc != host:
            outside.append(request.url)
            route.abort()
        else:
            route.continue_()
    page.route("**/*", check)
    return outside


def test_fill_compile_pin_save_diff_download(page: Page, base_url_live: str, artifacts_dir: Path,
                                             tmp_path: Path) -> None:
    outside = _offline_guard(page, base_url_live)
    page.goto(base_url_live + "/?kind=training")
    expect(page.get_by_test_id("empty")).to_be_visible()

    # the intake, as a person fills it: units typed as text
    page.get_by_label("name", exact=True).fill("Acme GPT-3 175B")
    page.get_by_label("model.preset").fill("gpt3-175b")
    page.get_by_label("training.tokens").fill("300B")
    page.get_by_label("training.seq_len").fill("2048")
    page.get_by_label("training.global_batch_size").fill("1536")
    page.get_by_label("target.time_to_train").fill("30d")
    page.get_by_label("compute.accelerator").fill("a100-sxm-80gb")
    page.get_by_label("compute.gpus", exact=True).fill("1024")
    page.get_by_test_id("compile").click()
    expect(page.get_by_test_id("verdict")).to_contain_text("Compiles")
    expect(page.get_by_test_id("layer-facility")).to_contain_text("facility power")
    expect(page.get_by_test_id("assumed-compute.system")).to_contain_text("dgx-a100")
    expect(page.get_by_test_id("collision").filter(has_text="facility power")).to_have_count(0)  # no hall yet

    page.get_by_label("Project").fill("acme-gpt3")
    page.get_by_test_id("save").click()
    expect(page.get_by_test_id("saved")).to_contain_text("acme-gpt3 REV 01")
    expect(page.get_by_test_id("rev-label")).to_contain_text("REV 01")

    # select the facility layer, pin the hall's power: the layers recompile in place
    page.get_by_test_id("layer-facility").locator("> summary").click()
    page.get_by_label("pin facility.power", exact=True).fill("1MW")
    page.get_by_test_id("pin-facility").click()
    collision = page.get_by_test_id("collision").filter(has_text="facility power")
    expect(collision).to_contain_text("the hall delivers 1.00 MW")
    expect(page.get_by_test_id("pins")).to_contain_text("facility.power = 1MW")
    expect(page.get_by_test_id("layer-facility")).to_have_attribute("open", "")
    expect(page.get_by_test_id("layer-facility").locator("svg")).to_be_visible()  # the power bill, drawn lazily
    page.get_by_test_id("layer-facility").screenshot(path=str(artifacts_dir / "layer-view-facility.png"))
    page.screenshot(path=str(artifacts_dir / "workbench.png"), full_page=True)

    page.get_by_test_id("save").click()
    expect(page.get_by_test_id("saved")).to_contain_text("acme-gpt3 REV 02")

    # the reports of the current state
    slow = 180_000  # a PDF of ~20 pages on a shared 2-core machine
    with page.expect_download(timeout=slow) as html_dl:
        page.get_by_test_id("download-html").click(timeout=slow)
    html_file = tmp_path / "report.html"
    html_dl.value.save_as(html_file)
    html = html_file.read_text(encoding="utf-8")
    assert html.count("<svg") >= 4 and "facility power" in html and "<script" not in html
    with page.expect_download(timeout=slow) as pdf_dl:
        page.get_by_test_id("download-pdf").click(timeout=slow)
    pdf_file = tmp_path / "report.pdf"
    pdf_dl.value.save_as(pdf_file)
    assert pdf_file.read_bytes().startswith(b"%PDF")

    # REV 02 against REV 01
    page.get_by_test_id("project-link").click()
    expect(page.get_by_test_id("revisions")).to_contain_text("REV 02")
    page.get_by_label("from revision").select_option(label="REV 01")
    page.get_by_label("to revision").select_option(label="REV 02")
    page.get_by_test_id("show-diff").click()
    expect(page.get_by_test_id("diff-title")).to_have_text("REV 01 → REV 02")
    expect(page.get_by_test_id("diff-inputs")).to_contain_text("facility.power")
    expect(page.get_by_test_id("diff-inputs")).to_contain_text("1MW")
    expect(page.get_by_test_id("diff-outputs")).to_contain_text("facility power")
    assert outside == []


def test_errors_show_beside_the_form_without_a_stack_trace(page: Page, base_url_live: str) -> None:
    page.goto(base_url_live + "/?kind=training")
    page.get_by_label("model.preset").fill("gpt3-175b")
    page.get_by_label("compute.gpus", exact=True).fill("a thousand")
    page.get_by_test_id("compile").click()
    expect(page.get_by_test_id("error-field")).to_have_text("compute.gpus")
    assert "Traceback" not in page.content()


def test_yaml_paste_and_archetype_tabs(page: Page, base_url_live: str) -> None:
    page.goto(base_url_live + "/")
    expect(page.get_by_test_id("verdict")).to_be_visible()   # an example is loaded on the first page
    page.get_by_test_id("kind-inference").click()
    expect(page.get_by_test_id("kind-inference")).to_have_attribute("aria-selected", "true")
    page.locator("details.section", has_text="Paste or upload YAML").locator("summary").click()
    page.get_by_label("intake YAML").fill("kind: hpc\nname: LBM\napplication: {class: cfd_lbm}\n"
                                          "problem: {size: 512^3}\nsteps: 10000\n")
    page.get_by_test_id("compile-yaml").click()
    expect(page.get_by_test_id("kind-hpc")).to_have_attribute("aria-selected", "true")
    expect(page.get_by_test_id("layer-compute")).to_contain_text("gpus")


def test_upload_a_hugging_face_config_json(page: Page, base_url_live: str) -> None:
    from shared_data import REPO_ROOT

    page.goto(base_url_live + "/?kind=inference")
    page.get_by_label("compute.accelerator").fill("h200-sxm")
    page.locator("details.section", has_text="Upload a Hugging Face config.json").locator("summary").click()
    page.get_by_label("config.json").set_input_files(str(REPO_ROOT / "tests" / "fixtures" / "hf" / "qwen3-32b.json"))
    page.get_by_test_id("compile-hf").click()
    expect(page.get_by_test_id("note").first).to_contain_text("model read from qwen3-32b.json")
    expect(page.get_by_test_id("verdict")).to_be_visible()
    expect(page.get_by_label("model.layers", exact=True)).to_have_value("64")
