"""Serving-engine defaults (KV-cache memory fraction, batch and token caps, host work per request),
from package YAML.

A loader module: it reads `catalog/data/serving_engines.yaml` once (through the package's one YAML
reader, catalog/loader.package_yaml); its one rule is which host a measured host cost applies to.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from ..catalog.loader import package_yaml
from ..errors import InputError

FractionOf = Literal["total", "free"]


@dataclass(frozen=True, kw_only=True)
class Engine:
    """How one engine sizes its KV cache; see the YAML header for the two formulas."""

    id: str
    name: str
    memory_fraction: float
    memory_fraction_of: FractionOf
    activation_in_fraction: bool
    runtime_reserve_bytes: float
    max_num_tokens: int
    max_batch_size: int
    block_size_tokens: int
    source: str
    # the rows whose logits the start-up memory profile computes: one per sequence (max_batch_size)
    # or one per token of the profiled step (vLLM V0's sampler profile)
    profile_logits_of: Literal["sequences", "tokens"] = "sequences"
    # host seconds per running request and step, measured on hosts whose CPU names `host_cpu`
    # (catalog systems.yaml `cpu`); 0 where not measured
    host_s_per_request: float = 0.0
    host_cpu: str = ""
    host_source: str = ""

    def host_cost(self, system_cpu: str) -> float:
        """The measured per-request host seconds on a host with this CPU, or 0 (not measured there)."""
        return self.host_s_per_request if self.host_cpu and self.host_cpu in system_cpu else 0.0


def _engine(raw: dict[str, Any]) -> Engine:
    fields = {k: raw[k] for k in Engine.__dataclass_fields__ if k in raw}
    return Engine(**fields)


@cache
def _engines() -> dict[str, Engine]:
    return {str(e["id"]): _engine(e) for e in package_yaml("serving_engines.yaml")["engines"]}


def engine_ids() -> list[str]:
    return sorted(_engines())


def engine(engine_id: str, field: str = "serving.engine") -> Engine:
    """The engine entry by id; an unknown id is an InputError listing the known ones."""
    engines = _engines()
    if engine_id not in engines:
        raise InputError(field, engine_id, "one of: " + ", ".join(sorted(engines)))
    return engines[engine_id]
