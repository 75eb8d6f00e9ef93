"""Split-K over four blocks (128x128k4, 64x128pk4) against float64: ragged sizes (ranks left with no K-block), one
cluster walking every tile (several reduce rounds per consumer), both B orders, bias + ReLU, D f32 and f16."""
import itertools, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import numpy as np
from fraglab.gemm import wgmma
from fraglab.runtime import gpu

cp = gpu.cupy()
bad = 0
for tile, (m, n, k), order, one_cluster, out in itertools.product(
        ("128x128k3", "64x128pk3", "64x64pk3"), [(1, 8, 8), (7, 24, 40), (131, 136, 72), (257, 264, 1000),
                                                 (300, 1032, 200), (1100, 520, 136), (128, 4096, 4096)],
        "FC", (False, True), ("f32", "f16")):
    if one_cluster and m * n > 600000:
        continue
    rng = np.random.default_rng(m + n + k)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    w = rng.uniform(-1, 1, (n, k)).astype(np.float16)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    da = cp.asarray(a)
    db = cp.asarray(w).T if order == "F" else cp.asarray(np.ascontiguousarray(w.T))
    dd = cp.full((m, n), cp.nan, dtype=cp.float32 if out == "f32" else cp.float16)
    spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype=out, b_order=order, tile=tile)
    tc = wgmma.ALL_TILES[tile]
    launch = wgmma.bind(spec, da, db, dd, bias=cp.asarray(bias), grid=tc.cluster_blocks if one_cluster else None)
    launch()
    cp.cuda.runtime.deviceSynchronize()
    want = np.maximum(a.astype(np.float64) @ w.T.astype(np.float64) + bias, 0)
    got = dd.get().astype(np.float64)
    err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
    ok = np.isfinite(got).all() and err < (2e-3 if out == "f16" else 1e-4 * max(1, k / 256))
    bad += not ok
    print(f"{tile:10s} {m}x{n}x{k} {order} {'one cluster' if one_cluster else 'grid':11s} D {out}: err {err:.2e} {'ok' if ok else 'WRONG'}", flush=True)
print("all right" if not bad else f"{bad} WRONG")
sys.exit(1 if bad else 0)
