"""Software & access layer: stack by vendor, scheduler rules, readiness checklist (the operating
boundary and its register: tests/unit/test_engagement_boundary.py).

Sources checked: DGX SuperPOD RA-11333-001 V11 Table 2 (Slurm, Base Command Manager); seed 001
("Under the hood": RDMA transport, NUMA/CPU affinity, hugepages, driver versions, persistent device
naming; DCGM, NCCL diagnostics, GPUDirect Storage); seed 000 (access models, actors, TO DEFINE, the
five boundary-register items).
"""

from __future__ import annotations

import re

import pytest

from workload_compiler.errors import InputError
from workload_compiler.software import plan_software, software_data


@pytest.mark.parametrize(("vendor", "runtime", "collectives"), [
    ("NVIDIA", "CUDA", "NCCL"), ("AMD", "ROCm", "RCCL"), ("Intel", "SynapseAI", "HCCL")])
def test_stack_by_vendor(vendor: str, runtime: str, collectives: str):
    layer = plan_software(accelerator_vendor=vendor, workload_kind="training")
    roles = {c.role: c.name for c in layer.stack}
    assert runtime in roles["runtime"] and collectives in roles["collectives"]
    assert {c.version for c in layer.stack} == {"pin at deployment"}   # no unsourced version numbers
    assert not any(re.search(r"\b\d+\.\d+", c.name) for c in layer.stack)


def test_training_defaults_to_slurm_with_enroot_pyxis_on_nvidia():
    layer = plan_software(accelerator_vendor="NVIDIA", workload_kind="training")
    assert (layer.access_model, layer.scheduler) == ("scheduler", "Slurm")
    assert "Enroot" in layer.container_platform and "Pyxis" in layer.container_platform
    fields = {a.field: a for a in layer.assumptions}
    assert "RA-11333-001" in fields["software.access_model"].why
    assert layer.provenance["software.scheduler"].source == "derived"


@pytest.mark.parametrize(("kind", "access", "scheduler", "container"), [
    ("inference", None, "Kubernetes", "containerd"),
    ("hpc", None, "Slurm", "Enroot"),
    ("training", "bare metal", "none", "Docker"),
    ("training", "managed-api", "provider-managed", "provider-managed"),
    ("training", "Kubernetes", "Kubernetes", "containerd"),
])
def test_scheduler_and_container_rules(kind: str, access: str | None, scheduler: str, container: str):
    layer = plan_software(accelerator_vendor="NVIDIA", workload_kind=kind, access_model=access)
    assert layer.scheduler.startswith(scheduler)
    assert container in layer.container_platform
    if access is not None:
        assert layer.provenance["software.access_model"].source == "given"


def test_amd_on_slurm_uses_apptainer():
    assert "Apptainer" in plan_software(accelerator_vendor="AMD", workload_kind="training").container_platform


def test_readiness_covers_the_linux_systems_layer():
    layer = plan_software(accelerator_vendor="NVIDIA", workload_kind="training", gpudirect_storage=True,
                          expected_busbw_bytes_per_s=46e9)
    ids = [c.id for c in layer.readiness]
    assert ids == ["driver_consistency", "numa_cpu_affinity", "hugepages", "rdma_transport",
                   "persistent_device_naming", "gpudirect_rdma", "gpudirect_storage", "collective_tests",
                   "gpu_diagnostics"]
    by_id = {c.id: c for c in layer.readiness}
    assert "nccl-tests" in by_id["collective_tests"].tool and "46 GB/s" in by_id["collective_tests"].check
    assert "DCGM" in by_id["gpu_diagnostics"].tool
    assert "subnet manager" in by_id["rdma_transport"].check
    assert all(c.status == "to run" and "{" not in c.check + c.tool for c in layer.readiness)


def test_readiness_drops_what_does_not_apply_and_follows_vendor_and_transport():
    layer = plan_software(accelerator_vendor="AMD", workload_kind="inference", multi_node=False,
                          transport="roce")
    ids = {c.id for c in layer.readiness}
    assert "collective_tests" not in ids and "gpudirect_storage" not in ids
    by_id = {c.id: c for c in layer.readiness}
    assert "PFC" in by_id["rdma_transport"].check
    assert "nvidia" not in " ".join(c.tool for c in layer.readiness).lower()


def test_bad_input_is_input_error():
    with pytest.raises(InputError, match="vendor"):
        plan_software(accelerator_vendor="Cerebras", workload_kind="training")
    with pytest.raises(InputError, match="access_model"):
        plan_software(accelerator_vendor="NVIDIA", workload_kind="training", access_model="mainframe")
    with pytest.raises(InputError, match=r"workload\.kind"):
        plan_software(accelerator_vendor="NVIDIA", workload_kind="rendering")
    with pytest.raises(InputError, match="technology"):
        plan_software(accelerator_vendor="NVIDIA", workload_kind="training", transport="carrier-pigeon")


def test_every_vendor_stack_has_a_source():
    d = software_data()
    assert all(v.source for v in d.vendors)
    assert d.version_policy == "pin at deployment"
