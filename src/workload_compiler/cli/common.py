"""What every command shares: the consoles, and turning our errors into messages and exit codes.

Exit codes: 0 success, 2 bad input (field, value, what is allowed), 3 infeasible (what binds),
1 anything else. A message names the input as the user wrote it: an intake key for a file, the
flag for a command-line option (`--power`, not `power_w`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

import typer

from ..errors import InfeasibleError, InputError, WorkloadError

if TYPE_CHECKING:
    from rich.console import Console


class _LazyConsole:
    """A rich Console made when output is written: importing rich costs start-up time that
    `--help` and errors raised before any output do not need. A new one each time, so it reads the
    terminal's width (and COLUMNS) of the command being run."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr

    def get(self) -> Console:
        from rich.console import Console

        return Console(stderr=True, soft_wrap=True) if self._stderr else Console()

    def print(self, *objects: Any, **kwargs: Any) -> None:
        self.get().print(*objects, **kwargs)

    @property
    def is_terminal(self) -> bool:
        return self.get().is_terminal


out = _LazyConsole(stderr=False)
err = _LazyConsole(stderr=True)


def print_json(doc: Any) -> None:
    """A document on stdout as strict JSON: no Infinity or NaN (an unreachable value is null)."""
    import json

    from ..spine.finite import finite_json

    print(json.dumps(finite_json(doc), indent=2, allow_nan=False))


def _say(label: str, style: str, message: str) -> None:
    from rich.text import Text

    text = Text(f"{label} ", style=style)
    text.append(message)   # the message is plain text: a value such as "[x]" is not rich markup
    err.get().print(text, highlight=False)


@contextmanager
def user_errors(flags: Mapping[str, str] | None = None) -> Iterator[None]:
    """Turn the tool's own errors into a clear message and the documented exit code; no traceback.
    `flags` maps a model's field names to the command's options (`{"power_w": "--power"}`)."""
    from pydantic import ValidationError

    from ..intake.problems import input_error

    try:
        yield
    except (InputError, ValidationError) as exc:
        error = input_error(exc) if isinstance(exc, ValidationError) else exc
        if flags:
            error = error.renamed(dict(flags))
        _say("error:", "bold red", str(error))
        raise typer.Exit(2) from None
    except InfeasibleError as exc:
        _say("infeasible", "bold yellow", f"({exc.binding}): {exc.detail}")
        raise typer.Exit(3) from None
    except WorkloadError as exc:
        _say("error:", "bold red", str(exc))
        raise typer.Exit(exc.exit_code) from None


def search_cache_off(no_cache: bool) -> AbstractContextManager[None]:
    """`--no-cache`: the planner's searches run, neither read from nor kept on disk."""
    if not no_cache:
        return nullcontext()
    from ..planner.search_cache import disabled

    return disabled()

