"""Where D goes wrong: 128x128c2x2, f16 D by TMA, B row-major, 200x264x136, bias per column, C and Z, full grid."""
import numpy as np, sys
sys.path.insert(0, ".")
from fraglab.gemm import wgmma
from fraglab.runtime import gpu
cp = gpu.cupy()
rng = np.random.default_rng(5)
m, n, k = 200, 264, 136
for trial in range(6):
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16); b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32); bias = rng.uniform(-1, 1, (n,)).astype(np.float32)
    d = cp.full((m, n), np.nan, cp.float16); z = cp.full((m, n), np.nan, cp.float32)
    spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", has_c=True, save_z=True, tile="128x128c2x2",
                          out_dtype="f16", store="tma", b_order="C")
    wgmma.launch(spec, cp.asarray(a), cp.asarray(b), d, c=cp.asarray(c), bias=cp.asarray(bias), z=z, beta=0.5,
                 grid=None if trial % 2 == 0 else 4)
    cp.cuda.runtime.deviceSynchronize()
    pre = a.astype(np.float64) @ b.astype(np.float64) + 0.5 * c + bias[None, :]
    want = np.maximum(pre, 0)
    got = d.get().astype(np.float64)
    bad = ~(np.abs(got - want) <= 2e-2 * np.maximum(1, np.abs(want)))
    print("trial", trial, "grid", "full" if trial % 2 == 0 else 4, "bad", bad.sum(), "nan", np.isnan(got).sum(),
          "z err", float(np.nanmax(np.abs(z.get() - pre))))
    if bad.any():
        rows, cols = np.nonzero(bad)
        print("  rows", rows.min(), rows.max(), "cols", cols.min(), cols.max(), "first", list(zip(rows[:5], cols[:5])),
              "got", got[rows[:5], cols[:5]], "want", want[rows[:5], cols[:5]])
