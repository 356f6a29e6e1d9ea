"""Layer 4 of a serving answer: the served checkpoint on disk and its cold loads (storage/serving.py).

Bandwidths from NVIDIA DGX SuperPOD RA (DGX H100, RA-11333-001 V11) Table 6, as
catalog/data/storage_tiers.yaml holds them: single node read Good 4 GB/s, Best 40 GB/s; one SU
(256 GPUs) Good 15 GB/s. The host bounce path, 50 GB/s a node: NVIDIA's GPUDirect Storage blog.
"""

from __future__ import annotations

import json

import pytest

from workload_compiler.compile import compile_workload
from workload_compiler.errors import InputError
from workload_compiler.spine.result import SystemSpec
from workload_compiler.spine.sections_inference import ServingStorage
from workload_compiler.storage.serving import serving_storage

BASE = {"checkpoint_bytes": 70e9, "gds": False, "host_path_bytes_per_s": 50e9, "retained_checkpoints": 2,
        "fill_fraction": 0.8}


def test_one_replica_loads_at_its_nodes_single_node_read() -> None:
    s = serving_storage(replicas=1, gpus_per_replica=8, gpus=8, gpus_per_node=8, tier="good", **BASE)
    assert s.replica_load_s == pytest.approx(70e9 / 4e9)            # RA Table 6: Good, one node 4 GB/s
    assert s.replica_load_by_tier_s["best"] == pytest.approx(70e9 / 40e9)
    assert s.capacity_bytes == pytest.approx(2 * 70e9 / 0.8)
    assert (s.node_read_binding, s.fleet_read_binding) == ("storage tier", "storage tier")


def test_a_replica_over_two_nodes_reads_with_both() -> None:
    s = serving_storage(replicas=1, gpus_per_replica=16, gpus=16, gpus_per_node=8, tier="good", **BASE)
    assert s.replica_load_s == pytest.approx(70e9 / (2 * 4e9))


def test_the_fleet_shares_the_tier_aggregate_never_below_one_nodes_read() -> None:
    small = serving_storage(replicas=4, gpus_per_replica=8, gpus=32, gpus_per_node=8, tier="good", **BASE)
    # 32/256 of an SU's 15 GB/s is 1.9 GB/s: below what the tier gives one node, so one node's 4 GB/s
    assert small.fleet_read_bytes_per_s == pytest.approx(4e9)
    assert small.fleet_load_s == pytest.approx(4 * 70e9 / 4e9)
    su = serving_storage(replicas=32, gpus_per_replica=8, gpus=256, gpus_per_node=8, tier="good", **BASE)
    assert su.fleet_read_bytes_per_s == pytest.approx(15e9)             # RA Table 6: Good, one SU
    assert su.fleet_load_s == pytest.approx(32 * 70e9 / 15e9)


def test_without_gpudirect_storage_the_host_path_can_bind() -> None:
    # 16 GPUs a node on the Best tier: 40 GB/s x 16/8 = 80 GB/s from storage, 50 GB/s through host memory
    kw = {**BASE, "replicas": 1, "gpus_per_replica": 16, "gpus": 16, "gpus_per_node": 16, "tier": "best"}
    bounce = serving_storage(**kw)
    assert (bounce.node_read_bytes_per_s, bounce.node_read_binding) == (50e9, "host bounce path")
    direct = serving_storage(**{**kw, "gds": True})
    assert (direct.node_read_bytes_per_s, direct.node_read_binding) == (80e9, "storage tier")


@pytest.mark.parametrize(("key", "value"), [("tier", "fastest"), ("fill_fraction", 1.5), ("replicas", 0),
                                            ("retained_checkpoints", 0)])
def test_bad_arguments_name_their_field(key: str, value: object) -> None:
    kw = {**BASE, "replicas": 1, "gpus_per_replica": 8, "gpus": 8, "gpus_per_node": 8, "tier": "good", key: value}
    with pytest.raises(InputError) as err:
        serving_storage(**kw)  # type: ignore[arg-type]
    assert key in err.value.field


LLAMA_8B = {"kind": "inference", "model": {"preset": "llama3.1-8b"},
            "serving": {"input_tokens": 1000, "output_tokens": 200, "weights": "bf16"},
            "compute": {"accelerator": "h100-sxm"}}


def test_a_serving_spec_has_all_six_layers_and_its_checkpoint_is_the_served_weights() -> None:
    spec = compile_workload(LLAMA_8B)
    assert all(getattr(spec, layer) is not None for layer in
               ("objective", "compute", "fabric", "storage", "software", "facility"))
    assert isinstance(spec.storage, ServingStorage)
    # Llama 3.1 8B: 8.03B parameters (Meta's model card), all 16-bit: 16.06 GB on disk
    assert spec.storage.checkpoint_bytes == pytest.approx(16.06e9, rel=0.01)
    assert spec.provenance["storage.tier"].source == "assumed"
    back = SystemSpec.model_validate(json.loads(spec.model_dump_json()))
    assert isinstance(back.storage, ServingStorage)
    assert back.storage.replica_load_s == pytest.approx(spec.storage.replica_load_s)


def test_the_tier_and_retained_versions_the_user_gives_are_used() -> None:
    spec = compile_workload({**LLAMA_8B, "storage": {"tier": "best", "retained_checkpoints": 5}})
    assert isinstance(spec.storage, ServingStorage)
    assert spec.storage.tier == "best" and spec.provenance["storage.tier"].source == "given"
    assert spec.storage.capacity_bytes == pytest.approx(5 * spec.storage.checkpoint_bytes / 0.8)
    assert spec.storage.replica_load_s == pytest.approx(spec.storage.replica_load_by_tier_s["best"])


def test_separate_prefill_and_decode_pools_load_as_their_larger_replica() -> None:
    spec = compile_workload({"kind": "inference", "model": {"preset": "llama3.3-70b"},
                             "compute": {"accelerator": "h200-sxm"},
                             "serving": {"weights": "fp8", "kv_cache_dtype": "fp8", "input_tokens": 8192,
                                         "output_tokens": 512, "request_rate": "4/s", "ttft": {"p99": "3s"},
                                         "tpot": {"p99": "20ms"}, "availability": "none",
                                         "mode": "disaggregated"}})
    assert spec.inference is not None and spec.inference["mode"] == "disaggregated"
    assert isinstance(spec.storage, ServingStorage)
    pools = [spec.inference["prefill_pool"], spec.inference["decode_pool"]]
    nodes = max(-(-p["gpus_per_replica"] // 8) for p in pools)          # DGX H200: 8 GPUs a node
    assert spec.storage.replica_load_s == pytest.approx(spec.storage.checkpoint_bytes / (nodes * 4e9))
    assert spec.storage.fleet_load_s >= spec.storage.replica_load_s


def test_a_fleet_keeps_at_least_the_checkpoint_it_serves() -> None:
    with pytest.raises(InputError) as err:
        compile_workload({**LLAMA_8B, "storage": {"retained_checkpoints": 0}})
    assert err.value.field == "storage.retained_checkpoints" and "at least 1 for serving" in str(err.value)
