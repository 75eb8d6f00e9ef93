import sys, itertools
from pathlib import Path
sys.path.insert(0, str(Path.cwd())); sys.path.insert(0, str(Path.cwd() / "tests" / "gemm"))
import numpy as np, cupy as cp
from fraglab.gemm import wgmma
from fraglab.gemm.reference import check_result, reference_gemm
from gemm_operands import host_d, poisoned_outputs, random_operands
def run(tile, m, n, k, dtype, act, bias_mode, beta, save_z, out, store, grid, b_order="C"):
    a, a64, b, b64, bias, c = random_operands(cp, np.random.default_rng(6), m, n, k, dtype, bias_mode=bias_mode, beta=beta, b_order=b_order)
    d, z = poisoned_outputs(cp, m, n, out, save_z)
    spec = wgmma.spec_for(dtype, m, n, k, act=act, bias_mode=bias_mode, has_c=bool(beta), save_z=save_z, tile=tile, out_dtype=out, store=store, b_order=b_order)
    wgmma.launch(spec, a, b, d, c=None if c is None else cp.asarray(c), bias=None if bias is None else cp.asarray(bias), z=z, alpha=1.5, beta=beta, grid=grid)
    cp.cuda.runtime.deviceSynchronize()
    ref, _ = reference_gemm(a64, b64, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=1.5, beta=beta)
    got = host_d(d, out).astype(np.float64)
    err = np.abs(got - ref); tol = 2e-2 * np.abs(ref) + 2e-2 * max(1, np.abs(ref).max())
    bad = ~(err <= tol)
    rows, cols = np.nonzero(bad)
    print(f"{tile} {m}x{n}x{k} {dtype} {act} {bias_mode} beta {beta} z {save_z} {out} {store} grid {grid}: bad {bad.sum()}"
          + (f" rows {rows.min()}-{rows.max()} cols {cols.min()}-{cols.max()}" if bad.any() else ""), flush=True)
for tile in ("128x192c2x2", "128x128c2x2"):
    cb = wgmma.ALL_TILES[tile].cluster_blocks
    for act, bm, beta, z, out, store, grid in [("gelu", "per_m", 0.5, True, "f16", "tma", cb), ("none", "none", 0.0, False, "f32", "direct", cb),
                                               ("none", "none", 0.0, False, "f32", "direct", None), ("none", "per_m", 0.0, False, "f16", "tma", cb),
                                               ("none", "none", 0.0, False, "f16", "tma", cb), ("gelu", "per_m", 0.5, True, "f16", "tma", None),
                                               ("none", "none", 0.0, False, "f32", "direct", 2 * cb)]:
        run(tile, 1100, 520, 136, "bf16", act, bm, beta, z, out, store, grid)
    for m, n in [(1100, 576), (1024, 520), (1100, 384), (256, 520)]:
        run(tile, m, n, 136, "bf16", "none", "none", 0.0, False, "f32", "direct", cb)
