"""The accelerator for serving: which peak the GEMMs run at, and which KV dtypes it can hold.

GEMM precision follows the weight format: W8A8 FP8 on hardware with FP8 tensor cores, W8A8 INT8
where INT8 is published, FP4 (NVFP4/MXFP4) where FP4 is; otherwise the weights are dequantized
to BF16 in the kernel (weight-only: Marlin/Machete-style W4A16, W8A16) and the GEMM runs at the
BF16 peak. A peak the catalog does not publish is never derived from another precision.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.loader import Catalog
from ..catalog.schema import Accelerator
from ..errors import CatalogGap, InputError
from .kernels import kernel_ceilings
from .model import KV_DTYPE_BYTES
from .performance import Device

# weight format -> the tensor-core precision that runs it natively
_NATIVE: dict[str, str] = {"fp8": "fp8", "fp8-block128": "fp8", "mxfp8": "fp8", "int8": "int8",
                           "nvfp4": "fp4", "mxfp4": "fp4"}


@dataclass(frozen=True)
class DeviceChoice:
    device: Device
    note: str | None       # a weight-only fallback to record as an assumption, or None


def gemm_precision(acc: Accelerator, weights: str) -> tuple[str, float, str | None]:
    """(precision, dense peak FLOP/s, note) of the GEMMs for `weights` on `acc`."""
    bf16 = acc.peak_flops.bf16
    if bf16 is None:
        raise CatalogGap([f"accelerators.{acc.id}.peak_flops.bf16"], "the serving GEMM rate (the compute layer)",
                         value=acc.id, hint="not published for this accelerator (or no BF16 in hardware); "
                         "add it in a user catalog directory, or choose another accelerator")
    native = _NATIVE.get(weights)
    if native is None:
        return "bf16", bf16, None if weights in ("bf16", "fp16") else (
            f"{weights} weights are dequantized to BF16 in the GEMM (weight-only kernels): BF16 peak")
    peak = getattr(acc.peak_flops, native)
    if peak is None:
        return "bf16", bf16, (f"{acc.id} publishes no {native} peak: {weights} weights run weight-only "
                              "(dequantized to BF16), at the BF16 peak")
    return native, float(peak), None


def check_kv_dtype(acc: Accelerator, kv_dtype: str) -> None:
    """FP8 KV needs FP8 support (the peak_flops.fp8 entry); A100 has none: vLLM's FP8 KV
    path needs sm89+ (the cache kernels convert to e4m3 in hardware)."""
    if kv_dtype not in KV_DTYPE_BYTES:
        raise InputError("serving.kv_cache_dtype", kv_dtype, "one of: " + ", ".join(sorted(KV_DTYPE_BYTES)))
    if kv_dtype == "fp8" and acc.peak_flops.fp8 is None:
        raise InputError("serving.kv_cache_dtype", kv_dtype,
                         f"a KV dtype {acc.id} supports: it has no FP8 (catalog peak_flops.fp8 is null); "
                         "use bf16, fp16 or int8")


def serving_device(catalog: Catalog, accelerator: str, system: str | None, weights: str,
                   kv_dtype: str) -> DeviceChoice:
    acc = catalog.accelerator(accelerator)
    check_kv_dtype(acc, kv_dtype)
    precision, peak, note = gemm_precision(acc, weights)
    hw = catalog.hardware(acc.id, system)
    bf16 = acc.peak_flops.bf16
    assert bf16 is not None   # gemm_precision checked it
    ceilings = kernel_ceilings(acc.id, precision, kv_dtype)
    dev = Device(hw=hw, gemm_peak_flops=peak, attention_peak_flops=bf16, gemm_precision=precision,
                 ceilings=ceilings)
    return DeviceChoice(device=dev, note=note)
