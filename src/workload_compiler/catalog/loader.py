"""Load the hardware catalog (package YAML under catalog/data/, plus an optional user directory).

Layout of a catalog directory: `*.yaml` files, each a mapping with some of the sections
`accelerators`, `systems`, `switches`, `nics` (lists of entries with an `id`), `aliases` (name ->
id, for the kind of the file's entries), `default_systems` (accelerator id -> system id) and
reference tables (`superpod_scalable_units`). The package directory is shared with other catalogs
(facility, models), so only HARDWARE_FILES are read there; in a user directory every `*.yaml` file
is read and sections that belong to other catalogs are ignored. Sub-directories are not read.

A user directory with the same layout overrides package entries field by field (an entry with a
known id is merged over the package entry; `peak_flops` merges per precision) or adds new ones.
Names are matched after lower-casing and turning '_' and runs of spaces into '-'; anything else goes
through the explicit `aliases` tables, never fuzzy matching.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import CatalogGap, InputError, one_of
from ..intake.problems import input_error
from ..paths import existing_directory
from ..perf.layout import Hardware, MeasuredRates
from .schema import Accelerator, Nic, Switch, System

DATA_DIR = Path(__file__).parent / "data"

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # C parser: ~10x faster

_KINDS: dict[str, type[BaseModel]] = {
    "accelerators": Accelerator, "systems": System, "switches": Switch, "nics": Nic}
_TABLES = ("superpod_scalable_units",)
_SECTIONS = {*_KINDS, "aliases", "default_systems", *_TABLES}
HARDWARE_FILES = ("accelerators.yaml", "systems.yaml", "switches.yaml", "nics.yaml", "superpod_tables.yaml")
# Singular spellings are almost surely typos of ours, not another catalog's sections.
_TYPOS = {"accelerator", "system", "switch", "nic", "alias", "default_system"}
# Which kind a file's `aliases:` section refers to: the kind of the entries in the same file.
_ALIAS_KIND_FIELD = {"accelerators": "compute.accelerator", "systems": "compute.system",
                     "switches": "fabric.switch", "nics": "fabric.nic"}

M = TypeVar("M", bound=BaseModel)


def normalize(name: str) -> str:
    """The key every id and alias is compared on: ' H100_SXM' and 'h100 sxm' -> 'h100-sxm'."""
    return "-".join(name.casefold().replace("_", " ").split())


@dataclass(frozen=True)
class Catalog:
    """Every hardware entry, keyed by id. Build it with `load_catalog()`."""

    accelerators: dict[str, Accelerator]
    systems: dict[str, System]
    switches: dict[str, Switch]
    nics: dict[str, Nic]
    aliases: dict[str, dict[str, str]] = field(default_factory=dict)   # kind -> alias -> id
    default_systems: dict[str, str] = field(default_factory=dict)      # accelerator id -> system id
    tables: dict[str, Any] = field(default_factory=dict)               # reference tables, verbatim
    # Rates measured on one machine, keyed (kind, id): ("accelerator", "h100-sxm"), ("node", "dgx-h100").
    # Filled per compile by measure/apply.py; the hardware view applies them to that machine only.
    measured: dict[tuple[str, str], MeasuredRates] = field(default_factory=dict)

    def measured_rates(self, accelerator_id: str, system_id: str) -> MeasuredRates:
        """What was measured on this accelerator (GEMM, HBM) and this node type (bus bandwidth)."""
        acc = self.measured.get(("accelerator", accelerator_id), MeasuredRates())
        node = self.measured.get(("node", system_id), MeasuredRates())
        return MeasuredRates(gemm=acc.gemm, hbm_bytes_per_s=acc.hbm_bytes_per_s, busbw=node.busbw)

    def _find(self, kind: str, entries: Mapping[str, M], name: str) -> M:
        key = normalize(str(name))
        key = self.aliases.get(kind, {}).get(key, key)
        if key in entries:
            return entries[key]
        raise InputError(_ALIAS_KIND_FIELD[kind], name, one_of(name, entries))

    def accelerator(self, name: str) -> Accelerator:
        return self._find("accelerators", self.accelerators, name)

    def system(self, name: str) -> System:
        return self._find("systems", self.systems, name)

    def switch(self, name: str) -> Switch:
        return self._find("switches", self.switches, name)

    def nic(self, name: str) -> Nic:
        return self._find("nics", self.nics, name)

    def systems_for(self, accelerator_id: str) -> list[str]:
        """Ids of the systems that hold this accelerator, sorted."""
        acc = self.accelerator(accelerator_id)
        return sorted(s.id for s in self.systems.values() if s.accelerator == acc.id)

    def default_system(self, accelerator_id: str) -> System:
        """The reference system of an accelerator (h100-sxm -> dgx-h100)."""
        acc = self.accelerator(accelerator_id)
        if acc.id not in self.default_systems:
            held = self.systems_for(acc.id)
            raise CatalogGap([f"default_systems.{acc.id}"], f"a node to hold {acc.id} (the compute layer)",
                             field="compute.system", value=None,
                             hint=(f"name one of: {', '.join(held)}" if held
                                   else "add a system holding it in a user catalog directory"))
        return self.systems[self.default_systems[acc.id]]

    def hardware(self, accelerator_id: str, system_id: str | None = None) -> Hardware:
        """The performance model's view of one accelerator in one system.

        scale_out_bandwidth_bytes_per_s (per GPU, per direction) = NICs x NIC bits/s / 8 / GPUs per
        node. Scale-up bandwidth is the system's override (PCIe-only nodes) or the accelerator's
        per-direction figure. A number the catalog does not know raises InputError: the perf model
        never runs on a made-up peak.
        """
        acc = self.accelerator(accelerator_id)
        sys = self.default_system(acc.id) if system_id is None else self.system(system_id)
        if sys.accelerator != acc.id:
            raise InputError("compute.system", system_id,
                             f"a system holding {acc.id}, one of: {', '.join(self.systems_for(acc.id))}")
        scale_up = sys.scale_up_bandwidth_bytes_per_s or acc.scale_up_bandwidth_bytes_per_s
        needed: dict[str, float | None] = {
            "peak_flops.bf16": acc.peak_flops.bf16,
            "memory_bandwidth_bytes_per_s": acc.memory_bandwidth_bytes_per_s,
            "tdp_w": acc.tdp_w,
        }
        if sys.scale_up_domain_gpus > 1:
            needed["scale_up_bandwidth_bytes_per_s"] = scale_up
        missing = [k for k, v in needed.items() if v is None]
        if missing:
            raise CatalogGap([f"accelerators.{acc.id}.{k}" for k in missing],
                             f"the performance model of {acc.id} (the compute layer)",
                             field="compute.accelerator", value=acc.id,
                             hint=("not published, or not supported by the hardware: add it in a user "
                                   "catalog directory to model it"))
        return Hardware(
            accelerator_id=acc.id,
            system_id=sys.id,
            peak_flops_bf16=_known(acc.peak_flops.bf16),
            peak_flops_fp8=acc.peak_flops.fp8,
            peak_flops_fp4=acc.peak_flops.fp4,
            hbm_bytes=acc.process_memory_bytes,
            hbm_bandwidth_bytes_per_s=_known(acc.memory_bandwidth_bytes_per_s),
            scale_up_bandwidth_bytes_per_s=scale_up or 0.0,  # 0.0 only for a 1-GPU domain
            scale_up_domain_gpus=sys.scale_up_domain_gpus,
            gpus_per_node=sys.gpus_per_node,
            scale_out_bandwidth_bytes_per_s=(
                sys.scale_out_nics_per_node * sys.scale_out_nic_bits_per_s / 8 / sys.gpus_per_node),
            tdp_w=_known(acc.tdp_w),
            host_link_bytes_per_s=acc.host_link_bytes_per_s or acc.pcie_bandwidth_bytes_per_s,
            tensor_flops_per_exp=acc.tensor_flops_per_exp,
            measured=self.measured_rates(acc.id, sys.id),
        )


def _known(value: float | None) -> float:
    assert value is not None  # checked by the caller
    return value


def load_catalog(user_dir: Path | None = None) -> Catalog:
    """The package catalog, with `user_dir`'s YAML files merged over it when given.

    The package-only catalog is parsed once per process and cached.
    """
    if user_dir is None:
        return _package_catalog()
    existing_directory(user_dir, "catalog_dir", "an existing directory of catalog YAML files")
    user_files = sorted(Path(user_dir).glob("*.yaml"))
    return _build(_merge(_read_files(_package_files()), _read_files(user_files)))


@functools.cache
def package_yaml(name: str) -> dict[str, Any]:
    """A package data file (catalog/data/NAME, e.g. 'reliability.yaml', 'models/gpt3-175b.yaml'),
    parsed once per process with the C parser. The one reader of the package's non-hardware YAML
    (fabric, storage, reliability, facility, software, model presets, serving engines): each file
    is read at most once per process. The mapping is shared: callers read it, never mutate it."""
    with (DATA_DIR / name).open(encoding="utf-8") as fh:
        data = yaml.load(fh, Loader=_Loader)
    if not isinstance(data, dict):
        raise ValueError(f"catalog/data/{name}: expected a mapping at the top level")
    return data


def _package_files() -> list[Path]:
    return [DATA_DIR / name for name in HARDWARE_FILES]


@functools.cache
def _package_catalog() -> Catalog:
    return _build(_read_files(_package_files()))


_Raw = dict[str, Any]


def _read_files(paths: list[Path]) -> _Raw:
    """Collect the hardware sections of the given YAML files, in order (later ids win)."""
    raw: _Raw = {k: {} for k in _KINDS} | {"aliases": {k: {} for k in _KINDS},
                                           "default_systems": {}, "tables": {}}
    for path in paths:
        with path.open(encoding="utf-8") as fh:
            try:
                doc = yaml.load(fh, Loader=_Loader)
            except yaml.YAMLError as exc:
                raise InputError(f"catalog file {path}", "(unparsable)", f"valid YAML: {exc}") from None
        if doc is None:
            continue
        if not isinstance(doc, dict) or set(doc) & _TYPOS:
            bad = sorted(set(doc) & _TYPOS) if isinstance(doc, dict) else doc
            raise InputError(f"catalog file {path}", bad,
                             "a mapping with hardware sections among: " + ", ".join(sorted(_SECTIONS)))
        kinds_here = [k for k in _KINDS if k in doc]
        for kind in kinds_here:
            for entry in doc[kind] or []:
                if not isinstance(entry, dict) or "id" not in entry:
                    raise InputError(f"catalog file {path}: {kind}", entry, "a mapping with an `id`")
                entry_id = str(entry["id"])
                if entry_id != normalize(entry_id):
                    raise InputError(f"catalog file {path}: {kind}", entry_id,
                                     f"a lower-case id with '-' (e.g. {normalize(entry_id)!r})")
                raw[kind][entry_id] = {**entry, "_file": str(path)}
        if doc.get("aliases"):
            if len(kinds_here) != 1:
                raise InputError(f"catalog file {path}: aliases", sorted(doc["aliases"]),
                                 "aliases in a file that defines exactly one kind of entry")
            for alias, target in doc["aliases"].items():
                raw["aliases"][kinds_here[0]][normalize(str(alias))] = normalize(str(target))
        raw["default_systems"].update({normalize(k): normalize(v)
                                       for k, v in (doc.get("default_systems") or {}).items()})
        raw["tables"].update({k: doc[k] for k in _TABLES if k in doc})
    return raw


def _merge(base: _Raw, user: _Raw) -> _Raw:
    """User entries override package entries field by field; new ids are added whole."""
    out: _Raw = {k: dict(base[k]) for k in _KINDS}
    for kind in _KINDS:
        for entry_id, entry in user[kind].items():
            if entry_id not in out[kind]:
                out[kind][entry_id] = entry
                continue
            old = out[kind][entry_id]
            merged = {**old, **entry}
            for nested in ("peak_flops", "peak_flops_sparse"):
                if isinstance(old.get(nested), dict) and isinstance(entry.get(nested), dict):
                    merged[nested] = {**old[nested], **entry[nested]}
            if "source" not in entry:  # keep provenance: say which fields the user changed
                changed = sorted(set(entry) - {"id", "_file"})
                merged["source"] = (f"user catalog {entry['_file']} (fields: {', '.join(changed)}) "
                                    f"over package entry: {old['source']}")
            out[kind][entry_id] = merged
    out["aliases"] = {k: base["aliases"][k] | user["aliases"][k] for k in _KINDS}
    out["default_systems"] = base["default_systems"] | user["default_systems"]
    out["tables"] = base["tables"] | user["tables"]
    return out


def _validate(model: type[M], kind: str, entry: dict[str, Any]) -> M:
    data = {k: v for k, v in entry.items() if k != "_file"}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        # each problem by field, with the bound and its reason (intake/problems.py, as for intakes)
        raise input_error(exc, model, f"catalog {entry.get('_file', '?')}: {kind}.{entry['id']}") from None


def _build(raw: _Raw) -> Catalog:
    cat = Catalog(
        accelerators={i: _validate(Accelerator, "accelerators", e) for i, e in raw["accelerators"].items()},
        systems={i: _validate(System, "systems", e) for i, e in raw["systems"].items()},
        switches={i: _validate(Switch, "switches", e) for i, e in raw["switches"].items()},
        nics={i: _validate(Nic, "nics", e) for i, e in raw["nics"].items()},
        aliases=raw["aliases"],
        default_systems=raw["default_systems"],
        tables=raw["tables"],
    )
    _check_references(cat)
    return cat


def _check_references(cat: Catalog) -> None:
    """Every id an entry points at exists (a typo in YAML fails at load, not mid-compile)."""
    for s in cat.systems.values():
        if s.accelerator not in cat.accelerators:
            raise InputError(f"catalog systems.{s.id}.accelerator", s.accelerator,
                             "one of: " + ", ".join(sorted(cat.accelerators)))
        if s.scale_out_nic is not None and s.scale_out_nic not in cat.nics:
            raise InputError(f"catalog systems.{s.id}.scale_out_nic", s.scale_out_nic,
                             "one of: " + ", ".join(sorted(cat.nics)))
    for acc_id, sys_id in cat.default_systems.items():
        if acc_id not in cat.accelerators or sys_id not in cat.systems:
            raise InputError("catalog default_systems", f"{acc_id}: {sys_id}",
                             "known accelerator and system ids")
        if cat.systems[sys_id].accelerator != acc_id:
            raise InputError("catalog default_systems", f"{acc_id}: {sys_id}",
                             f"a system holding {acc_id} (it holds {cat.systems[sys_id].accelerator})")
    for kind, table in cat.aliases.items():
        entries: Mapping[str, object] = getattr(cat, kind)
        for alias, target in table.items():
            if target not in entries:
                raise InputError(f"catalog aliases ({kind})", f"{alias}: {target}",
                                 "an alias pointing at a known id")
