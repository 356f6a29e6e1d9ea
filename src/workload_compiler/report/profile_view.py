"""The terminal view of a `wkc profile` result: the three stages apart, with their spread, the
machine, the values a sheet takes, and what the exercise does not predict. Computes nothing."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from ..measure.profile import ProfileResult
from ..units import format_bytes_binary, format_bytes_decimal, format_duration

_RATE: dict[str, Callable[[float], str]] = {
    "B/s": lambda v: f"{format_bytes_decimal(v)}/s", "records/s": lambda v: f"{v:,.0f} records/s",
         "FLOP/s": lambda v: f"{v / 1e9:,.2f} GFLOP/s"}
_WORK: dict[str, Callable[[float], str]] = {
    "B": format_bytes_decimal, "records": lambda v: f"{v:,.0f}", "FLOP": lambda v: f"{v / 1e9:,.2f} GFLOP"}


def _ms(s: float) -> str:
    return f"{s * 1e3:,.1f} ms" if s < 10 else format_duration(s)


def render_profile(r: ProfileResult, console: Console) -> None:
    m = r.machine
    mem = f"{format_bytes_binary(m.memory_bytes)}" if m.memory_bytes else "memory unknown"
    disk = ", ".join(str(x) for x in (m.storage.device, m.storage.model, m.storage.filesystem) if x) or "unknown"
    rot = "" if m.storage.rotational is None else (" (rotational)" if m.storage.rotational else " (non-rotational)")
    console.print(Panel(
        f"[bold]{m.cpu_model}[/] · {m.sockets} socket(s), {m.cores} cores, {m.threads} threads · {mem}\n"
        f"storage under {m.storage.path}: {disk}{rot}\n{m.os} · kernel {m.kernel} · {m.python}\n"
        + " · ".join(f"{k} {v}" for k, v in m.libraries.items()),
        title=f"Machine ({m.hostname})", title_align="left", expand=False))
    table = Table(title=f"read / parse / compute, {r.repeats} repeats each (median, spread over repeats)")
    for col, just in (("format", "left"), ("stage", "left"), ("median", "right"), ("±stdev", "right"),
                      ("min–max", "right"), ("work", "right"), ("rate", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for s in sorted(r.stages, key=lambda s: (s.format, ("read", "parse", "compute").index(s.stage))):
        t = s.time
        table.add_row(s.format, s.stage, _ms(t.median_s), f"{t.relative:.0%}",
                      f"{_ms(t.min_s)}–{_ms(t.max_s)}", _WORK[s.work_unit](s.work), _RATE[s.rate_unit](s.rate))
    console.print(table)
    ds = r.dataset
    sizes = ", ".join(f"{f}: {int(v['files']):,} files, {format_bytes_decimal(v['bytes'])}, "
                      f"{int(v.get('records', 0)):,} records" for f, v in ds.formats.items())
    cache = ("page cache dropped before each read (posix_fadvise)" if r.page_cache_dropped
             else "[yellow]page cache could not be dropped: reads may come from memory[/]")
    warm = ", ".join(f"{f} {_ms(s)}" for f, s in r.warm_read_s.items())
    console.print(f"data set ({ds.source}{'' if ds.seed is None else f', seed {ds.seed}'}): {sizes}\n"
                  f"{cache}; {r.warmup}; one warm read for contrast: {warm}\nwall time {r.wall_s:.1f} s",
                  highlight=False)
    values = Table(title=f"measured values (bound to cpu {m.cpu_model!r}; `--into FILE` writes them)")
    for col in ("field", "value", "± stdev", "unit"):
        values.add_column(col)
    for key, v in r.values.items():
        values.add_row(key, f"{v.value:.4g}", f"{v.spread:.2g}" if v.spread is not None else "—", v.unit)
    console.print(values)
    console.print(Panel(r.does_not_predict, title="What this does not predict", title_align="left",
                        border_style="yellow"))
