"""The profiling exercise's data set: many small records in three formats, and the three stages
it times apart (seed 003: "measures reading, parsing and arithmetic separately").

Formats, as a data loader meets them:
- json:  JSON Lines shards (one record per line: id, label, 16 features, a short text);
- csv:   CSV shards with a header (id, label, f0..f15);
- image: one binary PPM (P6, 64 x 64 RGB) file per record, the way image data sets are laid out.

Stages:
- read:    bytes from storage into memory (the files' page cache dropped first, where the OS lets us);
- parse:   bytes to records (json.loads per line; csv.reader + float(); PPM header + np.frombuffer);
- compute: NumPy arithmetic on the records, FLOPs counted by formula:
    tabular: standardize (4 FLOP/element) + X(n x 16) @ W1(16 x 64) + ReLU + @ W2(64 x 10)
             = n * (4*16 + 2*16*64 + 64 + 2*64*10)
    image:   scale and normalize (3 FLOP/element) + flatten(n x 12288) @ W(12288 x 64)
             = n * (3*12288 + 2*12288*64)
Generation is seeded, so the same size gives the same bytes on every machine.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from ..paths import existing_directory

FORMATS = ("json", "csv", "image")
FEATURES = 16
IMAGE_SIDE = 64
IMAGE_CHANNELS = 3
SHARD_BYTES = 1 << 20            # JSON / CSV shards of about 1 MiB
SUFFIX = {"json": ".jsonl", "csv": ".csv", "image": ".ppm"}
_WORDS = ("cat", "dog", "ship", "truck", "bird", "frog", "horse", "deer", "plane", "car")


@dataclass(frozen=True, kw_only=True)
class DataFiles:
    fmt: str
    paths: tuple[Path, ...]
    bytes: int


def json_lines(rng: np.random.Generator, start: int, n: int) -> bytes:
    feats = rng.standard_normal((n, FEATURES)).round(5)
    labels = rng.integers(0, len(_WORDS), n)
    lines = [json.dumps({"id": start + i, "label": int(labels[i]), "features": feats[i].tolist(),
                         "text": f"a photo of a {_WORDS[labels[i]]}"}) for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


def csv_rows(rng: np.random.Generator, start: int, n: int) -> bytes:
    feats = rng.standard_normal((n, FEATURES)).round(5)
    labels = rng.integers(0, len(_WORDS), n)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["id", "label", *(f"f{j}" for j in range(FEATURES))])
    for i in range(n):
        w.writerow([start + i, int(labels[i]), *feats[i].tolist()])
    return buf.getvalue().encode()


def ppm_image(rng: np.random.Generator) -> bytes:
    """A 64 x 64 RGB image: smooth gradients plus noise, so it is not all zeros or all noise."""
    y, x = np.mgrid[0:IMAGE_SIDE, 0:IMAGE_SIDE]
    base = np.stack([x * 4, y * 4, (x + y) * 2], axis=-1).astype(np.float64)
    pixels = np.clip(base + rng.normal(0, 24, base.shape), 0, 255).astype(np.uint8)
    return f"P6\n{IMAGE_SIDE} {IMAGE_SIDE}\n255\n".encode() + pixels.tobytes()


def write_dataset(root: Path, size_bytes: float, formats: Iterable[str], seed: int = 0,
                  tick: Callable[[], None] | None = None) -> list[DataFiles]:
    """Write about `size_bytes` split evenly over `formats`; every file fsync'ed so its page cache
    can be dropped before the timed reads."""
    fmts = list(formats)
    share = size_bytes / len(fmts)
    rng = np.random.default_rng(seed)
    out: list[DataFiles] = []
    for fmt in fmts:
        folder = root / fmt
        folder.mkdir(parents=True, exist_ok=True)
        paths: list[Path] = []
        written = 0
        while written < share:
            i = len(paths)
            if fmt == "image":
                data = ppm_image(rng)
            else:
                per = 220 if fmt == "json" else 150          # bytes per record, near enough for the count
                n = max(1, min(int(SHARD_BYTES / per), int((share - written) / per) + 1))
                data = (json_lines if fmt == "json" else csv_rows)(rng, i * 10**6, n)
            path = folder / f"{fmt}-{i:06d}{SUFFIX[fmt]}"
            _write_synced(path, data)
            paths.append(path)
            written += len(data)
            if tick is not None:
                tick()
        out.append(DataFiles(fmt=fmt, paths=tuple(paths), bytes=written))
    return out


def _write_synced(path: Path, data: bytes) -> None:
    with path.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def find_dataset(root: Path) -> list[DataFiles]:
    """The files of a directory (`--input`), grouped by format from their suffix."""
    existing_directory(root, "--input", "an existing directory of .jsonl/.json, .csv or .ppm files")
    groups: dict[str, list[Path]] = {f: [] for f in FORMATS}
    by_suffix = {".jsonl": "json", ".json": "json", ".csv": "csv", ".ppm": "image"}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        fmt = by_suffix.get(path.suffix.lower())
        if fmt is not None:
            groups[fmt].append(path)
    found = [DataFiles(fmt=f, paths=tuple(ps), bytes=sum(p.stat().st_size for p in ps))
             for f, ps in groups.items() if ps]
    if not found:
        raise InputError("--input", str(root), "a directory holding .jsonl/.json, .csv or .ppm files (none found)")
    return found


def drop_cache(paths: Iterable[Path]) -> bool:
    """Ask the kernel to drop the files' cached pages (posix_fadvise DONTNEED; no root needed for
    clean pages). False where the call is unavailable: the reads may then come from memory."""
    if not hasattr(os, "posix_fadvise"):
        return False
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return True


def read_files(paths: Iterable[Path]) -> list[bytes]:
    return [p.read_bytes() for p in paths]


@dataclass(frozen=True, kw_only=True)
class Records:
    count: int
    features: npt.NDArray[np.float32] | None = None     # tabular: (n, 16)
    images: npt.NDArray[np.uint8] | None = None         # image: (n, 64, 64, 3)


def parse(fmt: str, blobs: list[bytes]) -> Records:
    """Bytes to records, the way a Python data loader does it."""
    if fmt == "json":
        rows = [json.loads(line) for blob in blobs for line in blob.splitlines() if line]
        feats = np.asarray([r["features"] for r in rows], dtype=np.float32).reshape(len(rows), FEATURES)
        return Records(count=len(rows), features=feats)
    if fmt == "csv":
        values: list[list[float]] = []
        for blob in blobs:
            reader = csv.reader(io.StringIO(blob.decode()))
            next(reader, None)
            values += [[float(v) for v in row[2:]] for row in reader if row]
        return Records(count=len(values), features=np.asarray(values, dtype=np.float32).reshape(-1, FEATURES))
    if fmt == "image":
        imgs = [_ppm(blob) for blob in blobs]
        return Records(count=len(imgs), images=np.stack(imgs) if imgs else None)
    raise InputError("--format", fmt, "one of " + ", ".join(FORMATS))


def _ppm(blob: bytes) -> npt.NDArray[np.uint8]:
    """Binary PPM: 'P6', width, height, maxval (whitespace separated), one whitespace, then pixels."""
    fields: list[bytes] = []
    pos = 0
    while len(fields) < 4:
        while blob[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while end < len(blob) and not blob[end:end + 1].isspace():
            end += 1
        fields.append(blob[pos:end])
        pos = end
    if fields[0] != b"P6" or fields[3] != b"255":
        raise InputError("--input", fields[0].decode(errors="replace"), "binary PPM (P6) images with maxval 255")
    width, height = int(fields[1]), int(fields[2])
    pixels = np.frombuffer(blob, dtype=np.uint8, count=width * height * 3, offset=pos + 1)
    return pixels.reshape(height, width, 3)


Weights = tuple[npt.NDArray[np.float32], ...]


def weights_for(records: Records, rng: np.random.Generator) -> Weights:
    """The compute stage's weight matrices, drawn once before the timed repeats: generating them is
    random-number work, not the arithmetic on the records the stage times."""
    if records.features is not None:
        return (rng.standard_normal((FEATURES, 64)).astype(np.float32),
                rng.standard_normal((64, 10)).astype(np.float32))
    if records.images is not None:
        return (rng.standard_normal((IMAGE_SIDE * IMAGE_SIDE * IMAGE_CHANNELS, 64)).astype(np.float32),)
    return ()


def compute(records: Records, rng: np.random.Generator, weights: Weights | None = None) -> float:
    """The arithmetic stage; returns the FLOPs done (formulas in the module docstring). `weights`
    from `weights_for` (drawn here when not given)."""
    w = weights if weights is not None else weights_for(records, rng)
    if records.features is not None and records.count:
        x = records.features
        x = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)
        _sink(np.maximum(x @ w[0], 0.0) @ w[1])
        return float(records.count * (4 * FEATURES + 2 * FEATURES * 64 + 64 + 2 * 64 * 10))
    if records.images is not None and records.count:
        pixels = IMAGE_SIDE * IMAGE_SIDE * IMAGE_CHANNELS
        x = records.images.reshape(records.count, pixels).astype(np.float32)
        x = (x / 255.0 - 0.5) / 0.25
        _sink(x @ w[0])
        return float(records.count * (3 * pixels + 2 * pixels * 64))
    return 0.0


def _sink(value: Any) -> None:
    """Touch the result so no stage is skipped as dead code."""
    if not np.isfinite(np.asarray(value, dtype=np.float64).sum()):
        raise ArithmeticError("non-finite result in the compute stage")
