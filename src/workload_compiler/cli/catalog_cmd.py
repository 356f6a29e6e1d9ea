"""`wkc catalog [accelerators|systems|switches|nics|models] [--json]`: what the tool knows, with sources.

Peak rates are dense datasheet peaks (no sparsity); '—' marks a number the sources do not publish
(shown as unknown, never filled in from another precision). Memory is shown in GB and GiB.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any

import typer

from ..arch import presets
from ..arch.counts import param_counts
from ..catalog.loader import Catalog, load_catalog
from ..catalog.schema import Accelerator
from ..report.format import format_quantity
from ..report.layout import fitted
from ..units import GIB
from .common import out, user_errors

UNKNOWN = "—"


class Kind(StrEnum):
    accelerators = "accelerators"
    systems = "systems"
    switches = "switches"
    nics = "nics"
    models = "models"


def _num(value: float | None, scale: float, digits: int = 1) -> str:
    """value / scale with at most `digits` decimals and thousands separators; '—' when unknown."""
    if value is None:
        return UNKNOWN
    text = f"{value / scale:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _short_source(source: str, width: int = 48, first_part: bool = True) -> str:
    """The start of a citation (its first ';'-separated part), cut to `width` characters at a space:
    no word, number or address is cut in the middle (`--json` has the whole source)."""
    first = source.split(";")[0].strip() if first_part else source.strip()
    if len(first) <= width:
        return first
    head = first[: width - 2].rsplit(" ", 1)[0] if " " in first[: width - 2] else first.split(" ", 1)[0]
    return head + " …"


def _id(entry_id: str, unverified: bool) -> str:
    return f"{entry_id}?" if unverified else entry_id


Listing = tuple[str, list[str], list[list[str]]]    # title, header, rows


def _accelerators(cat: Catalog) -> Listing:
    header = ["id", "name", "memory GB", "GiB", "HBM TB/s", "BF16", "FP8", "FP4", "FP64", "TDP W", "source"]
    rows = [[_id(a.id, a.unverified), a.name, _num(a.memory_bytes, 1e9), _num(a.memory_bytes, GIB),
             _num(a.memory_bandwidth_bytes_per_s, 1e12, 3), *_peaks(a), _num(a.tdp_w, 1.0, 0),
             _short_source(a.source)] for a in cat.accelerators.values()]
    return "Accelerators (dense peak TFLOP/s; ? = unverified source)", header, rows


def _peaks(a: Accelerator) -> list[str]:
    p = a.peak_flops
    return [_num(p.bf16, 1e12), _num(p.fp8, 1e12), _num(p.fp4, 1e12), _num(p.fp64, 1e12)]


def _systems(cat: Catalog) -> Listing:
    header = ["id", "accelerator", "GPUs/node", "scale-up GPUs", "compute NICs", "CPU cores", "host mem GB",
              "node kW", "rack kW", "cooling", "source"]
    rows = [[_id(s.id, s.unverified), s.accelerator, str(s.gpus_per_node), str(s.scale_up_domain_gpus),
             f"{s.scale_out_nics_per_node} x {_num(s.scale_out_nic_bits_per_s, 1e9, 0)}G",
             _num(s.cpu_cores_per_node, 1.0, 0), _num(s.host_memory_bytes_per_node, 1e9, 0),
             _num(s.node_max_power_w, 1e3, 2), _num(s.rack_power_w, 1e3), s.cooling, _short_source(s.source)]
            for s in cat.systems.values()]
    return "Systems (node = what holds gpus_per_node; ? = unverified source)", header, rows


def _switches(cat: Catalog) -> Listing:
    header = ["id", "name", "ports", "port Gb/s", "capacity Tb/s", "power W", "role", "source"]
    rows = [[_id(w.id, w.unverified), w.name, str(w.ports), _num(w.port_bits_per_s, 1e9, 0),
             _num(w.switching_bits_per_s, 1e12), _num(w.power_w, 1.0, 0), w.role, _short_source(w.source)]
            for w in cat.switches.values()]
    return "Switches (? = unverified source)", header, rows


def _nics(cat: Catalog) -> Listing:
    def busbw(bw: tuple[float, float] | None) -> str:
        return UNKNOWN if bw is None else f"{_num(bw[0], 1e9)}-{_num(bw[1], 1e9)}"

    header = ["id", "name", "ports", "port Gb/s", "NCCL busbw GB/s", "source"]
    rows = [[_id(n.id, n.unverified), n.name, str(n.ports), _num(n.port_bits_per_s, 1e9, 0),
             busbw(n.nccl_busbw_bytes_per_s), _short_source(n.source)] for n in cat.nics.values()]
    return "NICs (? = unverified source)", header, rows


def _presets(_: Catalog) -> Listing:
    header = ["id", "params", "active", "layers", "hidden", "experts", "source"]
    rows = [[r["id"], format_quantity(r["params"], "count"), format_quantity(r["active_params"], "count"),
             str(r["layers"]), f"{r['hidden_size']:,}",
             f"{r['moe_experts']} top-{r['moe_top_k']}" if r["moe_experts"] else "—",
             _short_source(str(r["source"]), 90, first_part=False)] for r in _models()]
    return "Model presets", header, rows


def _models() -> list[dict[str, Any]]:
    """The model presets (catalog/data/models/): the figures a user picks one by, and its source."""
    out: list[dict[str, Any]] = []
    for pid in presets.list_presets():
        arch = presets.preset_arch(pid)
        counts = param_counts(arch)
        out.append({"id": pid, "params": counts.total, "active_params": counts.active, "layers": arch.layers,
                    "hidden_size": arch.hidden_size, "moe_experts": arch.moe_experts or 0,
                    "moe_top_k": arch.moe_top_k or 0, "source": presets.preset_source(pid)})
    return out


def _json(cat: Catalog, kinds: list[Kind]) -> dict[str, Any]:
    doc: dict[str, Any] = {"schema_version": 1}
    for kind in kinds:
        if kind is Kind.models:
            doc["models"] = _models()
        else:
            entries = getattr(cat, kind.value)
            doc[kind.value] = [e.model_dump(mode="json") for e in entries.values()]
    return doc


_KindArg = Annotated[Kind | None, typer.Argument(help="what to list (default: accelerators and systems)")]


def catalog(
    kind: _KindArg = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of tables")] = False,
) -> None:
    """List the hardware catalog (accelerators, systems, switches, NICs) or the model presets."""
    with user_errors():
        kinds = [kind] if kind is not None else [Kind.accelerators, Kind.systems]
        cat = load_catalog()
        if as_json:
            print(json.dumps(_json(cat, kinds), indent=2, sort_keys=True))  # stdout is data: no markup
            return
        listings = {Kind.accelerators: _accelerators, Kind.systems: _systems, Kind.switches: _switches,
                    Kind.nics: _nics, Kind.models: _presets}
        console = out.get()
        for k in kinds:
            # a table where the terminal holds it, else a block an entry: numbers are never cut
            title, header, rows = listings[k](cat)
            console.print(fitted(header, rows, console.width, [title]))


def register(app: typer.Typer) -> None:
    app.command("catalog")(catalog)
