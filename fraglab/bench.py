"""Timing and reporting machinery shared by `fraglab gemm --wmma`, `--simt` and `fraglab peak`.

Timing: CUDA events, one pair per rep, warm-up first, medians and the 20th/80th percentiles. The timed
launches are queued behind a short GPU spin so the host's launch cost never lands inside an event pair
(without it, a 20 us kernel launched from Python reads as 30 us). Callers rotate among several input
sets (`fn(i)` gets the rep index, or index mod `rotate`) so that L2 does not keep a small problem warm.

Reporting: a rich progress display, rich tables, atomic JSON and a matplotlib TFLOP/s chart. Nothing
here but `time_cuda` and `queue_spin` touches the GPU.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

from .sources import KernelBuild

SPIN_BUILD = KernelBuild(entry="peak.cu", name_expressions=("fraglab_spin",))
_MAX_SPIN_NS = 500_000_000     # never hold the queue longer than 0.5 s
_L2_BYTES_DEFAULT = 50 * 2**20  # H100/H200: 50 MiB


@dataclass(frozen=True)
class Timing:
    median_ms: float
    p20_ms: float
    p80_ms: float
    reps: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100] (numpy's default method)."""
    if not values:
        raise ValueError("percentile of no values")
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(times_ms: Sequence[float]) -> Timing:
    return Timing(median_ms=statistics.median(times_ms), p20_ms=percentile(times_ms, 20),
                  p80_ms=percentile(times_ms, 80), reps=len(times_ms))


def rotation_count(bytes_per_set: int, l2_bytes: Optional[int] = None, *, factor: float = 2.0,
                   cap: int = 64) -> int:
    """How many input sets to cycle through so that one pass over them is `factor` x the L2 size."""
    l2 = l2_bytes or l2_cache_bytes()
    if bytes_per_set <= 0:
        raise ValueError("bytes_per_set must be positive")
    return max(1, min(cap, math.ceil(factor * l2 / bytes_per_set)))


def l2_cache_bytes() -> int:
    """The present GPU's L2 size, or 50 MiB (H100/H200) when it cannot be read."""
    try:
        from . import gpu
        cp = gpu.cupy()
        return int(cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["l2CacheSize"])
    except Exception:  # no GPU: only used to size rotations, so the H200's value is a fine default
        return _L2_BYTES_DEFAULT


def queue_spin(ns: int) -> None:
    """Keep the GPU busy for `ns` nanoseconds so that launches queued meanwhile run back to back."""
    from . import gpu
    cp = gpu.cupy()
    kernel = gpu.function(SPIN_BUILD, "fraglab_spin")
    kernel((1,), (1,), (cp.int64(min(max(ns, 0), _MAX_SPIN_NS)),))


def time_cuda(fn: Callable[[int], Any], *, warmup: int = 5, reps: int = 50, rotate: Optional[int] = None,
              spin: bool = True) -> Timing:
    """Median of `reps` timed calls of fn(i) on the current stream, each between its own event pair.

    fn(i) gets the rep index, or i % rotate when `rotate` is given. `spin` queues the timed launches
    behind a GPU spin lasting longer than their enqueueing, so host overhead is not timed.
    """
    return summarize(time_cuda_samples(fn, warmup=warmup, reps=reps, rotate=rotate, spin=spin))


def time_interleaved(fns: dict[str, Callable[[int], Any]], *, rounds: int = 3, warmup: int = 3, reps: int = 30,
                     rotate: Optional[int] = None) -> dict[str, Timing]:
    """Time several variants in alternating rounds and pool each one's samples: a drift of the clock
    (the H200 ran register-only loops 10 % apart within one minute) then hits every variant alike.
    The first round keeps the given order; later rounds shuffle it (seeded, so runs repeat), so no
    variant always follows the same one: under the power limit a kernel that follows a power-hungry
    one may start at a lower clock."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for r, order in enumerate(round_orders(list(fns), rounds)):
        for name in order:
            samples[name] += time_cuda_samples(fns[name], warmup=warmup if r == 0 else 1, reps=reps, rotate=rotate)
    return {name: summarize(v) for name, v in samples.items()}


def round_orders(names: list, rounds: int, seed: int = 2026) -> list[list]:
    """The order of each round of time_interleaved: as given first, then seeded shuffles."""
    import random

    rng = random.Random(seed)
    orders = []
    for r in range(rounds):
        order = list(names)
        if r:
            rng.shuffle(order)
        orders.append(order)
    return orders


def time_cuda_samples(fn: Callable[[int], Any], *, warmup: int = 5, reps: int = 50, rotate: Optional[int] = None,
                      spin: bool = True) -> list[float]:
    """The per-rep times (ms) behind time_cuda."""
    if reps < 1 or warmup < 0:
        raise ValueError("reps must be >= 1 and warmup >= 0")
    from . import gpu
    cp = gpu.cupy()
    index = (lambda i: i % rotate) if rotate else (lambda i: i)
    # the first call may compile; time the others to learn the host's enqueue cost per call
    host_ns = []
    for i in range(max(warmup, 2)):
        t0 = time.perf_counter_ns()
        fn(index(i))
        host_ns.append(time.perf_counter_ns() - t0)
    stream = cp.cuda.get_current_stream()
    stream.synchronize()
    starts = [cp.cuda.Event() for _ in range(reps)]
    ends = [cp.cuda.Event() for _ in range(reps)]
    if spin:
        per_call = statistics.median(host_ns[1:]) if len(host_ns) > 1 else host_ns[0]
        queue_spin(int(1.5 * reps * (per_call + 4_000)) + 200_000)
    for i in range(reps):
        starts[i].record(stream)
        fn(index(i))
        ends[i].record(stream)
    ends[-1].synchronize()
    return [cp.cuda.get_elapsed_time(s, e) for s, e in zip(starts, ends)]


def tflops(m: int, n: int, k: int, ms: float) -> float:
    """2*M*N*K floating-point operations in `ms` milliseconds, in TFLOP/s."""
    if ms is None or not ms > 0:
        return float("nan")
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def progress(*, transient: bool = False):
    """A rich Progress (use as a context manager) drawing on stderr, so stdout stays clean for tables/JSON."""
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                               TimeElapsedColumn)

    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=Console(stderr=True), transient=transient)


def _atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Write to a temporary file next to `path`, then rename: a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; the user asked for an ordinary file
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _json_default(value: Any) -> Any:
    try:
        import numpy as np
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            return value.tolist()
    except ImportError:
        pass
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "as_dict"):
        return value.as_dict()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _json_safe(value: Any) -> Any:
    """NaN/inf become null: strict JSON has no NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def save_json(obj: Any, path: Path) -> None:
    """Write `obj` as indented JSON, whole or not at all."""
    text = json.dumps(_json_safe(json.loads(json.dumps(obj, default=_json_default))), indent=2) + "\n"
    _atomic_write(Path(path), lambda tmp: tmp.write_text(text))


def size_label(row: dict) -> str:
    m, n, k = row["m"], row["n"], row["k"]
    return f"{m}^3" if m == n == k else f"{m}x{n}x{k}"


def tflops_figure(rows: Iterable[dict], title: str):
    """A Figure of TFLOP/s per problem size, one line per kernel (rows: kernel, m, n, k, tflops)."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    rows = [r for r in rows if r.get("tflops") is not None and math.isfinite(r["tflops"])]
    sizes = sorted({(r["m"], r["n"], r["k"]) for r in rows}, key=lambda s: (s[0] * s[1] * s[2], s))
    labels = [size_label({"m": m, "n": n, "k": k}) for m, n, k in sizes]
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    fig = Figure(figsize=(max(6.0, 1.1 * len(sizes) + 3), 4.5), layout="constrained")
    ax = fig.add_subplot()
    for name in kernels:
        pts = {(r["m"], r["n"], r["k"]): r["tflops"] for r in rows if r["kernel"] == name}
        xs = [i for i, s in enumerate(sizes) if s in pts]
        ax.plot(xs, [pts[sizes[i]] for i in xs], marker="o", label=name)
    ax.set_xticks(range(len(sizes)), labels, rotation=30 if len(sizes) > 6 else 0)
    ax.set_xlabel("problem size (M x N x K)")
    ax.set_ylabel("TFLOP/s (2MNK / median time)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if kernels:
        ax.legend(fontsize="small")
    return fig


def plot_tflops(rows: Iterable[dict], path: Path, title: str) -> Path:
    """Save tflops_figure(rows, title) to `path` (format from the suffix), atomically."""
    fig = tflops_figure(rows, title)
    path = Path(path)
    _atomic_write(path, lambda tmp: fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", dpi=130))
    return path


def format_value(value: Any, fmt: str = "") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if fmt:
        return format(value, fmt)
    return str(value)


def rows_table(rows: Sequence[dict], columns: Sequence[tuple[str, str, str]], title: str = ""):
    """A rich Table of `rows`; columns are (key, header, format spec); missing values show as '-'."""
    from rich.table import Table

    table = Table(title=title or None)
    for _, header, fmt in columns:
        table.add_column(header, justify="left" if not fmt else "right")
    for row in rows:
        cells = []
        for key, _, fmt in columns:
            text = format_value(row.get(key), fmt)
            if key == "status" and text in ("PASSED", "FAILED"):
                text = f"[green]{text}[/]" if text == "PASSED" else f"[red]{text}[/]"
            cells.append(text)
        table.add_row(*cells)
    return table


__all__ = ["Timing", "time_cuda", "time_cuda_samples", "time_interleaved", "round_orders", "queue_spin", "rotation_count", "l2_cache_bytes", "summarize", "percentile",
           "tflops", "progress", "save_json", "plot_tflops", "tflops_figure", "rows_table", "size_label"]
