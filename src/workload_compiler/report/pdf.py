"""The PDF report: WeasyPrint lays out the same HTML as report/html.py (A4, page numbers from the
report's @page rules); nothing is fetched while rendering."""

from __future__ import annotations

from typing import Any

from ..spine.result import SystemSpec
from .html import render_html


def _no_fetch(url: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The report is self-contained: any URL it would fetch is a bug, refused rather than fetched."""
    raise ValueError(f"the report must not fetch {url!r}")


def html_to_pdf(html: str) -> bytes:
    """PDF bytes from a self-contained HTML document."""
    from weasyprint import HTML  # type: ignore[import-untyped]

    pdf = HTML(string=html, url_fetcher=_no_fetch).write_pdf()
    assert pdf is not None  # write_pdf without a target returns the bytes
    return bytes(pdf)


def render_pdf(spec: SystemSpec, *, intake: Any = None, revision: str | None = None,
               saved_at: str | None = None) -> bytes:
    return html_to_pdf(render_html(spec, intake=intake, revision=revision, saved_at=saved_at))


__all__ = ["html_to_pdf", "render_pdf"]
