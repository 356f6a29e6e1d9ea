"""The two ways a compile can end without a result: bad input, or a workload that cannot be met.

    WorkloadError            every error the tool raises on purpose (exit code 1)
      InputError             a value is not allowed: field, value, what is allowed (exit code 2)
      InfeasibleError        valid, but no configuration meets it: the binding constraint (exit code 3)

`compile_workload` never raises `InfeasibleError`: it returns `feasible: false` with the binding
constraint. Inner passes raise it and the spine turns it into that result. `WkcError` and
`Infeasible` are the older names, kept as aliases.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

VALUE_CHARS = 60   # a value is shown to this many characters: a message never prints a whole document


FIELD_CHARS = 200   # a field or a path as long as a file name may be (a fuzzed 5,000-character path is cut)


def shown(value: Any, limit: int = VALUE_CHARS) -> str:
    """A short, safe rendering of a user's value: a mapping or list is named by its size, never
    expanded (an alias-bombed YAML list must not be printed), long text is cut."""
    if value is None:
        return "null (an empty value)"
    if isinstance(value, dict):
        return f"a mapping of {len(value)} key(s)" if value else "an empty mapping"
    if isinstance(value, list | tuple | set):
        return f"a list of {len(value)} item(s)" if value else "an empty list"
    if isinstance(value, float):
        return f"{value:g}" if abs(value) >= 1e-4 or value == 0 else f"{value:.3g}"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def canonical_id(value: str | None) -> str | None:
    """A user's name of a catalog or choice id as the ids are kept (lower case, no surrounding space):
    'Llama3-8B', 'DLC', 'Training' as people write them."""
    return value.strip().lower() if value is not None else None


def near_miss(value: Any, options: Iterable[str]) -> str:
    """"did you mean 'b'? " when `value` is a near miss of one of `options` (in any letter case:
    'LLAMA3-8BX' is as near 'llama3-8b' as 'llama3-8bx'), else ""."""
    import difflib

    folded = {o.casefold(): o for o in options}
    near = difflib.get_close_matches(value.casefold(), folded, n=1, cutoff=0.6) if isinstance(value, str) else []
    return f"did you mean {folded[near[0]]!r}? " if near else ""


def one_of(value: Any, options: Iterable[str]) -> str:
    """"one of: a, b, c", led by "did you mean 'b'?" when the value is a near miss of one."""
    names = sorted(options)
    return near_miss(value, names) + "one of: " + ", ".join(names)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where, what was given, what is allowed."""

    field: str
    value: Any
    allowed: str

    def __str__(self) -> str:
        if self.value is MISSING or self.value is None:   # None: not given (or given as null)
            given = "missing"
        elif self.value is UNKNOWN_KEY:
            given = "unknown key"
        elif isinstance(self.value, Described):
            given = str(self.value)
        else:
            given = f"{shown(self.value)} is not allowed"
        field = self.field if len(self.field) <= FIELD_CHARS else self.field[: FIELD_CHARS - 1] + "…"
        return f"{field}: {given}; {self.allowed}"


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


class Described(str):
    """A value already put in words ("a document nested deeper than 32 levels"), shown as is."""


MISSING: Any = _Marker("missing")          # the value of a required field that was not given
UNKNOWN_KEY: Any = _Marker("unknown key")  # the "value" of a key the schema does not have


class WorkloadError(Exception):
    """Base class of every error the tool raises on purpose."""

    exit_code = 1


class InputError(WorkloadError, ValueError):
    """A field's value is not allowed. The message names the field, the value and what is allowed;
    `problems` lists every problem found (the first is `field`, `value`, `allowed`)."""

    exit_code = 2

    def __init__(self, field: str, value: Any, allowed: str, *, problems: list[Problem] | None = None) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        self.problems = problems or [Problem(field, value, allowed)]
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def of(cls, problems: list[Problem]) -> InputError:
        first = problems[0]
        return cls(first.field, first.value, first.allowed, problems=problems)

    def renamed(self, names: dict[str, str]) -> InputError:
        """The same error with fields renamed (`power_w` -> `--power` at the command line)."""
        def name(field: str) -> str:
            # the longest dotted prefix that has a name: `serving.ttft.p99` is what `--ttft` gave
            parts = field.split(".")
            for n in range(len(parts), 0, -1):
                head, rest = ".".join(parts[:n]), ".".join(parts[n:])
                if head in names:
                    new = names[head]
                    return new if not rest or new.startswith("--") else f"{new}.{rest}"
            return field
        return InputError.of([Problem(name(p.field), p.value, p.allowed) for p in self.problems])


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


class InfeasibleError(WorkloadError):
    """The workload is valid but cannot be met; `binding` names the constraint that binds."""

    exit_code = 3

    def __init__(self, binding: str, detail: str) -> None:
        self.binding = binding
        self.detail = detail
        super().__init__(f"infeasible ({binding}): {detail}")


WkcError = WorkloadError
Infeasible = InfeasibleError

__all__ = ["MISSING", "UNKNOWN_KEY", "CatalogGap", "Described", "Infeasible", "InfeasibleError", "InputError",
           "Problem", "WkcError", "WorkloadError", "one_of", "shown"]
