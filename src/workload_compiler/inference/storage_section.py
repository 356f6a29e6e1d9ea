"""The storage layer of an inference answer: storage/serving.py's arithmetic on the fleet the search
chose, its inputs traced as given or assumed (the defaults come from catalog/data/storage_tiers.yaml).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..catalog.loader import package_yaml
from ..intake.infrastructure import StorageIntake
from ..provenance import Trace
from ..storage.serving import serving_storage

S = "storage."
FORMULAS = {
    "checkpoint_bytes": "one replica's weights in the served format (inference/model.py weight_bytes)",
    "capacity_bytes": "retained_checkpoints x checkpoint_bytes / fill_fraction",
    "replica_load_s": "checkpoint_bytes / (nodes of one replica x per-node load bandwidth)",
    "fleet_load_s": "replicas x checkpoint_bytes / min(tier aggregate read, nodes x per-node load bandwidth)",
}


def _gpus_per_replica(inference: dict[str, Any]) -> int:
    """A replica's GPUs; with separate prefill and decode pools, the larger pool's replica (the slower load)."""
    pools = [p for p in (inference.get("prefill_pool"), inference.get("decode_pool")) if p]
    if pools:
        return max(int(p["gpus_per_replica"]) for p in pools)
    return int(inference["gpus_per_replica"])


def storage_section(intake: StorageIntake, *, checkpoint_bytes: float, compute: dict[str, Any],
                    inference: dict[str, Any], trace: Trace) -> dict[str, Any]:
    """Layer 4 of a feasible inference answer (storage/serving.py)."""
    defaults: dict[str, Any] = package_yaml("storage_tiers.yaml")["defaults"]
    if intake.tier is not None:
        tier = trace.given(S + "tier", intake.tier)
    else:
        tier = trace.assumed(S + "tier", "good", "not given: the DGX SuperPOD RA's Good tier; a fleet that must "
                             "start replicas faster pins storage.tier (the load time on each tier is listed)")
    if intake.retained_checkpoints is not None:
        kept = trace.given(S + "retained_checkpoints", intake.retained_checkpoints)
    else:
        d = defaults["served_checkpoint_versions"]
        kept = trace.assumed(S + "retained_checkpoints", int(d["value"]), str(d["why"]))
    fill = trace.assumed(S + "fill_fraction", float(defaults["fill_fraction"]["value"]),
                         str(defaults["fill_fraction"]["why"]), unit="fraction")
    host = defaults["host_path_bytes_per_s_per_node"]
    if not intake.gpudirect_storage:
        trace.assumed(S + "host_path_bytes_per_s_per_node", float(host["value"]), str(host["why"]), unit="B/s")
    gpus = int(compute["gpus"])
    plan = serving_storage(checkpoint_bytes=checkpoint_bytes, replicas=int(inference["replicas"]),
                           gpus_per_replica=_gpus_per_replica(inference), gpus=gpus,
                           gpus_per_node=int(compute["gpus_per_node"]), tier=str(tier),
                           gds=intake.gpudirect_storage, host_path_bytes_per_s=float(host["value"]),
                           retained_checkpoints=int(kept), fill_fraction=float(fill))
    out = asdict(plan)
    out["gds"] = intake.gpudirect_storage
    for key, formula in FORMULAS.items():
        trace.derived(S + key, out[key], formula)
    return out


__all__ = ["storage_section"]
