"""`wkc compile FILE --html/--pdf`: one self-contained HTML file with inline SVG plots, and a PDF
of the same report whose pages render to images that are not blank."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from shared_data import REPO_ROOT

GPT3 = REPO_ROOT / "examples" / "gpt3-175b-a100.yaml"


def wkc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workload_compiler.cli.main", *args], capture_output=True,
                          text=True, timeout=300, cwd=REPO_ROOT)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("reports")
    html, pdf = folder / "gpt3.html", folder / "gpt3.pdf"
    run = wkc("compile", str(GPT3), "--html", str(html), "--pdf", str(pdf))
    assert run.returncode == 0, run.stderr
    return html, pdf


def test_the_html_report_is_one_self_contained_file(reports: tuple[Path, Path]) -> None:
    text = reports[0].read_text(encoding="utf-8")
    assert text.count("<svg") >= 4           # step, memory, power, alternatives
    for title in ("Where a step goes", "Memory per GPU by term", "Power bill", "Alternatives: time x cost"):
        assert title in text
    assert re.findall(r'(?:src|href)="(?!#)', text) == []   # nothing to fetch (only in-document SVG refs)
    assert "<script" not in text and "@import" not in text
    assert "Assumptions requiring validation" in text and "deadline" in text


def test_the_pdf_pages_render_and_are_not_blank(reports: tuple[Path, Path]) -> None:
    pdf = pdfium.PdfDocument(reports[1])
    assert len(pdf) >= 3
    for index in range(len(pdf)):
        image = pdf[index].render(scale=0.5).to_pil().convert("L")
        histogram = image.histogram()
        ink = sum(histogram[:200]) / sum(histogram)   # share of pixels darker than near-white
        assert ink > (0.02 if index < 2 else 0.001), f"page {index + 1} is blank ({ink:.4f})"
        assert image.getextrema()[0] < 160              # dark ink (text), not a faint smudge


def test_pdftoppm_renders_the_first_page(reports: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil
    if not shutil.which("pdftoppm"):
        from components import missing
        missing("poppler-utils (pdftoppm)")
    subprocess.run(["pdftoppm", "-r", "40", "-png", "-f", "1", "-l", "1", str(reports[1]), str(tmp_path / "p")],
                   check=True, timeout=120)
    pages = list(tmp_path.glob("p*.png"))
    assert pages and pages[0].stat().st_size > 5_000


def test_report_to_an_unwritable_path_is_an_input_error(tmp_path: Path) -> None:
    run = wkc("compile", str(GPT3), "--html", str(tmp_path / "missing" / "x.html"))
    assert run.returncode == 2 and "--html" in run.stderr and "Traceback" not in run.stderr


def test_a_list_of_records_takes_the_whole_width(reports: tuple[Path, Path]) -> None:
    """A list of records (readiness checks, MIG profiles) is a table of its own row across the three
    columns, not nested in the value column: nested, its columns wrapped a word a line and the small
    MIG example's PDF ran to 72 pages (27-32 now)."""
    text = reports[0].read_text(encoding="utf-8")
    tables = [m.start() for m in re.finditer(r'<table class="records">', text)]
    assert tables
    for at in tables:
        row = text.rfind("<tr", 0, at)
        assert text.startswith('<tr class="records-row"><td colspan="3"', row), text[row:at + 40]
