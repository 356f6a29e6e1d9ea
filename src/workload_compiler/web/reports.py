"""Report downloads from the page: the same HTML, PDF and Markdown as `wkc compile --html/--pdf/--md`."""

from __future__ import annotations

import re
from typing import Any

from fastapi.responses import Response

from ..errors import InputError
from ..spine.result import SystemSpec
from ..store.revisions import RevisionInfo

FORMATS = {"html": "text/html; charset=utf-8", "pdf": "application/pdf", "md": "text/markdown; charset=utf-8"}


def filename(spec: SystemSpec, info: RevisionInfo | None, fmt: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", (info.project if info else spec.name) or spec.kind).strip("-")[:60]
    suffix = f"-rev{info.number:02d}" if info else ""
    return f"{stem or 'workload'}{suffix}.{fmt}"


def report_response(spec: SystemSpec, intake: dict[str, Any], fmt: str, info: RevisionInfo | None) -> Response:
    if fmt not in FORMATS:
        raise InputError("format", fmt, f"one of: {', '.join(FORMATS)}")
    label = info.label if info else None
    saved = info.created_at.strftime("%Y-%m-%d %H:%M UTC") if info else None
    if fmt == "md":
        from ..report.markdown import render_markdown
        body: bytes = render_markdown(spec).encode("utf-8")
    else:
        from ..report.html import render_html
        html = render_html(spec, intake=intake, revision=label, saved_at=saved)
        if fmt == "pdf":
            from ..report.pdf import html_to_pdf
            body = html_to_pdf(html)
        else:
            body = html.encode("utf-8")
    return Response(body, media_type=FORMATS[fmt],
                    headers={"Content-Disposition": f'attachment; filename="{filename(spec, info, fmt)}"'})


__all__ = ["FORMATS", "report_response"]
