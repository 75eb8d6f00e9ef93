"""Clusters two by two / one by two (A multicast along N): correctness against float64 and timings."""
import sys
from pathlib import Path
sys.path.insert(0, str(Path.cwd())); sys.path.insert(0, str(Path.cwd() / "benchmarks"))
import torch
from concurrent.futures import ThreadPoolExecutor
from fraglab.gemm import wgmma
from fraglab.runtime import gpu
gpu.cupy()
print(torch.cuda.get_device_name(), flush=True)
bad = 0
TILES = ["128x64c2x2", "128x128c2x2", "128x64n2", "128x128n2", "128x192c2x2"]
CASES = [("f16", "tma", "per_n"), ("f32", "direct", "per_m"), ("bf16", "tma", "per_m"), ("f32", "tma", "per_n")]
SIZES = [(1, 8, 8), (7, 24, 40), (131, 136, 72), (300, 200, 1000), (997, 520, 8), (300, 1032, 200), (1000, 1000, 1000), (257, 72, 136)]
pre = {wgmma.spec_for(dt, 8, 8, 8, act="relu", bias_mode=bm, tile=t, out_dtype=o, store=st, b_order=bo, a_order=ao).build()
       for t in TILES for dt in ("f16", "bf16") for o, st, bm in CASES for bo in "CF" for ao in "C"}
with ThreadPoolExecutor(16) as pool:
    list(pool.map(gpu.module, pre))
print("compiled", len(pre), flush=True)
def check(m, n, k, tile, out, store, bias_mode, dtype, b_order, a_order="C", grid=None):
    global bad
    g = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
    tdt = torch.float16 if dtype == "f16" else torch.bfloat16
    a = torch.rand(m, k, device="cuda", generator=g).sub_(0.5).to(tdt)
    b = torch.rand(k, n, device="cuda", generator=g).sub_(0.5).to(tdt)
    if b_order == "F": b = b.t().contiguous().t()
    if a_order == "F": a = a.t().contiguous().t()
    bias = torch.rand(n if bias_mode == "per_n" else m, device="cuda", generator=g)
    odt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[out]
    d = torch.full((m, n), float("nan"), device="cuda", dtype=odt)
    spec = wgmma.spec_for(dtype, m, n, k, act="relu", bias_mode=bias_mode, tile=tile, out_dtype=out, store=store,
                          b_order=b_order, a_order=a_order)
    wgmma.launch(spec, a, b, d, bias=bias, alpha=1.5, grid=grid)
    torch.cuda.synchronize()
    ref = (1.5 * (a.double() @ b.double()) + (bias.double()[None, :] if bias_mode == "per_n" else bias.double()[:, None])).clamp_min(0)
    got = d.double()
    tol = (2.0 ** -8 if out == "bf16" else 2.0 ** -11) * ref.abs() + 2e-3 * max(1.0, ref.abs().max().item())
    if not (bool(((got - ref).abs() <= tol).all()) and not torch.isnan(got).any()):
        bad += 1
        err = (got - ref).abs().nan_to_num(1e9)
        print(f"FAIL {m}x{n}x{k} {tile} {out} {store} {bias_mode} {dtype} B {b_order} A {a_order} grid {grid}: max err {err.max().item():.3g}", flush=True)
for tile in TILES:
    cb = wgmma.ALL_TILES[tile].cluster_blocks
    for i, (m, n, k) in enumerate(SIZES):
        for j, (out, store, bm) in enumerate(CASES):
            for bo in "CF":
                dt = "f16" if (i + j) % 2 else "bf16"
                check(m, n, k, tile, out, store, bm, dt, bo)
                if m % 8 == 0 and j == 0:
                    check(m, n, k, tile, out, store, bm, dt, bo, a_order="F")
    for bo in "CF":
        check(1100, 520, 136, tile, "f16", "tma", "per_n", "f16", bo, grid=cb)   # one cluster walks every unit
        check(1100, 520, 136, tile, "f32", "direct", "per_m", "f16", bo, grid=cb)
print("correctness failures:", bad, flush=True)
from wgmma_ragged import operand_sets, spec, bound, timed
for m, n, k in [(1000, 1000, 1000), (3000, 3000, 3000), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096)]:
    for order in "CF":
        sets, a, b, bias, b16, d = operand_sets(m, n, k)
        if order == "F":
            b = [x.t().contiguous().t() for x in b]
        s0 = spec(m, n, k, b_order=order)
        fns = {f"sched {s0.tile}/{s0.l2_promotion}": bound(s0, a, b, d, bias)}
        for t in TILES + ["64x128pc2", "128x64", "128x128c2"]:
            fns[f"{t}"] = bound(spec(m, n, k, t, b_order=order), a, b, d, bias)
        timed(m, n, k, sets, a, b, b16, fns, f" B {order}")
