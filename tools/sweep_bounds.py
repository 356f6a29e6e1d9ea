"""Every numeric intake field at the edges of its documented range, on every bundled workload of its
kind: the smallest value the schema accepts (5e-324 where only > 0 is asked), the largest, and
one step outside each. The fuzz (tools/fuzz_intakes.py) samples values; this walks the bounds
systematically. Each outcome must be a result with finite numbers or one of our errors.

    python tools/sweep_bounds.py [--kind training] [--limit N]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from intake_mutations import base_intakes, non_finite

SCHEMA = Path(__file__).resolve().parents[1] / "src" / "workload_compiler" / "schemas" / "intake.schema.json"


_QUANTITY_BOUNDS = {"gt": "exclusiveMinimum", "ge": "minimum", "le": "maximum", "lt": "exclusiveMaximum"}


def _numeric(prop: dict[str, Any]) -> dict[str, Any] | None:
    """The bounds of a property that takes a number (directly, or as one branch of anyOf); a unit
    quantity ("400Gb/s" or a number, `x-quantity`) carries its bounds as gt/ge/le/lt."""
    for p in [prop, *prop.get("anyOf", [])]:
        if "x-quantity" in p:
            b = {_QUANTITY_BOUNDS[k]: v for k, v in p.items() if k in _QUANTITY_BOUNDS}
            if b:
                return {"type": "number", **b}
        if p.get("type") in ("number", "integer") and any(k in p for k in ("minimum", "exclusiveMinimum",
                                                                          "maximum", "exclusiveMaximum")):
            return p
    return None


def numeric_paths(defs: dict[str, Any], name: str, prefix: str = "",
                  depth: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """(dotted path, bounds) of every bounded numeric field reachable from the model `name`."""
    out: list[tuple[str, dict[str, Any]]] = []
    if depth > 4:
        return out
    for key, prop in defs[name].get("properties", {}).items():
        path = f"{prefix}{key}"
        num = _numeric(prop)
        if num is not None:
            out.append((path, num))
            continue
        for p in [prop, *prop.get("anyOf", []), *prop.get("allOf", [])]:
            ref = p.get("$ref", "")
            if ref.startswith("#/$defs/"):
                out += numeric_paths(defs, ref.split("/")[-1], f"{path}.", depth + 1)
    return out


def edge_values(b: dict[str, Any]) -> list[float]:
    is_int = b.get("type") == "integer"
    vals: list[float] = []
    if "exclusiveMinimum" in b:
        lo = b["exclusiveMinimum"]
        vals += [lo + 1 if is_int else (5e-324 if lo == 0 else lo * (1 + 1e-12) + 1e-300), lo]
    if "minimum" in b:
        vals += [b["minimum"], b["minimum"] - 1 if is_int else b["minimum"] * (1 - 1e-9) - 1e-300]
    if "maximum" in b:
        vals += [b["maximum"], b["maximum"] + 1 if is_int else b["maximum"] * (1 + 1e-9)]
    if "exclusiveMaximum" in b:
        hi = b["exclusiveMaximum"]
        vals += [hi - 1 if is_int else hi * (1 - 1e-12), hi]
    return vals


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    keys = path.split(".")
    for k in keys[:-1]:
        nxt = data.get(k)
        if not isinstance(nxt, dict):
            nxt = data[k] = {}
        data = nxt
    data[keys[-1]] = value


def run(intake: dict[str, Any]) -> tuple[str, str]:
    from workload_compiler import compile_workload
    from workload_compiler.errors import InputError, WorkloadError
    try:
        doc = compile_workload(intake).model_dump(mode="json")
        bad = non_finite(doc)
        if bad:
            return "non_finite", bad[0]
        json.dumps(doc, allow_nan=False)
        return "result", ""
    except InputError:
        return "input_error", ""
    except WorkloadError as exc:
        return "our_error", type(exc).__name__
    except Exception as exc:  # counting what is not ours is the point
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = f"{Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_frame.f_code.co_name}" if tb else "?"
        return "not_ours", f"{type(exc).__name__} in {where}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", default=None)
    ap.add_argument("--limit", type=int, default=0, help="stop after N cases (0: all)")
    ap.add_argument("--per-kind", type=int, default=2, help="bundled workloads of each kind to vary (0: all)")
    args = ap.parse_args()
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    defs = schema["$defs"]
    kinds = {"training": "TrainingWorkload", "inference": "InferenceWorkload", "hpc": "HpcWorkload",
             "generic": "GenericWorkload"}
    outcomes: Counter[str] = Counter()
    bad: list[str] = []
    n = 0
    taken: Counter[str] = Counter()
    for base in base_intakes():
        kind = str(base.get("kind"))
        if kind not in kinds or (args.kind and kind != args.kind):
            continue
        taken[kind] += 1
        if args.per_kind and taken[kind] > args.per_kind:
            continue
        for path, bounds in numeric_paths(defs, kinds[kind]):
            for value in edge_values(bounds):
                case = copy.deepcopy(base)
                set_path(case, path, value)
                outcome, where = run(case)
                outcomes[outcome] += 1
                n += 1
                if outcome in ("not_ours", "non_finite"):
                    bad.append(f"{base.get('name')}: {path} = {value!r}: {outcome} {where}")
                if args.limit and n >= args.limit:
                    break
    print(json.dumps({"cases": n, "outcomes": outcomes, "bad": bad}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
