"""Score the serving model on published TensorRT-LLM rows that are NOT in ../shared/calibration: never fit on these.

    python tools/holdout_inference.py [--json OUT] [--table]

TensorRT-LLM's perf-overview (NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md
@00f37686aa854010d68bcbd0f4ab000221541ca6, the v1.0-era tables the calibration set draws its B200, H200
and H100 rows from) publishes columns the calibration set leaves out: GB200 (Llama 3.3 70B, Llama 3.1
405B, Qwen3-30B-A3B), B200 Qwen3-30B-A3B, Llama 4 Maverick on B200, H200 and H100, and the RTX PRO 6000
Blackwell Server Edition at TP 1-8 (its PP columns are left out: offline pipeline parallelism is not
modelled). They are transcribed below, written as records of the calibration format to a temporary
directory and compiled by the suite `wkc validate --suite inference` runs, as the calibration rows
are: the error on serving runs no constant was fitted on (other GPUs, other model families).
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from workload_compiler.validation.band_coverage import coverage
from workload_compiler.validation.report import summarize, to_json
from workload_compiler.validation.suites import inference_suite

SOURCE = ("github:NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md "
          "@00f37686aa854010d68bcbd0f4ab000221541ca6 (v1.0-era)")
LENGTHS = ((128, 128), (128, 2048), (128, 4096), (500, 2000), (1000, 1000), (1000, 2000), (2048, 128),
           (2048, 2048), (5000, 500), (20000, 2000))
# (model, hardware as the calibration files name it, tp, checkpoint precision, total output tokens/s per
# ISL/OSL of LENGTHS; None where the table has no figure)
COLUMNS: list[tuple[str, str, int, str, tuple[int | None, ...]]] = [
    ("Llama 3.3 70B", "GB200", 1, "fp4", (12189, 11309, 7849, 9028, 7326, 6513, 1450, 5646, 1602, 755)),
    ("Llama 3.1 405B", "GB200", 4, "fp4", (6740, 8151, 6608, 6540, 5389, 5135, 797, 4407, 1112, 739)),
    ("Qwen3-30B-A3B", "GB200", 1, "fp4", (24107, 31311, 26337, 20604, 17481, 17177, 6595, 14719, 5908, 3203)),
    ("Qwen3-30B-A3B", "B200-180GB", 1, "fp4", (39827, 37844, 24953, 27817, 25828, 22051, 6251, 17554, 6142, 2944)),
    ("Llama 4 Maverick", "B200-180GB", 8, "fp4",
     (124323, 112676, 68170, None, 79617, 63766, 18088, 52195, None, 12678)),
    ("Llama 4 Maverick", "H200-SXM-141GB", 8, "fp8",
     (63994, 40572, 24616, 37835, 31782, 34734, 7307, 20957, 8456, 4106)),
    ("Llama 4 Maverick", "H100-SXM-80GB", 8, "fp8", (None, 10829, 6744, 10108, 9677, 9151, None, 6916, 3457, None)),
    ("Llama 3.3 70B", "RTX PRO 6000", 1, "fp4", (3264, 2422, 1349, 1856, 1787, 1594, 393, 1074, 401, 142)),
    ("Qwen3-30B-A3B", "RTX PRO 6000", 1, "fp4", (28011, 12540, 7491, 10695, 9910, 8378, 3257, 5908, 2530, 871)),
    ("Qwen3-30B-A3B", "RTX PRO 6000", 2, "fp4", (32646, 22744, 15049, 17266, 16431, 13323, 3785, 10679, 3799, 1558)),
    ("Qwen3-30B-A3B", "RTX PRO 6000", 4, "fp4", (36819, 35715, 28139, 26175, 24046, 25131, 4311, 18134, 5212, 2551)),
    ("Qwen3-30B-A3B", "RTX PRO 6000", 8, "fp4", (39490, 52676, 33895, 44088, 31785, 28881, 4798, 22391, 5965, None)),
]


def records() -> list[dict[str, Any]]:
    out = []
    for model, hardware, tp, precision, totals in COLUMNS:
        for (isl, osl), total in zip(LENGTHS, totals, strict=True):
            if total is None:
                continue
            out.append({"id": f"holdout/{model.replace(' ', '_')}/{hardware}/TP{tp}/{precision}/{isl}-{osl}",
                        "source": SOURCE, "source_type": "vendor_benchmark_table", "model": model,
                        "hardware": hardware, "gpu_count": tp, "tp": tp, "pp": 1, "ep": None, "attention_dp": None,
                        "precision": precision, "framework": "TensorRT-LLM (trtllm-bench, PyTorch backend, v1.0-era)",
                        "scenario": "offline max-throughput", "isl": isl, "osl": osl,
                        "measured": {"output_tok_s_total": float(total), "output_tok_s_per_gpu": total / tp},
                        "split": "public", "unverified": False})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, default=None, help="write the validate report here")
    ap.add_argument("--table", action="store_true", help="print every record")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "training_public.yaml").write_text(yaml.safe_dump({"records": []}), encoding="utf-8")
        (d / "inference_public.yaml").write_text(yaml.safe_dump({"entries": records()}, sort_keys=False),
                                                 encoding="utf-8")
        report = to_json(summarize(*inference_suite(d)))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    columns: dict[str, list[float]] = collections.defaultdict(list)
    for r in (r for g in report["groups"].values() for r in g["records"]):
        columns["/".join(r["id"].split("/")[1:5])].append(r["error_pct"])
        if args.table:
            print(f"  {r['id']:60s} {r['error_pct']:+7.1f}%")
    for column, errs in columns.items():
        print(f"  {column:40s} MAPE {sum(abs(e) for e in errs) / len(errs):6.1f}%  mean {sum(errs) / len(errs):+6.1f}%"
              f"  ({len(errs)} rows)")
    reasons = collections.Counter(s["reason"] for s in report["skipped"])
    for reason, n in reasons.items():
        print(f"  not compiled ({n} rows): {reason}")
    rows = [r for g in report["groups"].values() for r in g["records"]]
    print("  " + coverage(rows, "inference_throughput").line())
    n = sum(len(e) for e in columns.values())
    print(f"HELD-OUT MAPE {report['overall_mape']:.2f}%  max {report['overall_max_abs_error']:.1f}%  "
          f"({n} rows, {len(report['skipped'])} not compiled)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
