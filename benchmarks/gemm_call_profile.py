"""Where fraglab.gemm's host time goes at 256^3 (cProfile over many one-shot calls; the kernel is tiny).

Usage (device): python3 benchmarks/gemm_call_profile.py [calls]
"""

from __future__ import annotations

import cProfile
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    import cupy as cp

    import fraglab

    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    a = cp.random.rand(256, 256, dtype=cp.float32).astype(cp.float16)
    b = cp.random.rand(256, 256, dtype=cp.float32).astype(cp.float16)
    fraglab.gemm(a, b, act="relu")
    cp.cuda.runtime.deviceSynchronize()
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(calls):
        fraglab.gemm(a, b, act="relu")
    profile.disable()
    cp.cuda.runtime.deviceSynchronize()
    pstats.Stats(profile).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
