"""192-row tiles (three consumers): correctness against float64 (torch on the GPU) and timings."""
import sys, itertools
from pathlib import Path
sys.path.insert(0, str(Path.cwd())); sys.path.insert(0, str(Path.cwd() / "benchmarks"))
import torch
from fraglab.gemm import wgmma
from fraglab.runtime import gpu
gpu.cupy()
print(torch.cuda.get_device_name(), flush=True)
bad = 0
def check(m, n, k, tile, out="f16", store="tma", act="relu", bias_mode="per_n", lda=None, ldd=None, dtype="f16", b_order="C"):
    global bad
    g = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
    tdt = torch.float16 if dtype == "f16" else torch.bfloat16
    abuf = torch.rand(m, lda or k, device="cuda", generator=g).sub_(0.5).to(tdt); a = abuf[:, :k]
    b = torch.rand(k, n, device="cuda", generator=g).sub_(0.5).to(tdt)
    if b_order == "F": b = b.t().contiguous().t()
    bias = torch.rand(n if bias_mode == "per_n" else m, device="cuda", generator=g)
    odt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[out]
    dbuf = torch.full((m, ldd or n), float("nan"), device="cuda", dtype=odt); d = dbuf[:, :n]
    spec = wgmma.spec_for(dtype, m, n, k, act=act, bias_mode=bias_mode, tile=tile, out_dtype=out, store=store, b_order=b_order)
    wgmma.launch(spec, a, b, d, bias=bias, alpha=1.5) if not (lda or ldd) else \
        wgmma.bind(spec, a, b, d, bias=bias, alpha=1.5, lda=lda or 0, ldd=ldd or 0)(None)
    torch.cuda.synchronize()
    ref = 1.5 * (a.double() @ b.double()) + (bias.double()[None, :] if bias_mode == "per_n" else bias.double()[:, None])
    if act == "relu": ref = ref.clamp_min(0)
    got = d.double()
    tol = (2.0 ** -8 if out == "bf16" else 2.0 ** -11) * ref.abs() + 2e-3 * max(1.0, ref.abs().max().item())
    ok = bool(((got - ref).abs() <= tol).all()) and not torch.isnan(got).any()
    outside_ok = True
    if ldd:   # the padding columns of D untouched (still NaN)
        outside_ok = bool(torch.isnan(dbuf[:, n:].float()).all())
    if not (ok and outside_ok):
        bad += 1
        err = (got - ref).abs()
        rows = torch.nonzero(err.nan_to_num(1e9) > tol)[:, 0].unique()[:10].tolist()
        print(f"FAIL {m}x{n}x{k} {b_order} {tile} {out} {store} {act} {bias_mode} lda={lda} ldd={ldd}: max err {err.nan_to_num(1e9).max().item():.3g}, rows {rows}, pad ok {outside_ok}", flush=True)
tiles = ["192x192c2", "192x192c2s3", "192x128c2", "192x192", "192x128"]
from concurrent.futures import ThreadPoolExecutor
pre = {wgmma.spec_for(dt, 8, 8, 8, act="relu", bias_mode=bm, tile=t, out_dtype=o, store=st, b_order=bo).build()
       for t in tiles for dt in ("f16", "bf16") for bm in ("per_n", "per_m") for o, st in (("f16", "tma"), ("f32", "direct"), ("bf16", "tma"), ("f32", "tma")) for bo in "CF"}
pre |= {wgmma.WgmmaKernelSpec(**{**wgmma.spec_for("f16", 3000, 3000, 3000, act="relu", bias_mode="per_n", tile=t, out_dtype="f16").__dict__, "l2_promotion": "none"}).build()
        for t in tiles + ["128x192c2", "128x256", "128x192", "128x128"]}
with ThreadPoolExecutor(16) as pool:
    list(pool.map(gpu.module, pre))
print("compiled", len(pre), flush=True)
for tile in tiles:
    for (m, n, k) in [(1, 8, 8), (2, 64, 64), (3, 72, 40), (131, 136, 72), (257, 264, 1000), (997, 520, 8), (300, 1032, 200), (1000, 1000, 1000), (3000, 392, 3000), (130, 200, 64), (255, 192, 120), (512, 384, 57 * 8)]:
        for out, store in (("f16", "tma"), ("f32", "direct"), ("bf16", "tma"), ("f32", "tma")):
            for bo in "CF":
                check(m, n, k, tile, out, store, bias_mode="per_n" if m % 2 else "per_m", dtype="f16" if k % 16 else "bf16", b_order=bo)
    check(1000, 1000, 1000, tile, lda=1008, ldd=1016)
    check(999, 1000, 1000, tile, lda=1000 + 24, ldd=1000 + 8, store="tma")
    check(999, 1000, 1000, tile, lda=1000 + 24, ldd=1000 + 8, store="direct", out="f32")
print("correctness failures:", bad, flush=True)
from wgmma_ragged import operand_sets, padded, round_up, spec, bound, timed
for m, n, k in [(3000, 3000, 3000), (5000, 3000, 2000), (3072, 3072, 3072), (4096, 4096, 4096), (4095, 4096, 4096), (8192, 8192, 8192), (2000, 5000, 3000)]:
    sets, a, b, bias, b16, d = operand_sets(m, n, k)
    ap = [padded(x, round_up(k)) for x in a]
    fns = {}
    s0 = spec(m, n, k)
    fns[f"sched {s0.tile}"] = bound(s0, a, b, d, bias)
    for t in tiles + ["128x192c2", "128x256", "128x192"]:
        for promo in (("none", "128B") if s0.l2_promotion == "none" else ("256B", "none")):
            ss = wgmma.WgmmaKernelSpec(**{**spec(m, n, k, t).__dict__, "l2_promotion": promo})
            fns[f"{t}/{promo}"] = bound(ss, a, b, d, bias)
    timed(m, n, k, sets, a, b, b16, fns)
