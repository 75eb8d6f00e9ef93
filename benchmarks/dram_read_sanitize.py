"""Small launches of `fraglab peak --memory`'s readers (kernels/bench/dram_read.cu) for compute-sanitizer (memcheck,
racecheck, synccheck): sizes with fewer 16 KB pieces than blocks, a last piece cut short, and more pieces than the
bulk reader's ring has stages. Each launch's sums are checked against the buffer's words. Exits 1 if one is wrong.

Usage (device): compute-sanitizer --tool racecheck python3 benchmarks/dram_read_sanitize.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab.bench import memory  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402

SIZES = (48, 64 * 1024 + 16, 3 * 2**20 + 16 * 1024 - 32)


def main() -> int:
    cp = gpu.cupy()
    rng = cp.random.default_rng(3)
    sm_count = gpu.device_info()["sm_count"]
    readers = memory.runnable(memory.READERS, gpu.compute_capability(), asked=False)
    wrong = 0
    for nbytes in SIZES:
        buffers = [rng.integers(0, 2**32, size=nbytes // 4, dtype=cp.uint32)]
        for reader in readers:
            try:
                memory.Reader(reader, buffers, sm_count).check(0)
            except RuntimeError as exc:
                print(f"{reader} at {nbytes} bytes: {exc}")
                wrong += 1
    print(f"{len(SIZES) * len(readers) - wrong} of {len(SIZES) * len(readers)} launches summed every byte once")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
