"""GPU device names (as the driver reports them: nvidia-smi, torch.cuda.get_device_name) -> catalog
accelerator ids. An explicit table, never a pattern: a name not listed needs `--accelerator ID`,
because binding a calibration to the wrong accelerator is the mistake this tool exists to prevent.
"""

from __future__ import annotations

DEVICE_NAMES: dict[str, str] = {
    "NVIDIA A100-SXM4-40GB": "a100-sxm-40gb",
    "NVIDIA A100-SXM4-80GB": "a100-sxm-80gb",
    "NVIDIA H100 80GB HBM3": "h100-sxm",
    "NVIDIA H100 PCIe": "h100-pcie",
    "NVIDIA H100 NVL": "h100-nvl",
    "NVIDIA H800": "h800",
    "NVIDIA H200": "h200-sxm",
    "NVIDIA H200 NVL": "h200-nvl",
    "NVIDIA GH200 480GB": "gh200",
    "NVIDIA B200": "b200",
    "NVIDIA L40S": "l40s",
    "Tesla V100-SXM2-32GB": "v100",
    "AMD Instinct MI300X": "mi300x",
}


def accelerator_for(device_name: str) -> str | None:
    return DEVICE_NAMES.get(device_name.strip())
