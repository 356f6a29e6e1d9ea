"""The two ways a compile can end without a result: bad input, or a workload that cannot be met.

Bad input is the user's to fix (exit code 2). Infeasible is an *answer* (exit code 3): the
workload is valid but no configuration within the pinned constraints satisfies it; the binding
constraint is named.
"""

from __future__ import annotations

from typing import Any


class WkcError(Exception):
    """Base class of every error the tool raises on purpose."""

    exit_code = 1


class InputError(WkcError, ValueError):
    """A field's value is not allowed. The message names the field, the value and what is allowed."""

    exit_code = 2

    def __init__(self, field: str, value: Any, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field}: {value!r} is not allowed; {allowed}")


class Infeasible(WkcError):
    """The workload is valid but cannot be met; `binding` names the constraint that binds."""

    exit_code = 3

    def __init__(self, binding: str, detail: str) -> None:
        self.binding = binding
        self.detail = detail
        super().__init__(f"infeasible ({binding}): {detail}")
