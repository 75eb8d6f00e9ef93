"""Small skinny GEMM launches for compute-sanitizer (memcheck, racecheck, synccheck): every warp grid, both B
orders, B by TMA and by cp.async, every split of K (1, 2, 4, 8 blocks of a cluster reducing through distributed
shared memory) in clusters of 1, 2, 4 and 8 blocks, edges in M, N and K, a last cluster with tiles past N, C, a
bias and Z, every D type, row pitches on A, B and D. Exits 1 if a result is wrong.

Usage (device): compute-sanitizer --tool racecheck --report-api-errors no python3 benchmarks/skinny_sanitize.py
(cuda-bindings probes the driver's entry points when it encodes the TMA map; those misses are not the kernel's)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab.gemm import skinny  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402


def main() -> int:
    cp = gpu.cupy()
    rng = np.random.default_rng(0)
    bad = 0
    # (M, N, K, B order, splits, D type, pitch pad, layout): N 200 leaves 4 tiles, so the last cluster holds tiles
    # past N; every warp grid, each with a split that reduces across the cluster
    cases = [(1, 200, 1040, "F", 8, "f16", 0, "1x4n64"), (17, 136, 520, "C", 4, "f32", 8, "1x4n64"),
             (32, 72, 8, "F", 1, "bf16", 0, "1x4n64"), (33, 264, 1000, "C", 2, "f16", 16, "4x1n64"),
             (100, 200, 1040, "F", 8, "f32", 0, "4x1n64"), (128, 64, 136, "C", 1, "f16", 0, "4x1n64"),
             (7, 8, 72, "C", 1, "f32", 0, "1x4n64"), (1, 200, 1040, "C", 4, "f16", 8, "1x4x2n64"),
             (31, 136, 520, "F", 2, "bf16", 0, "1x4x2n64"), (16, 264, 1000, "F", 1, "f32", 8, "1x4x2n64"),
             (3, 72, 136, "F", 8, "f16", 16, "1x4x2n64"), (9, 200, 1040, "C", 2, "f16", 0, "1x4n64")]
    # each in the schedule's cluster size for its order and split (1, 4 or 8 blocks), the last in clusters of 2
    clusters = [skinny.cluster_for(order, splits) for _, _, _, order, splits, *_ in cases[:-1]] + [2]
    for (m, n, k, order, splits, out, pad, layout), cluster, b_load in (
            (case, cluster, b_load) for case, cluster in zip(cases, clusters) for b_load in skinny.B_LOADS):
        a_full = rng.uniform(-1, 1, (m, k + pad)).astype(np.float16)
        b_full = rng.uniform(-1, 1, (k, n + pad) if order == "C" else (n, k + pad)).astype(np.float16)
        a, b_mem = a_full[:, :k], (b_full[:, :n] if order == "C" else b_full[:, :k])
        b = b_mem if order == "C" else b_mem.T
        c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
        bias = rng.uniform(-1, 1, (n,)).astype(np.float32)
        dtype = {"f32": cp.float32, "f16": cp.float16, "bf16": cp.uint16}[out]
        d_full = cp.full((m, n + pad), 0xFFFF if out == "bf16" else np.nan, dtype)
        z = cp.full((m, n), np.nan, cp.float32)
        spec = skinny.SkinnyKernelSpec("f16", "relu", "per_n", True, True, out, order, layout, splits, b_load, cluster)
        a_dev, b_dev = cp.asarray(a_full), cp.asarray(b_full)
        skinny.bind(spec, a_dev, b_dev, d_full, m=m, n=n, k=k, c=cp.asarray(c), bias=cp.asarray(bias), z=z, beta=0.5,
                    lda=k + pad, ldb=(n if order == "C" else k) + pad, ldd=n + pad)()
        cp.cuda.runtime.deviceSynchronize()
        pre = a.astype(np.float64) @ b.astype(np.float64) + 0.5 * c + bias[None, :]
        err = np.abs(z.get() - pre).max() / np.abs(pre).max()
        d = d_full.get()[:, :n]
        d = (d.astype(np.uint32) << 16).view(np.float32) if out == "bf16" else d.astype(np.float32)
        # D against relu(pre) within its type's rounding, not by sign: a 16-bit D rounds a tiny positive value to 0
        d_err = np.abs(d - np.maximum(pre, 0)).max() / np.abs(pre).max()
        ok = err < 1e-3 and d_err < {"f32": 1e-3, "f16": 2e-3, "bf16": 8e-3}[out] and not np.isnan(d).any()
        bad += not ok
        print(f"{m}x{n}x{k} B {order} by {b_load} {layout} splits {splits} cluster {cluster} D {out} pad {pad}: "
              f"z err {err:.2e} {'ok' if ok else 'WRONG'}")
    print("all right" if not bad else f"{bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
