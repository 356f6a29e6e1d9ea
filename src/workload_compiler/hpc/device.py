"""The HPC model's view of one accelerator in one node, read from the catalog.

Unlike `Catalog.hardware` (the training view), nothing here requires BF16 or FP8: an HPC run on a
V100 needs FP64/FP32 and HBM bandwidth. A number the HPC model needs but the catalog lacks stays
None here and raises InputError where it is used, naming the catalog field.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.loader import Catalog
from ..errors import CatalogGap, InputError


@dataclass(frozen=True, kw_only=True)
class Device:
    accelerator_id: str
    accelerator_name: str
    vendor: str
    system_id: str
    memory_bytes: float
    memory_bandwidth_bytes_per_s: float
    tdp_w: float | None
    peak_fp64: float | None            # dense FLOP/s, vector units
    peak_fp64_matrix: float | None     # dense FLOP/s, matrix / tensor cores
    peak_fp32: float | None
    peak_fp16: float | None            # dense tensor FP16 (or BF16 when FP16 is not listed)
    gpus_per_node: int
    scale_up_domain_gpus: int
    scale_up_bandwidth_bytes_per_s: float | None   # per GPU, per direction; None = unknown
    scale_out_bandwidth_bytes_per_s: float          # per GPU, per direction (NIC line rate)
    host_link_bytes_per_s: float | None             # GPU <-> host (PCIe), per direction; None = unknown
    cpu_cores_per_node: int | None
    host_memory_bytes_per_node: float | None
    cpu: str
    measured_hbm_bytes_per_s: float | None = None   # sustained, measured on this accelerator (wkc calibrate)

    @property
    def is_amd(self) -> bool:
        return self.vendor.strip().lower() == "amd"


def hpc_device(catalog: Catalog, accelerator: str, system: str | None = None) -> Device:
    """Accelerator + system -> Device. The system defaults to the catalog's reference system."""
    acc = catalog.accelerator(accelerator)
    sys = catalog.default_system(acc.id) if system is None else catalog.system(system)
    if sys.accelerator != acc.id:
        raise InputError("compute.system", system,
                         f"a system holding {acc.id}, one of: {', '.join(catalog.systems_for(acc.id))}")
    if acc.memory_bandwidth_bytes_per_s is None:
        raise CatalogGap([f"accelerators.{acc.id}.memory_bandwidth_bytes_per_s"],
                         "the HPC roofline (the compute layer)", value=acc.id)
    pf = acc.peak_flops
    return Device(
        accelerator_id=acc.id, accelerator_name=acc.name, vendor=acc.vendor, system_id=sys.id,
        memory_bytes=acc.memory_bytes, memory_bandwidth_bytes_per_s=acc.memory_bandwidth_bytes_per_s,
        tdp_w=acc.tdp_w, peak_fp64=pf.fp64, peak_fp64_matrix=pf.fp64_tensor, peak_fp32=pf.fp32,
        peak_fp16=pf.fp16 if pf.fp16 is not None else pf.bf16,
        gpus_per_node=sys.gpus_per_node, scale_up_domain_gpus=sys.scale_up_domain_gpus,
        scale_up_bandwidth_bytes_per_s=(sys.scale_up_bandwidth_bytes_per_s
                                        or acc.scale_up_bandwidth_bytes_per_s),
        scale_out_bandwidth_bytes_per_s=(sys.scale_out_nics_per_node * sys.scale_out_nic_bits_per_s
                                         / 8.0 / sys.gpus_per_node),
        host_link_bytes_per_s=acc.pcie_bandwidth_bytes_per_s,
        cpu_cores_per_node=sys.cpu_cores_per_node, host_memory_bytes_per_node=sys.host_memory_bytes_per_node,
        cpu=sys.cpu, measured_hbm_bytes_per_s=catalog.measured_rates(acc.id, sys.id).hbm_bytes_per_s)
