"""Reduce AIConfigurator's measured TensorRT-LLM MoE op latencies to the table the serving model reads.

    pip install --target /tmp/aic aiconfigurator-core==0.12.0 pyarrow   # or unpack the wheel
    python tools/moe_op_table.py /tmp/aic/aiconfigurator_core [--out FILE]

(default FILE: src/workload_compiler/catalog/data/moe_op_latency.json.gz)

AIConfigurator 0.12.0 (PyPI `aiconfigurator-core`, Apache-2.0, NVIDIA) ships the latency of
TensorRT-LLM's fused MoE op (routing, permutation, both grouped GEMMs, activation, finalize) measured
on each GPU: systems/data/<system>/moe/trtllm/1.3.0rc20/moe_perf.parquet, one row per kernel
source, weight format, expert shape (hidden, inter, experts, top-k), MoE tensor and expert parallel
degree, routing distribution and token count. Kept: the CUTLASS kernel source (`moe_torch_flow_
cutlass`: TensorRT-LLM's default MoE backend, llmapi/llm_args.py MoeConfig backend default
'CUTLASS'), balanced routing (the benchmarks force it), the NVFP4, per-tensor FP8, 128x128-block
FP8 (measured with CUTLASS on Hopper only) and BF16 weight formats, every expert shape and parallel
degree measured. Latency in microseconds per token count of `tokens` (three significant digits; None
where a count was not measured). pyarrow is needed by this tool only.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sys
from pathlib import Path
from typing import Any

SYSTEMS = {"b200_sxm": "b200", "gb200": "gb200", "b300_sxm": "b300", "gb300": "gb300", "h100_sxm": "h100-sxm",
           "h200_sxm": "h200-sxm", "l40s": "l40s", "rtx_pro_6000_server": "rtx-pro-6000-blackwell-server"}
WEIGHTS = {"nvfp4": "nvfp4", "fp8": "fp8", "fp8_block": "fp8-block128", "bfloat16": "bf16"}
KERNEL = "moe_torch_flow_cutlass"
VERSION = "1.3.0rc20"
SHAPE = ("hidden_size", "inter_size", "num_experts", "topk", "moe_tp_size", "moe_ep_size")
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src/workload_compiler/catalog/data/moe_op_latency.json.gz"


def _three_digits(us: float) -> float:
    """Three significant digits: the measurements repeat to a few percent, and the file stays small."""
    return float(f"{us:.3g}")


def reduce(root: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq  # a tool dependency only

    tokens: set[int] = set()
    by_key: dict[tuple[Any, ...], dict[int, float]] = collections.defaultdict(dict)
    for system, acc in SYSTEMS.items():
        path = root / "systems" / "data" / system / "moe" / "trtllm" / VERSION / "moe_perf.parquet"
        if not path.is_file():
            print(f"missing {path}", file=sys.stderr)
            continue
        t = pq.read_table(path).to_pydict()
        for j in range(len(t["latency"])):
            if (t["kernel_source"][j] != KERNEL or t["distribution"][j] != "balanced"
                    or t["moe_dtype"][j] not in WEIGHTS):
                continue
            key = (acc, WEIGHTS[t["moe_dtype"][j]], *(int(t[c][j]) for c in SHAPE))
            n = int(t["num_tokens"][j])
            tokens.add(n)
            by_key[key][n] = float(t["latency"][j]) * 1e3     # ms -> us
    grid = sorted(tokens)
    tables = [{"accelerator": k[0], "weights": k[1], "shape": list(k[2:]),
               "latency_us": [_three_digits(v[n]) if n in v else None for n in grid]}
              for k, v in sorted(by_key.items())]
    return {"source": f"AIConfigurator 0.12.0 (aiconfigurator-core wheel) systems/data/*/moe/trtllm/{VERSION}/"
                      f"moe_perf.parquet: kernel_source {KERNEL}, distribution balanced (tools/moe_op_table.py)",
            "shape": list(SHAPE), "tokens": grid, "tables": tables}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="the unpacked aiconfigurator_core package directory")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    doc = reduce(args.root)
    with gzip.open(args.out, "wt", encoding="utf-8") as fh:
        json.dump(doc, fh, separators=(",", ":"))
    print(f"{len(doc['tables'])} measured (GPU, format, shape, degrees) rows x {len(doc['tokens'])} token counts "
          f"-> {args.out} ({args.out.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
