"""Optional features live in extras (`pip install 'workload-compiler[web]'`); a command that needs
one that is not installed says which, instead of failing on an ImportError."""

from __future__ import annotations

import importlib.util

from .errors import WkcError

# extra -> the modules it brings (the first missing one is named in the message)
EXTRAS: dict[str, tuple[str, ...]] = {
    "report": ("jinja2", "matplotlib"),
    "pdf": ("jinja2", "matplotlib", "weasyprint"),
    "store": ("sqlalchemy", "alembic", "platformdirs"),
    "web": ("fastapi", "uvicorn", "jinja2", "jinja2_fragments", "multipart", "sqlalchemy", "alembic", "matplotlib"),
}


class MissingExtra(WkcError):
    exit_code = 2

    def __init__(self, extra: str, module: str) -> None:
        self.extra, self.module = extra, module
        super().__init__(f"this needs the optional '{extra}' dependencies (module {module!r} is not installed): "
                         f"pip install 'workload-compiler[{extra}]'")


def require_extra(extra: str) -> None:
    """Raise MissingExtra naming the install command when a module of `extra` is absent."""
    for module in EXTRAS[extra]:
        if importlib.util.find_spec(module) is None:
            raise MissingExtra(extra, module)


__all__ = ["EXTRAS", "MissingExtra", "require_extra"]
