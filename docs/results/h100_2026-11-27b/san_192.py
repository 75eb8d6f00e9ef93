"""64x192p under compute-sanitizer: odd sizes, both B orders, f16 D by TMA and f32 D, against float64."""
import sys
import numpy as np
sys.path.insert(0, ".")
import fraglab
from fraglab.runtime import gpu
cp = gpu.cupy()
rng = np.random.default_rng(3)
bad = 0
for m, n, k in ((64, 200, 136), (130, 392, 520), (1, 584, 72)):
    for order in "CF":
        for out in ("f16", "f32"):
            a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
            b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
            bias = rng.uniform(-1, 1, n).astype(np.float16)
            bd = cp.asarray(b) if order == "C" else cp.asfortranarray(cp.asarray(b))
            d = fraglab.gemm(cp.asarray(a), bd, bias=cp.asarray(bias), act="relu", kernel="wgmma", tile="64x192p",
                             out_dtype=out)
            pre = a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64)
            err = np.abs(cp.asnumpy(d).astype(np.float64) - np.maximum(pre, 0)).max() / np.abs(pre).max()
            ok = err < 2e-3
            bad += not ok
            print(f"64x192p {m}x{n}x{k} B {order} D {out}: rel err {err:.1e} {'ok' if ok else 'FAILED'}", flush=True)
sys.exit(1 if bad else 0)
