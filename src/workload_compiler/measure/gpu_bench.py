"""The GPU side of `wkc calibrate`: time GEMMs, a stream kernel and NCCL collectives with PyTorch.

PyTorch is an optional extra (`pip install 'workload-compiler[gpu]'`), imported only here and only
when a run starts. This module records times and nothing else; the analysis is calibration.py.

- GEMM: torch.matmul (bf16, fp16) and torch._scaled_mm (fp8 e4m3, per-tensor scales, sm89+) over
  a grid of training-like shapes; CUDA events around `iters` back-to-back kernels, median of 5.
- HBM: stream triad c = a + s*b (torch.add(..., alpha=s, out=c)), 3 x 4 bytes per element moved.
- Collectives (two GPUs or more): one process per GPU (torch.multiprocessing), NCCL all_reduce and
  all_to_all_single over buffer sizes 1 MiB to 1 GiB; rank 0's time after a barrier, median of 5.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import socket
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .calibration import RAW_SCHEMA, CollectiveRun, DeviceInfo, GemmPoint, RawRun, SizePoint

GEMM_M = (1024, 2048, 4096, 8192, 16384)
GEMM_NK = ((1024, 1024), (2048, 2048), (4096, 4096), (8192, 8192), (4096, 14336))
STREAM_ELEMENTS = tuple(2**p for p in range(22, 29))          # 4M .. 256M float32 per array
COLLECTIVE_BYTES = tuple(2**p for p in range(20, 31, 2))       # 1 MiB .. 1 GiB
QUICK = {"GEMM_M": (2048, 8192), "GEMM_NK": ((2048, 2048), (8192, 8192)), "STREAM": STREAM_ELEMENTS[2::2],
         "COLLECTIVE": COLLECTIVE_BYTES[::2]}

Progress = Callable[[str], None]


def gpu_status() -> tuple[bool, str]:
    """(a GPU is usable, what was found or why not). Never raises."""
    try:
        import torch
    except ImportError:
        return False, "PyTorch is not installed (pip install 'workload-compiler[gpu]')"
    try:
        if not torch.cuda.is_available():
            return False, "PyTorch sees no GPU (torch.cuda.is_available() is False)"
        return True, f"{torch.cuda.device_count()} x {torch.cuda.get_device_name(0)}"
    except RuntimeError as exc:   # a broken driver install: say so, do not crash
        return False, f"the GPU runtime failed to start: {exc}"


def _time_kernel(torch: Any, fn: Callable[[], Any], target_s: float = 0.02) -> tuple[float, int]:
    """Median seconds of one call of `fn` over 5 timed batches, and the calls per batch."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    one = max(start.elapsed_time(end) / 1e3, 1e-6)
    iters = max(1, min(1000, int(target_s / one)))
    times = []
    for _ in range(5):
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / iters)
    return statistics.median(times), iters * 5


def _gemm(torch: Any, precision: str, shapes: list[tuple[int, int, int]], tick: Progress) -> list[GemmPoint]:
    dev = torch.device("cuda", 0)
    points = []
    one = torch.tensor(1.0, device=dev)

    def scaled(a: Any, b: Any) -> Any:
        return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    for m, n, k in shapes:
        if precision == "fp8":
            a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
            b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()   # column-major, as _scaled_mm needs
            op: Callable[[Any, Any], Any] = scaled
        else:
            dtype = torch.bfloat16 if precision == "bf16" else torch.float16
            a, b = torch.randn(m, k, device=dev, dtype=dtype), torch.randn(k, n, device=dev, dtype=dtype)
            op = torch.matmul
        seconds, reps = _time_kernel(torch, functools.partial(op, a, b))
        points.append(GemmPoint(m=m, n=n, k=k, seconds=seconds, repeats=reps))
        tick(f"gemm {precision} {m}x{n}x{k}")
    torch.cuda.empty_cache()
    return points


def _stream(torch: Any, sizes: tuple[int, ...], tick: Progress) -> list[SizePoint]:
    dev = torch.device("cuda", 0)
    points = []
    for n in sizes:
        a, b, c = (torch.rand(n, device=dev) for _ in range(3))
        seconds, reps = _time_kernel(torch, functools.partial(torch.add, a, b, alpha=0.5, out=c))
        points.append(SizePoint(bytes=3.0 * 4.0 * n, seconds=seconds, repeats=reps))
        tick(f"hbm triad {3 * 4 * n / 2**20:.0f} MiB")
    torch.cuda.empty_cache()
    return points


def _collective_worker(rank: int, world: int, port: int, sizes: tuple[int, ...], out: str) -> None:
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    results: dict[str, list[dict[str, float]]] = {"all_reduce": [], "all_to_all": []}
    for size in sizes:
        x = torch.ones(size // 4, device="cuda", dtype=torch.float32)
        y = torch.empty_like(x)
        ops = {"all_reduce": functools.partial(dist.all_reduce, x),
               "all_to_all": functools.partial(dist.all_to_all_single, y, x)}
        for name, fn in ops.items():
            dist.barrier()
            seconds, reps = _time_kernel(torch, fn, target_s=0.05)
            results[name].append({"bytes": float(size), "seconds": seconds, "repeats": reps})
    if rank == 0:
        Path(out).write_text(json.dumps(results), encoding="utf-8")
    dist.destroy_process_group()


def _collectives(torch: Any, sizes: tuple[int, ...], tick: Progress) -> dict[str, CollectiveRun]:
    world = torch.cuda.device_count()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "collectives.json")
        tick(f"nccl all_reduce / all_to_all over {world} GPUs")
        torch.multiprocessing.spawn(_collective_worker, args=(world, port, sizes, out), nprocs=world, join=True)
        data = json.loads(Path(out).read_text(encoding="utf-8"))
    return {name: CollectiveRun(ranks=world, points=[SizePoint(**p) for p in pts]) for name, pts in data.items()}


def run_calibration(*, tool: str, quick: bool = False, tick: Progress | None = None) -> RawRun:
    """Time everything this GPU supports; returns the raw run (calibration.analyze fits it)."""
    import torch
    say = tick or (lambda _msg: None)
    dev = torch.cuda.get_device_properties(0)
    cc = torch.cuda.get_device_capability(0)
    ms, nks = (QUICK["GEMM_M"], QUICK["GEMM_NK"]) if quick else (GEMM_M, GEMM_NK)
    shapes = [(m, n, k) for m in ms for n, k in nks]
    precisions = ["bf16", "fp16"] + (["fp8"] if cc >= (8, 9) and hasattr(torch, "float8_e4m3fn") else [])
    gemm = {p: _gemm(torch, p, shapes, say) for p in precisions}
    hbm = _stream(torch, QUICK["STREAM"] if quick else STREAM_ELEMENTS, say)
    collectives = (_collectives(torch, QUICK["COLLECTIVE"] if quick else COLLECTIVE_BYTES, say)
                   if torch.cuda.device_count() > 1 else {})
    nccl = ".".join(str(v) for v in torch.cuda.nccl.version()) if torch.cuda.device_count() > 1 else None
    info = DeviceInfo(name=dev.name, count=torch.cuda.device_count(), driver=_driver_version(),
                      runtime=str(torch.version.cuda or getattr(torch.version, "hip", None) or ""),
                      torch=torch.__version__, nccl=nccl, compute_capability=f"{cc[0]}.{cc[1]}",
                      hostname=socket.gethostname())
    return RawRun.model_validate({
        "schema": RAW_SCHEMA, "recorded": f"measured on {info.hostname} with torch {torch.__version__}",
        "device": info, "date": dt.date.today(), "tool": tool, "gemm": gemm, "hbm": hbm,
        "collectives": collectives})


def _driver_version() -> str | None:
    try:
        text = Path("/proc/driver/nvidia/version").read_text(encoding="utf-8")
    except OSError:
        return None
    for word in text.split():
        if word.count(".") >= 1 and word.replace(".", "").isdigit():
            return word
    return None
