"""Timing and reporting machinery shared by `fraglab gemm --wmma`, `--simt` and `fraglab peak`.

Timing: CUDA events, one pair per rep, warm-up first, medians and the 20th/80th percentiles. The timed
launches are queued behind a short GPU spin so the host's launch cost never lands inside an event pair
(without it, a 20 us kernel launched from Python reads as 30 us). Callers rotate among several input
sets (`fn(i)` gets the rep index, or index mod `rotate`) so that L2 does not keep a small problem warm.
A rep may also be a chain of `chain` calls back to back between one event pair (its time per call): the way a
model's layers run, where a kernel may start while the one before it ends (programmatic dependent launch); an
event recorded between two kernels keeps the second from starting before the first has finished.

Also the rich progress display. Tables, JSON and the chart are in fraglab.bench.report. Nothing here but
`time_cuda` and `queue_spin` touches the GPU.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Optional, Sequence

from ..runtime.build import KernelBuild

SPIN_BUILD = KernelBuild(entry="bench/peak.cu", name_expressions=("fraglab_spin",))
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
        from ..runtime import gpu
        cp = gpu.cupy()
        return int(cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["l2CacheSize"])
    except Exception:  # no GPU: only used to size rotations, so the H200's value is a fine default
        return _L2_BYTES_DEFAULT


def queue_spin(ns: int) -> None:
    """Keep the GPU busy for `ns` nanoseconds so that launches queued meanwhile run back to back."""
    from ..runtime import gpu
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
                     rotate: Optional[int] = None, chain: int = 1) -> dict[str, Timing]:
    """Time several variants in alternating rounds and pool each one's samples: a drift of the clock
    (the H200 ran register-only loops 10 % apart within one minute) then hits every variant alike.
    The first round keeps the given order; later rounds shuffle it (seeded, so runs repeat), so no
    variant always follows the same one: under the power limit a kernel that follows a power-hungry
    one may start at a lower clock."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for r, order in enumerate(round_orders(list(fns), rounds)):
        for name in order:
            samples[name] += time_cuda_samples(fns[name], warmup=warmup if r == 0 else 1, reps=reps, rotate=rotate,
                                               chain=chain)
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
                      spin: bool = True, chain: int = 1) -> list[float]:
    """The per-rep times (ms) behind time_cuda; with `chain` > 1 each rep is that many calls between one event
    pair (the calls' indices run on from rep to rep: i * chain + j), and its time is per call."""
    if reps < 1 or warmup < 0 or chain < 1:
        raise ValueError("reps and chain must be >= 1 and warmup >= 0")
    from ..runtime import gpu
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
        queue_spin(int(1.5 * reps * (chain * per_call + 4_000)) + 200_000)
    for i in range(reps):
        starts[i].record(stream)
        for j in range(chain):
            fn(index(i * chain + j))
        ends[i].record(stream)
    ends[-1].synchronize()
    return [cp.cuda.get_elapsed_time(s, e) / chain for s, e in zip(starts, ends)]


def tflops(m: int, n: int, k: int, ms: float) -> float:
    """2*M*N*K floating-point operations in `ms` milliseconds, in TFLOP/s."""
    if ms is None or not ms > 0:
        return float("nan")
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def progress(*, transient: bool = False):
    """A rich Progress (use as a context manager) drawing on stderr, so stdout stays clean for tables/JSON;
    disabled where stderr is not a terminal."""
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                               TimeElapsedColumn)

    console = Console(stderr=True)
    # off when stderr is not a terminal: a log or pipe gets no bar, and no blank line when the bar stops
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=transient, disable=not console.is_terminal)
