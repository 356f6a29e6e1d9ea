"""Reading YAML a user hands us, with limits: a size, a nesting depth, a node count after alias
expansion (a 500-byte "billion laughs" document expands to billions of nodes), and no duplicate
keys (a second `compute:` would silently replace the first).

The limits are checked on the parser's event stream, before any Python object is built, so a
refused document costs a few milliseconds and is never expanded, printed or recursed into.
"""

from __future__ import annotations

from typing import Any

import yaml

from ..errors import Described, InputError

MAX_BYTES = 4 * 2**20      # an intake is a few kB; 4 MiB leaves room for long token-length sample lists
MAX_DEPTH = 32             # the deepest intake key is 4 levels down; 32 leaves room for lists of mappings
MAX_NODES = 200_000        # scalars + collections after alias expansion (a 100k-sample list fits)

_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_BASE):  # type: ignore[misc]
    """The safe loader, refusing a key given twice in one mapping (merge keys `<<` aside)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                continue
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _Duplicate(key, seen[key], line)
            seen[key] = line
        result: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return result


class _Duplicate(Exception):
    def __init__(self, key: str, first: int, again: int) -> None:
        super().__init__(key)
        self.key, self.first, self.again = key, first, again


def _check_shape(text: str, where: str) -> None:
    """Depth and expanded size from the event stream (no objects, no recursion)."""
    stack: list[list[Any]] = []      # [anchor, expanded node count] per open collection
    anchors: dict[str, int] = {}
    total = 0

    def add(n: int) -> None:
        nonlocal total
        if stack:
            stack[-1][1] += n
        else:
            total += n
        if total + sum(frame[1] for frame in stack) > MAX_NODES:
            raise InputError(where, Described(f"refused: more than {MAX_NODES:,} values after aliases are expanded"),
                             f"at most {MAX_NODES:,} values; aliases (*name) that repeat large "
                             "sections are expanded and count every time")

    for event in yaml.parse(text, Loader=_BASE):
        if isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            stack.append([event.anchor, 1])
            if len(stack) > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else 0
                raise InputError(where, Described(f"refused: nested deeper than {MAX_DEPTH} levels (line {line})"),
                                 f"at most {MAX_DEPTH} levels of nested lists and mappings")
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            anchor, size = stack.pop()
            if anchor is not None:
                anchors[anchor] = size
            add(size)
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor is not None:
                anchors[event.anchor] = 1
            add(1)
        elif isinstance(event, yaml.AliasEvent):
            add(anchors.get(event.anchor, 1))


def _line(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""


def parse_yaml(text: str, where: str = "FILE") -> Any:
    """The value a YAML document holds, within the limits; `where` names the input in errors."""
    if len(text) > MAX_BYTES:
        raise InputError(where, Described(f"refused: {len(text):,} characters"),
                         f"an intake of at most {MAX_BYTES // 2**20} MiB")
    try:
        _check_shape(text, where)
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except _Duplicate as exc:
        raise InputError(where, Described(f"key {exc.key!r} given twice (lines {exc.first} and {exc.again})"),
                         "each key once per section; merge the two entries") from None
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or exc.__class__.__name__
        mark = getattr(exc, "problem_mark", None)
        line = text.splitlines()[mark.line] if mark is not None and mark.line < len(text.splitlines()) else ""
        # the one cause a newcomer does not see: the editor indented with a tab
        hint = "; YAML indents with spaces, and this line starts with a tab" if line.startswith("\t") else ""
        raise InputError(where, Described(f"YAML does not parse{_line(exc)}: {problem}{hint}"),
                         "well-formed YAML") from None
    except RecursionError:  # pragma: no cover - the depth limit is checked first
        raise InputError(where, Described("refused: nested too deeply"), f"at most {MAX_DEPTH} levels") from None


def read_text(path: str, where: str | None = None) -> str:
    """A file's text, read to at most MAX_BYTES (a device or a huge file is refused, not read)."""
    from pathlib import Path

    p = Path(path)
    where = where or str(p)
    if "\x00" in str(path):   # the OS cannot name it; pathlib answers False or raises ValueError
        raise InputError("FILE", path, "a path to a YAML intake file (this one holds a NUL character)")
    try:
        is_dir = p.is_dir()
    except OSError as exc:   # a name too long, a loop of links
        raise InputError(where, Described(f"cannot be read ({exc.strerror or exc})"), "a readable file") from None
    if is_dir:
        raise InputError(where, Described("a directory"), "a YAML intake file")
    try:
        with p.open("rb") as f:
            data = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise InputError(where, Described("no such file"), "an existing YAML intake file") from None
    except PermissionError:
        raise InputError(where, Described("permission denied"), "a file this user may read") from None
    except (OSError, ValueError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise InputError(where, Described(f"cannot be read ({why})"), "a readable file") from None
    if len(data) > MAX_BYTES:
        raise InputError(where, Described(f"refused: more than {MAX_BYTES // 2**20} MiB"),
                         f"an intake of at most {MAX_BYTES // 2**20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(where, Described("holds bytes that are not UTF-8 text"), "a UTF-8 YAML file") from None


__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "parse_yaml", "read_text"]
