"""`fraglab peak --memory`: how fast the present GPU's DRAM is read in one launch, by size
(kernels/bench/dram_read.cu). A decode GEMM's time is its weight's read, so this is the ceiling it is judged
against: a rate quoted for gigabytes is not what 32 MB read once can reach, since every launch pays the ramp of
its first loads and the drain of its last.

Two readers of one buffer, each summing every 32-bit word (mod 2^64) into one partial per block:
- `ldg`: a full grid (READ_BLOCKS_PER_SM blocks of 256 threads per SM), every thread with four 16-byte
  non-coherent loads in flight, grid-stride: the classic read ceiling.
- `bulk`: one block per SM streaming 16 KB pieces into an 8-deep shared-memory ring by cp.async.bulk on
  mbarriers, as the wgmma and skinny GEMMs stream their weight: the ceiling of that way of reading.

Timing is the GEMM benchmarks' (fraglab.bench.timing): CUDA events per launch behind a GPU spin, the readers
interleaved in rounds, buffers rotated so that one pass is twice L2, so every launch reads DRAM. Each reader's
partial sums are checked against the buffers' own sums after timing: a reader that skipped or repeated bytes is
an error, not a fast row. Sizes, parsing and the row arithmetic run on the CPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import product
from typing import Optional

from ..errors import InputError, check_choice
from ..runtime.build import KernelBuild
from .timing import l2_cache_bytes, rotation_count, time_interleaved

READERS = ("ldg", "bulk")
READ_BUILD = KernelBuild(entry="bench/dram_read.cu", name_expressions=("fraglab_read_ldg", "fraglab_read_bulk"))
KERNEL = {"ldg": "fraglab_read_ldg", "bulk": "fraglab_read_bulk"}
# The constants of kernels/bench/dram_read.cu (fraglab_dram_read::k*), checked against it by a test.
LDG_THREADS = 256              # kThreads
LDG_UNROLL = 4                 # kUnroll: 16-byte loads in flight per thread
READ_BLOCKS_PER_SM = 8         # 8 x 256 threads: a full SM, 128 KB in flight
BULK_CHUNK = 16384             # kChunk
BULK_STAGES = 8                # kStages
BULK_THREADS = 32 * 5          # kBulkThreads: a producer warp and four consumer warps
BULK_SMEM = BULK_STAGES * BULK_CHUNK   # kBulkSmem
WORD = 16                      # bytes per load; a size is read in whole 16-byte words
MIB = 1 << 20
MAX_BYTES = 16 << 30           # one size at most (the rotation needs twice L2 besides)
ROTATION_CAP_BYTES = 6 << 30   # all copies of one size together, as fraglab.bench.shapes caps its inputs


@dataclass(frozen=True)
class ReadSize:
    label: str    # what the size is, e.g. "4096x14336 f16" or "1024 MiB"
    nbytes: int   # bytes read per launch: a whole number of 16-byte words


def _whole_words(nbytes: int) -> int:
    return nbytes // WORD * WORD


def default_sizes() -> list[ReadSize]:
    """The weights of `fraglab gemm --shapes decode` (N x K f16 for N, K in its set; one row per byte count), then
    1 GiB, where the ramp no longer shows."""
    from .shapes import DECODE_NK

    sizes: dict[int, ReadSize] = {}
    for n, k in product(DECODE_NK, repeat=2):
        nbytes = n * k * 2
        sizes.setdefault(nbytes, ReadSize(f"{min(n, k)}x{max(n, k)} f16", nbytes))
    sizes.setdefault(1 << 30, ReadSize("1024 MiB", 1 << 30))
    return sorted(sizes.values(), key=lambda s: s.nbytes)


_SIZE_FORMS = "MiB (e.g. 32 or 0.5) or an f16 weight N x K (e.g. 4096x14336)"


def parse_sizes(text: str) -> list[ReadSize]:
    """--sizes: a comma-separated list of MiB or N x K f16 weights, each of at least 16 bytes and at most 16 GiB;
    one InputError naming --sizes otherwise."""
    sizes = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        weight = re.fullmatch(r"(\d+)\s*[xX]\s*(\d+)", part)
        try:
            if weight:
                n, k = int(weight.group(1)), int(weight.group(2))
                size = ReadSize(f"{n}x{k} f16", _whole_words(n * k * 2))
            elif re.fullmatch(r"\d+(\.\d*)?|\.\d+", part):
                mib = float(part)
                size = ReadSize(f"{part} MiB", _whole_words(int(mib * MIB)))
            else:
                raise ValueError(part)
        except (ValueError, OverflowError):
            raise InputError(f"invalid --sizes {text!r}: {part!r} is not a size; give {_SIZE_FORMS}",
                             argument="--sizes") from None
        if not WORD <= size.nbytes <= MAX_BYTES:
            raise InputError(f"invalid --sizes {text!r}: {part!r} is {size.nbytes} bytes; each size must be "
                             f"16 bytes to 16 GiB, given as {_SIZE_FORMS}", argument="--sizes")
        sizes.append(size)
    if not sizes:
        raise InputError(f"invalid --sizes {text!r}: give one or more sizes, {_SIZE_FORMS}", argument="--sizes")
    return sizes


BULK_MIN_SM = 90   # cp.async.bulk


def parse_readers(names: Optional[list[str]]) -> tuple[str, ...]:
    """--reader (repeatable): READERS, default both."""
    if not names:
        return READERS
    return tuple(dict.fromkeys(check_choice(name, READERS, "--reader") for name in names))


def unsupported_reason(reader: str, compute_capability: int) -> Optional[str]:
    """Why a GPU of `compute_capability` (e.g. 80) cannot run `reader`, or None if it can."""
    if reader == "bulk" and compute_capability < BULK_MIN_SM:
        return f"the bulk reader needs sm_90 or later (cp.async.bulk); this GPU is sm_{compute_capability}"
    return None


def runnable(readers: tuple[str, ...], compute_capability: int, asked: bool) -> tuple[str, ...]:
    """The readers to run: those asked for by name must all run here (else one InputError naming --reader);
    by default, every reader this GPU runs."""
    if asked:
        for reader in readers:
            why = unsupported_reason(reader, compute_capability)
            if why:
                raise InputError(f"invalid --reader {reader}: {why}", argument="--reader")
        return readers
    return tuple(r for r in readers if unsupported_reason(r, compute_capability) is None)


def launch_shape(reader: str, sm_count: int) -> tuple[int, int, int]:
    """(blocks, threads per block, dynamic shared-memory bytes) of one launch of `reader`."""
    if reader == "ldg":
        return sm_count * READ_BLOCKS_PER_SM, LDG_THREADS, 0
    check_choice(reader, READERS, "reader")
    return sm_count, BULK_THREADS, BULK_SMEM


def copies_for(nbytes: int, l2_bytes: int) -> int:
    """Buffers to rotate through: one pass twice L2 (fraglab.bench.timing.rotation_count), all of them within
    ROTATION_CAP_BYTES."""
    return max(1, min(rotation_count(nbytes, l2_bytes), ROTATION_CAP_BYTES // nbytes))


def reps_for(nbytes: int) -> int:
    """Timed launches per round: about 40 ms of reading at ~3 TB/s, 8 to 60."""
    est_ms = nbytes / 3e12 * 1e3 + 0.005
    return int(min(60, max(8, 40 / est_ms)))


def row(reader: str, size: ReadSize, median_ms: float, p20_ms: float, p80_ms: float, copies: int,
        peak_tbs: Optional[float]) -> dict:
    """One table row: the median launch in us, the bytes per second, and the share of DRAM's peak if known."""
    tbs = size.nbytes / (median_ms * 1e-3) / 1e12
    return {"reader": reader, "label": size.label, "bytes": size.nbytes, "mib": size.nbytes / MIB,
            "us": median_ms * 1e3, "p20_us": p20_ms * 1e3, "p80_us": p80_ms * 1e3, "tbs": tbs,
            "peak_share": tbs / peak_tbs if peak_tbs else None, "copies": copies}


COLUMNS = (("reader", "reader", ""), ("label", "size", ""), ("mib", "MiB", ".1f"), ("us", "us", ".1f"),
           ("tbs", "TB/s", ".2f"), ("peak_share", "of peak", ".0%"), ("copies", "copies", "d"))


class Reader:
    """Launches one reader over a list of same-sized CuPy buffers: `reader(i)` reads buffer i once;
    `check(i)` runs it again and compares the partial sums with the buffer's own."""

    def __init__(self, reader: str, buffers: list, sm_count: int):
        from ..runtime import gpu

        self._cp = gpu.cupy()
        self.reader = reader
        self.buffers = buffers
        self.nbytes = _whole_words(int(buffers[0].nbytes))
        blocks, threads, smem = launch_shape(reader, sm_count)
        self._shape = ((blocks,), (threads,))
        self._smem = smem
        self._kernel = gpu.function(READ_BUILD, KERNEL[reader])
        if smem > 48 * 1024:   # above 48 KiB a kernel must opt in
            self._kernel.max_dynamic_shared_size_bytes = smem
        self._partials = self._cp.empty(blocks, dtype=self._cp.uint64)
        self._count = self._cp.int64(self.nbytes // WORD if reader == "ldg" else self.nbytes)

    def __call__(self, i: int) -> None:
        self._kernel(*self._shape, (self.buffers[i], self._count, self._partials), shared_mem=self._smem)

    def check(self, i: int) -> None:
        cp = self._cp
        self._partials.fill(0xA5)   # poison: a block that never wrote its partial shows
        self(i)
        got = int(self._partials.sum(dtype=cp.uint64))
        words = self.buffers[i].view(cp.uint32)[: self.nbytes // 4]
        want = int(words.sum(dtype=cp.uint64))
        if got != want:
            raise RuntimeError(f"the {self.reader} reader summed {got:#x} over buffer {i} ({self.nbytes} bytes), "
                               f"not its words' {want:#x}: it skipped or repeated bytes")


def measure(sizes: list[ReadSize], readers: tuple[str, ...] = READERS, progress=None) -> list[dict]:
    """Time each reader at each size (interleaved rounds, buffers rotated past L2), check their sums, and give
    one row per (size, reader)."""
    from ..runtime import gpu

    cp = gpu.cupy()
    info = gpu.device_info()
    peak = info.get("memory_peak_tbs")
    l2 = l2_cache_bytes()
    task = progress.add_task(f"peak --memory ({len(sizes)} sizes)", total=len(sizes)) if progress else None
    rows = []
    rng = cp.random.default_rng(2026)
    for size in sizes:
        copies = copies_for(size.nbytes, l2)
        buffers = [rng.integers(0, 2**32, size=size.nbytes // 4, dtype=cp.uint32) for _ in range(copies)]
        runners = {r: Reader(r, buffers, info["sm_count"]) for r in readers}
        timings = time_interleaved(runners, rounds=3, reps=reps_for(size.nbytes), rotate=copies)
        for r, runner in runners.items():
            runner.check(copies - 1)
            t = timings[r]
            rows.append(row(r, size, t.median_ms, t.p20_ms, t.p80_ms, copies, peak))
        buffers = runners = None
        cp.get_default_memory_pool().free_all_blocks()
        if progress:
            progress.advance(task)
    return rows


__all__ = ["READERS", "READ_BUILD", "ReadSize", "default_sizes", "parse_sizes", "parse_readers", "unsupported_reason",
           "runnable", "launch_shape",
           "copies_for", "reps_for", "row", "COLUMNS", "Reader", "measure"]
