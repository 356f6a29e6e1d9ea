"""The two ways a compile can end without a result: bad input, or a workload that cannot be met.

Bad input is the user's to fix (exit code 2). Infeasible is an *answer* (exit code 3): the
workload is valid but no configuration within the pinned constraints satisfies it; the binding
constraint is named.
"""

from __future__ import annotations

from collections.abc import Sequence
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


class CatalogGap(InputError):
    """A number the catalog does not hold (not published, or unknown in its sources) that one part
    of the specification needs. The compile leaves that part "not sized" with this reason (the
    rest of the spec is still built); it never fails a compile. An InputError (exit 2) only where
    a caller outside the compile lets it escape.

    `missing` lists the catalog paths (`systems.dgx-b300.node_max_power_w`); `needed_for` says
    what they size (`facility power`, `the compute layer`).
    """

    def __init__(self, missing: Sequence[str], needed_for: str, *, field: str = "compute.accelerator",
                 value: Any = None, hint: str = "") -> None:
        self.missing = tuple(missing)
        self.needed_for = needed_for
        self.hint = hint or "not published, or unknown in its sources: add it in a user catalog directory to size it"
        super().__init__(field, value, f"a catalog entry with {', '.join(self.missing)} "
                                       f"(needed for {needed_for}); {self.hint}")

    @property
    def reason(self) -> str:
        """The sentence a "not sized" section carries."""
        return (f"not sized: {self.needed_for} needs {', '.join(self.missing)}, which the catalog does not "
                f"hold; {self.hint}")


class Infeasible(WkcError):
    """The workload is valid but cannot be met; `binding` names the constraint that binds."""

    exit_code = 3

    def __init__(self, binding: str, detail: str) -> None:
        self.binding = binding
        self.detail = detail
        super().__init__(f"infeasible ({binding}): {detail}")
