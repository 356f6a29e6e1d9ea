"""What every command shares: the consoles, and turning our errors into messages and exit codes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console

from ..errors import Infeasible, InputError, WkcError

out = Console()
err = Console(stderr=True, soft_wrap=True)

T = TypeVar("T")


def describe_validation_error(exc: ValidationError) -> str:
    """One line per problem: the field path, the value, what is allowed."""
    lines = []
    for e in exc.errors():
        path = ".".join(str(p) for p in e["loc"]) or "(root)"
        value = e.get("input")
        shown = "" if isinstance(value, dict) else f" {value!r}"
        lines.append(f"{path}:{shown} {e['msg']}")
    return "\n".join(lines)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the tool's own errors into a clear message and the documented exit code; no traceback."""
    try:
        yield
    except InputError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(2) from None
    except ValidationError as exc:
        err.print(f"[bold red]error:[/] invalid input\n{describe_validation_error(exc)}", highlight=False)
        raise typer.Exit(2) from None
    except Infeasible as exc:
        err.print(f"[bold yellow]infeasible[/] ({exc.binding}): {exc.detail}", highlight=False)
        raise typer.Exit(3) from None
    except WkcError as exc:
        err.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(exc.exit_code) from None
