"""A/B: the start's barrier split (each role's walk before its wait; the barriers set up by a consumer thread), the
working tree, against the committed kernel (.carry/wgmma_head.cu); per-launch CUDA events, weights rotated past L2,
beside torch.mm; each variant checked against float32 first."""
import json, sys
from pathlib import Path
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs, launch_error
from wgmma_ragged import head_launch
from fraglab import bench as benchmod
from fraglab.gemm import wgmma
from fraglab.runtime import gpu

rebind_head = head_launch(".carry/wgmma_head.cu")


gen = torch.Generator(device="cuda").manual_seed(11)
out = {}
cases = [(64, 4096, 4096, "64x64pk2"), (128, 4096, 4096, "128x64k2"), (1000, 1000, 1000, "64x128pc2"),
         (1000, 2000, 1000, "128x128c2"), (128, 128, 64, "64x64p"), (64, 11008, 4096, "64x128p"),
         (128, 14336, 4096, "128x128"), (3000, 3000, 3000, "192x192c2"), (4096, 4096, 4096, "128x256"),
         (128, 4096, 14336, "128x64k2")]
for m, n, k, tile in cases:
    for order in ("F", "C"):
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order,
                              tile=tile, store="tma")
        variants = {"new": [wgmma.bind(spec, a, b, d, bias=bias, shared=False) for a, b, bias, _ in xs],
                    "head": [rebind_head(spec, wgmma.bind(spec, a, b, d, bias=bias, shared=False)) for a, b, bias, _ in xs]}
        fns = {"torch.mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
        errs = {}
        for name, ls in variants.items():
            errs[name] = launch_error(torch, lambda: ls[0](), d, want)
            if errs[name] < 5e-3:
                fns[name] = (lambda ls: (lambda i: ls[i]()))(ls)
        t = benchmod.time_interleaved(fns, rounds=5, reps=30, rotate=sets)
        key = f"{m}x{n}x{k} {order} {tile}"
        out[key] = {"us": {name: v.median_ms * 1e3 for name, v in t.items()}, "err": errs}
        print(key, "  ".join(f"{name} {v:.2f}" for name, v in out[key]["us"].items()),
              " errs " + " ".join(f"{n_}:{e:.1e}" for n_, e in errs.items()), flush=True)
        xs = d = variants = fns = None
        torch.cuda.empty_cache()
Path(sys.argv[1]).write_text(json.dumps(out, indent=1))
