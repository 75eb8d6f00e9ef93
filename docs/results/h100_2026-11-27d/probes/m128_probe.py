"""M 64 / 128 at N 4096: the rules' tile against experimental wgmma tiles (registered here), torch.mm beside."""
import json, sys
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import wgmma
from fraglab.gemm.api import prepare

EXTRA = {"64x64pc2s13": wgmma.TileConfig(64, 64, 13, pingpong=True, cluster_m=2),
         "128x64k2s9": wgmma.TileConfig(128, 64, 9, cluster_k=2),
         "64x64pk2s13": wgmma.TileConfig(64, 64, 13, pingpong=True, cluster_k=2),
         "128x64s9": wgmma.TileConfig(128, 64, 9)}
for name, cfg in EXTRA.items():
    wgmma.EXPERIMENTAL_TILES[name] = wgmma.ALL_TILES[name] = cfg
TILES = sys.argv[2].split(",")
gen = torch.Generator(device="cuda").manual_seed(11)
out = {}
for text in sys.argv[1].split(";"):
    m, n, k, order = text.split(","); m, n, k = int(m), int(n), int(k)
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
    rules = [prepare(a, b, bias=bias, bias_mode="per_n", act="relu", out=d) for a, b, bias, _ in xs]
    fns = {"torch.mm": lambda i: torch.mm(xs[i][0], xs[i][1]), "rules:" + rules[0].kernel_spec.tile: lambda i: rules[i]()}
    errs = {}
    for tile in TILES:
        try:
            spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order, tile=tile)
            ls = [wgmma.bind(spec, a, b, d, bias=bias, shared=False) for a, b, bias, _ in xs]
        except Exception as e:
            print(text, tile, "refused:", str(e)[:200]); continue
        errs[tile] = launch_error(torch, lambda: ls[0](), d, want)
        if errs[tile] < 5e-3:
            fns[tile] = (lambda ls: (lambda i: ls[i]()))(ls)
    t = benchmod.time_interleaved(fns, rounds=5, reps=30, rotate=sets)
    us = {name: v.median_ms * 1e3 for name, v in t.items()}
    base = us["torch.mm"]
    print(f"{text:>18}  " + "  ".join(f"{nm} {v:.2f} ({base / v:.3f})" for nm, v in us.items()), flush=True)
    bad = {kk: v for kk, v in errs.items() if not v < 5e-3}
    if bad: print("   WRONG:", bad)
    xs = d = fns = rules = None
    torch.cuda.empty_cache()
