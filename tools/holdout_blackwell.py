"""Score the training model on published Blackwell runs that are NOT in ../shared/calibration: never fit on these.

    python tools/holdout_blackwell.py [--json OUT] [--table]

Megatron-Bridge's performance summary publishes, beside the rows the calibration set holds, rows it
leaves out: every DGX-GB300 and DGX-B300 row, and the 26.02 release's GB200 and B200 rows. They are
transcribed below from the public repository (NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md
@00b7660be0254ac6f95f44164ddd0c3e9cc798ed, section 25.11; docs/performance-summary-archive.md
@0a25f911b2ed6c6905a539504fdb8e5b40e3438b, section 26.02). Each becomes a record in the calibration
file format (the model block copied from the calibration set's record of the same model), is written
to a temporary calibration directory and compiled by the suite `wkc validate` runs (validation/
suites.py), from the intake a user would write, exactly as the calibration records are. The figure
printed is the error on runs the constants never saw: newer releases and GPUs (GB300, B300), the
generalization the product is judged on.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from workload_compiler.validation.band_coverage import coverage
from workload_compiler.validation.report import summarize, to_json
from workload_compiler.validation.suites import find_calibration_dir, training_suite

SUMMARY_2511 = ("NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md @00b7660be0254ac6f95f44164ddd0c3e9cc798ed, "
                "section '25.11 NeMo Container'")
ARCHIVE_2602 = ("NVIDIA-NeMo/Megatron-Bridge docs/performance-summary-archive.md "
                "@0a25f911b2ed6c6905a539504fdb8e5b40e3438b, section '26.02 NeMo Container'")

# (release, system, model, GPUs, precision, GBS, MBS, seq, FSDP, TP, PP, CP, VP, EP, tokens/s/GPU); VP or EP
# 'n/a' in the table is 1 here. The tables state that MoE runs are token-dropless with force-balanced routing.
ROWS: list[tuple[str, str, str, int, str, int, int, int, int, int, int, int, int, int, float]] = [
    ("25.11", "GB300", "LLAMA3_8B", 8, "FP8-CS", 128, 2, 8192, 0, 1, 1, 1, 1, 1, 37556),
    ("25.11", "GB300", "LLAMA3_8B", 8, "FP8-MX", 128, 2, 8192, 0, 1, 1, 1, 1, 1, 36108),
    ("25.11", "GB300", "LLAMA3_70B", 64, "FP8-CS", 256, 2, 8192, 64, 1, 1, 1, 1, 1, 4520),
    ("25.11", "GB300", "LLAMA3.1_405B", 256, "FP8-CS", 1536, 1, 8192, 0, 2, 8, 2, 4, 1, 999),
    ("25.11", "GB300", "DeepSeekV3 (w/o MTP)", 256, "BF16", 4096, 1, 4096, 0, 1, 2, 1, 4, 32, 3848),
    ("25.11", "GB300", "DeepSeekV3 (w/o MTP)", 256, "FP8-MX", 4096, 1, 4096, 0, 1, 2, 1, 4, 32, 4357),
    ("25.11", "GB300", "GPT OSS 120B", 64, "BF16", 1280, 2, 8192, 0, 1, 1, 1, 1, 64, 18347),
    ("25.11", "GB300", "Qwen3_30B_a3B", 8, "FP8-MX", 512, 4, 4096, 0, 1, 1, 1, 1, 8, 28934),
    ("25.11", "GB300", "Qwen3_235B_a22B", 256, "BF16", 8192, 2, 4096, 0, 1, 4, 1, 12, 16, 6131),
    ("26.02", "GB300", "LLAMA3_70B", 64, "NVFP4", 256, 1, 8192, 0, 1, 4, 1, 5, 1, 6798),
    ("26.02", "GB200", "LLAMA3_70B", 64, "NVFP4", 256, 1, 8192, 0, 2, 4, 1, 5, 1, 4458),
    ("26.02", "GB300", "LLAMA3_70B", 64, "MXFP8", 256, 1, 8192, 0, 1, 4, 1, 5, 1, 4596),
    ("26.02", "GB200", "LLAMA3_70B", 64, "MXFP8", 256, 1, 8192, 0, 2, 4, 1, 5, 1, 3613),
    ("26.02", "GB300", "LLAMA3_70B", 64, "FP8", 256, 2, 8192, 64, 1, 1, 1, 1, 1, 5003),
    ("26.02", "GB200", "LLAMA3_70B", 64, "FP8", 256, 2, 8192, 64, 1, 1, 1, 1, 1, 4040),
    ("26.02", "GB300", "LLAMA3.1_405B", 256, "NVFP4", 1536, 1, 8192, 0, 4, 8, 1, 4, 1, 1333),
    ("26.02", "GB200", "LLAMA3.1_405B", 256, "NVFP4", 1536, 1, 8192, 0, 4, 16, 1, 8, 1, 1076),
    ("26.02", "GB300", "LLAMA3.1_405B", 256, "MXFP8", 1536, 1, 8192, 0, 2, 8, 2, 4, 1, 931),
    ("26.02", "GB200", "LLAMA3.1_405B", 256, "MXFP8", 1536, 1, 8192, 0, 4, 16, 1, 8, 1, 786),
    ("26.02", "GB300", "LLAMA3.1_405B", 256, "FP8", 1536, 1, 8192, 0, 4, 8, 1, 4, 1, 988),
    ("26.02", "GB200", "LLAMA3.1_405B", 256, "FP8", 1536, 1, 8192, 0, 4, 16, 1, 4, 1, 793),
    ("26.02", "GB300", "DeepSeekV3", 256, "MXFP8", 4096, 2, 4096, 0, 1, 2, 1, 8, 32, 4612),
    ("26.02", "GB200", "DeepSeekV3", 256, "MXFP8", 4096, 1, 4096, 0, 1, 4, 1, 4, 64, 3955),
    ("26.02", "B300", "DeepSeekV3", 256, "MXFP8", 4096, 1, 4096, 0, 1, 16, 1, 1, 8, 2983),
    ("26.02", "B200", "DeepSeekV3", 256, "MXFP8", 4096, 1, 4096, 0, 1, 16, 1, 1, 8, 2689),
    ("26.02", "GB300", "GPT OSS 120B", 64, "BF16", 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 19412),
    ("26.02", "GB200", "GPT OSS 120B", 64, "BF16", 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 15784),
    ("26.02", "B300", "GPT OSS 120B", 64, "BF16", 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 8359),
    ("26.02", "B200", "GPT OSS 120B", 64, "BF16", 1280, 4, 4096, 0, 1, 1, 1, 1, 64, 8047),
    ("26.02", "GB300", "Qwen3_30B_a3B", 8, "MXFP8", 512, 8, 4096, 0, 1, 1, 1, 1, 8, 30376),
    ("26.02", "GB200", "Qwen3_30B_a3B", 8, "MXFP8", 512, 4, 4096, 0, 1, 1, 1, 1, 8, 26084),
    ("26.02", "B300", "Qwen3_30B_a3B", 8, "MXFP8", 512, 8, 4096, 0, 1, 1, 1, 1, 8, 29521),
    ("26.02", "B200", "Qwen3_30B_a3B", 8, "MXFP8", 512, 1, 4096, 0, 1, 1, 1, 1, 8, 9691),
    ("26.02", "GB300", "Qwen3_235B_a22B", 256, "MXFP8", 8192, 2, 4096, 0, 1, 4, 1, 1, 32, 6583),
    ("26.02", "GB200", "Qwen3_235B_a22B", 256, "MXFP8", 8192, 1, 4096, 0, 1, 8, 1, 1, 32, 5448),
    ("26.02", "B300", "Qwen3_235B_a22B", 256, "MXFP8", 8192, 1, 4096, 0, 1, 8, 1, 4, 8, 2691),
    ("26.02", "B200", "Qwen3_235B_a22B", 256, "MXFP8", 8192, 1, 4096, 0, 1, 8, 1, 1, 8, 3805),
]


def _models(calibration: Path) -> dict[str, dict[str, Any]]:
    """The calibration set's model block of each Megatron-Bridge model, by the table's model name."""
    out: dict[str, dict[str, Any]] = {}
    for name in ("training_added.yaml", "training_public.yaml"):
        for rec in yaml.safe_load((calibration / name).read_text(encoding="utf-8"))["records"]:
            if rec["id"].startswith("mbridge_"):
                out.setdefault(rec["model"]["name"].split(" (")[0], rec)
    return out


def records(calibration: Path) -> list[dict[str, Any]]:
    models = _models(calibration)
    out = []
    for i, (release, system, model, gpus, prec, gbs, mbs, seq, fsdp, tp, pp, cp, vp, ep, tokens) in enumerate(ROWS):
        rec = copy.deepcopy(models[model.split(" (")[0]])
        dp = gpus // (tp * pp * cp)
        name = model.split(" (")[0].lower().replace(" ", "_")
        rec["id"] = f"holdout_{release.replace('.', '')}_{system.lower()}_{i:02d}_{name}_{prec.lower()}"
        rec["source"] = {"citation": f"NVIDIA NeMo Megatron-Bridge performance summary (NeMo container {release})",
                         "locator": f"{model} / DGX-{system} / {prec}",
                         "ref": SUMMARY_2511 if release == "25.11" else ARCHIVE_2602,
                         "kind": "official_docs", "trust": "high"}
        rec["model"]["name"] = model
        rec["model"]["seq_len"] = seq
        rec["hardware"] = {"accelerator": system, "count": gpus, "system": f"DGX-{system}", "notes": None}
        rec["parallelism"] = {"tp": tp, "pp": pp, "dp": dp, "cp": cp, "ep": ep, "etp": None, "vp": vp,
                              "fsdp": dp if fsdp else 0, "zero_stage": None, "sequence_parallel": None}
        rec["batch"] = {"global_batch_seqs": gbs, "micro_batch": mbs, "grad_accum": gbs // (mbs * dp),
                        "global_batch_tokens": gbs * seq}
        rec["precision"] = prec
        rec["framework"] = f"Megatron-Bridge / NeMo {release}"
        rec["measured"] = {k: None for k in rec["measured"]} | {"tokens_per_sec_per_gpu": tokens}
        rec["derived_checks"] = []
        out.append(rec)
    return out


def held_out_report(calibration: Path) -> dict[str, Any]:
    """The validate report (validation/report.py to_json) of the held-out rows, each compiled by the
    suite `wkc validate` runs, from a temporary calibration directory holding them alone."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        meta = {"schema_version": 1, "description": "held-out Megatron-Bridge rows (tools/holdout_blackwell.py)"}
        (d / "training_public.yaml").write_text(yaml.safe_dump({"meta": meta, "records": []}), encoding="utf-8")
        (d / "training_added.yaml").write_text(yaml.safe_dump({"meta": meta, "records": records(calibration)},
                                                              sort_keys=False), encoding="utf-8")
        return to_json(summarize(*training_suite(d)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calibration", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="write the validate report here")
    ap.add_argument("--table", action="store_true", help="print every record")
    args = ap.parse_args(argv)
    report = held_out_report(find_calibration_dir(args.calibration))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    rows = [r for g in report["groups"].values() for r in g["records"]]
    kinds: dict[str, list[float]] = {}
    for r in rows:
        kinds.setdefault(r["kind"], []).append(abs(r["error_pct"]))
        if args.table:
            print(f"  {r['id'][:52]:52s} {r['layout'][:46]:46s} {r['error_pct']:+7.1f}%")
    for kind, errs in sorted(kinds.items()):
        print(f"  {kind:24s} MAPE {sum(errs) / len(errs):5.1f}%  max {max(errs):5.1f}%  ({len(errs)} records)")
    print("  " + coverage(rows, "training_step_time").line())
    for s in report["skipped"]:
        print(f"  not compiled: {s['id']}: {s['reason']}")
    print(f"HELD-OUT MAPE {report['overall_mape']:.2f}%  max {report['overall_max_abs_error']:.1f}%  "
          f"({len(rows)} records, {len(report['skipped'])} not compiled)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
