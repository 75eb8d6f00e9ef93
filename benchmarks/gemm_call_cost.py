"""What a call of fraglab.gemm costs on the host, against cupy.matmul (issue targets: at most 1.5x CuPy's
per-call time at 256^3, and a first call in a new process under 0.5 s once the disk cache is warm).

Usage (device): python3 benchmarks/gemm_call_cost.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fraglab.bench.call_timing import per_call_us  # noqa: E402

# A new process: import, make inputs, one fraglab.gemm, synchronise; prints the seconds of the call alone.
FIRST_CALL = """
import time, cupy as cp, fraglab
a = cp.random.rand(256, 256, dtype=cp.float32).astype(cp.float16)
b = cp.random.rand(256, 256, dtype=cp.float32).astype(cp.float16)
cp.cuda.runtime.deviceSynchronize()
t0 = time.perf_counter()
fraglab.gemm(a, b, act="relu")
cp.cuda.runtime.deviceSynchronize()
print(time.perf_counter() - t0)
"""
CALLS, ROUNDS = 300, 5   # calls back to back per round, rounds (the median kept)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--n", type=int, default=256)
    args = parser.parse_args(argv)

    import cupy as cp

    import fraglab
    from fraglab.gemm.api import prepare

    n = args.n
    a = cp.random.rand(n, n, dtype=cp.float32).astype(cp.float16)
    b = cp.random.rand(n, n, dtype=cp.float32).astype(cp.float16)
    sync = cp.cuda.runtime.deviceSynchronize
    planned = prepare(a, b, act="relu")
    rows = {
        "cupy.matmul": per_call_us(lambda: cp.matmul(a, b), sync, CALLS, ROUNDS),
        "fraglab.gemm": per_call_us(lambda: fraglab.gemm(a, b, act="relu"), sync, CALLS, ROUNDS),
        "prepare(...)() reused": per_call_us(planned, sync, CALLS, ROUNDS),
    }
    first = []
    for _ in range(3):  # the first run may fill the disk cache; the others find it warm
        done = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, check=True,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        first.append(float(done.stdout.strip().splitlines()[-1]))
    result = {"n": n, "per_call_us": rows, "ratio_to_cupy": {k: v / rows["cupy.matmul"] for k, v in rows.items()},
              "first_call_s": first, "kernel": type(planned.kernel_spec).__name__}
    for name, us in rows.items():
        print(f"{name:24} {us:7.1f} us/call  ({us / rows['cupy.matmul']:.2f}x cupy.matmul)")
    print(f"first fraglab.gemm in a new process (s): {', '.join(f'{s:.3f}' for s in first)} "
          f"(kernel {result['kernel']})")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
