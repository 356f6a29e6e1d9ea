"""Writing the HTML and PDF reports that `wkc compile --html/--pdf` asks for."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..extras import require_extra
from ..intake.load import read_intake
from ..spine.result import SystemSpec
from .common import err


def _write(path: Path, data: bytes, option: str) -> None:
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise InputError(option, str(path), f"a writable file path ({exc.strerror})") from None
    err.print(f"wrote {path} ({len(data):,} bytes)", highlight=False)


def write_reports(spec: SystemSpec, intake_file: Path, *, html: Path | None, pdf: Path | None) -> None:
    require_extra("pdf" if pdf is not None else "report")
    from ..report.html import render_html

    text = render_html(spec, intake=read_intake(intake_file))
    if html is not None:
        _write(html, text.encode("utf-8"), "--html")
    if pdf is not None:
        from ..report.pdf import html_to_pdf

        _write(pdf, html_to_pdf(text), "--pdf")
