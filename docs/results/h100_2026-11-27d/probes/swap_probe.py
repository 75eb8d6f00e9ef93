"""Swap-AB probe: D^T = W A^T on the existing wgmma kernel (weight as the M-side operand, tokens as N), into an
N x M scratch, against torch.mm and fraglab's rules on D = A W^T; per-launch events, weights rotated past L2."""
import json, sys
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import wgmma
import fraglab

CANDS = sys.argv[2].split(",") if len(sys.argv) > 2 else ["64x64p", "64x64pk2", "64x128p", "64x128pk2", "128x64k2", "128x64n2", "64x256p"]
gen = torch.Generator(device="cuda").manual_seed(11)
out = {}
for text in sys.argv[1].split(";"):
    m, n, k, order = text.split(","); m, n, k = int(m), int(n), int(k)
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
    dt = torch.empty(n, m, device="cuda", dtype=torch.float16)
    fns = {"torch.mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
    from fraglab.gemm.api import prepare
    rules = [prepare(a, b, bias=bias, bias_mode="per_n", act="relu", out=d) for a, b, bias, _ in xs]
    fns["rules:" + rules[0].kernel_spec.tile] = lambda i: rules[i]()
    errs = {}
    for tile in CANDS:
        cfg = wgmma.ALL_TILES[tile]
        a_order = "C" if order == "F" else "F"
        spec = wgmma.spec_for("f16", n, m, k, act="relu", bias_mode="per_m", out_dtype="f16", b_order="F",
                              tile=tile, store="direct", a_order=a_order)
        try:
            ls = [wgmma.bind(spec, b.t(), a.t(), dt, bias=bias, shared=False) for a, b, bias, _ in xs]
        except Exception as e:
            print(text, tile, "refused:", str(e)[:150]); continue
        dt.fill_(float("nan")); ls[0](); torch.cuda.synchronize()
        err = float(((dt.t().float() - want).abs().max() / want.abs().max()).item())
        errs[tile] = err
        if err < 5e-3:
            fns["swap:" + tile] = (lambda ls: (lambda i: ls[i]()))(ls)
    t = benchmod.time_interleaved(fns, rounds=5, reps=30, rotate=sets)
    us = {name: v.median_ms * 1e3 for name, v in t.items()}
    out[text] = {"us": us, "err": errs}
    base = us["torch.mm"]
    print(f"{text:>18}  " + "  ".join(f"{nm} {v:.2f} ({base / v:.3f})" for nm, v in us.items()), flush=True)
    bad = {kk: v for kk, v in errs.items() if not v < 5e-3}
    if bad: print("   WRONG:", bad)
    xs = d = dt = fns = rules = None
    torch.cuda.empty_cache()
json.dump(out, open("/tmp/swap_probe.json", "w"), indent=1)
