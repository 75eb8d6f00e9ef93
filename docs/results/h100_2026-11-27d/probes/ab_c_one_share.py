"""A row-major B with one share (the rules: clusters of 4, TMA) against clusters of 2 / 1 / 8 and copies, at N 14336 / 11008 / 28672 / 57344;
per-launch events and chains of 24, interleaved rounds, weights rotated."""
import json, sys
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm.api import prepare

VARIANTS = ("skinny/k1/c2/tma", "skinny/k1/c1/tma", "skinny/k1/tma", "skinny/k1/c2")
gen = torch.Generator(device="cuda").manual_seed(13)
out = {}
shapes = [(m, n, k) for n in (14336, 11008) for m in (1, 8, 16, 32) for k in (4096, 11008, 14336)] + [(m, 28672, 4096) for m in (1, 16, 32)] + [(16, 57344, 8192)]
for m, n, k in shapes:
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, "C")
    runs = {"rules": [prepare(a, b, bias=bias, bias_mode="per_n", act="relu", out=d) for a, b, bias, _ in xs]}
    rule_tile = runs["rules"][0].kernel_spec.tile
    for v in VARIANTS:
        runs[v] = [prepare(a, b, bias=bias, bias_mode="per_n", act="relu", out=d, kernel="wgmma", tile=v) for a, b, bias, _ in xs]
    errs = {name: launch_error(torch, (lambda r: lambda: r[0]())(r), d, want) for name, r in runs.items()}
    fns = {name: (lambda r: (lambda i: r[i]()))(r) for name, r in runs.items() if errs[name] < 5e-3}
    fns["torch.mm"] = lambda i: torch.mm(xs[i][0], xs[i][1])
    res = {}
    for chain in (1, 24):
        t = benchmod.time_interleaved(fns, rounds=5, reps=30 if chain == 1 else 6, rotate=sets, chain=chain)
        res[chain] = {name: v.median_ms * 1e3 for name, v in t.items()}
    key = f"{m}x{n}x{k} C rules={rule_tile}"
    out[key] = {"us": res, "err": errs}
    for chain in (1, 24):
        r = res[chain]
        print(f"{key:>44} chain {chain:>2}: " + "  ".join(f"{nm} {v:.2f}" for nm, v in r.items())
              + f"   best variant/rules {min(r[v] for v in VARIANTS if v in r) / r['rules']:.3f}", flush=True)
    xs = d = runs = fns = None
    torch.cuda.empty_cache()
json.dump(out, open(sys.argv[1], "w"), indent=1)
