"""The HTML report: one self-contained file (CSS and SVG plots inline, no script, nothing fetched)
that a solutions architect can mail, open offline or turn into the PDF (report/pdf.py).

    html = render_html(spec, intake=intake_mapping, revision="REV 02")
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import yaml
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PackageLoader, select_autoescape

from ..spine.result import SystemSpec
from ..versions import versions
from .figures import figures
from .summary import search_warnings
from .view import alternative_rows, assumption_rows, extra_sections, kpis, panels, verdict

TEMPLATES = "report/templates"


def template_dirs() -> list[str]:
    """The report's template folder, for environments (the web app's) that add their own."""
    return [str(resources.files("workload_compiler").joinpath(TEMPLATES))]


@functools.cache
def environment() -> Environment:
    env = Environment(loader=ChoiceLoader([PackageLoader("workload_compiler", TEMPLATES),
                                           FileSystemLoader(template_dirs())]),
                      autoescape=select_autoescape(["html", "j2"], default_for_string=True),
                      trim_blocks=False, lstrip_blocks=False)
    return env


@functools.cache
def stylesheet() -> str:
    return resources.files("workload_compiler").joinpath(f"{TEMPLATES}/_style.css").read_text(encoding="utf-8")


def intake_text(intake: Any) -> str:
    """The intake as YAML, keys in the order the user gave them."""
    if intake is None:
        return ""
    return yaml.safe_dump(intake, sort_keys=False, allow_unicode=True, default_flow_style=False)


def _css_string(text: str) -> str:
    """Text safe inside a CSS string in a <style> element (the PDF's running footer)."""
    return "".join(ch if ch.isalnum() or ch in " .,:;()-+_/" else f"\\{ord(ch):x} " for ch in text)


def report_context(spec: SystemSpec, *, intake: Any = None, revision: str | None = None,
                   saved_at: str | None = None) -> dict[str, Any]:
    title = spec.name or f"{spec.kind} workload"
    return {"spec": spec, "title": title, "title_css": _css_string(title), "verdict": verdict(spec),
            "kpis": kpis(spec), "warnings": search_warnings(spec), "panels": panels(spec),
            "alternatives": alternative_rows(spec),
            "assumptions": assumption_rows(spec), "extra_sections": extra_sections(spec),
            "figures": {f.name: f for f in figures(spec)},
            "intake_yaml": intake_text(intake), "versions": versions(), "revision": revision,
            "saved_at": saved_at, "css": stylesheet()}


def render_html(spec: SystemSpec, *, intake: Any = None, revision: str | None = None,
                saved_at: str | None = None) -> str:
    """The report as one HTML document (str)."""
    return environment().get_template("report.html.j2").render(
        report_context(spec, intake=intake, revision=revision, saved_at=saved_at))


__all__ = ["environment", "render_html", "report_context", "stylesheet", "template_dirs"]
