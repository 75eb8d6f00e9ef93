"""When the wgmma kernel lets the next grid start (FRAGLAB_WGMMA_NEXT_GRID=V build option, env NEXT_GRID): chains of
24 and per-launch events, fraglab's prepared call beside torch.mm, interleaved rounds, weights rotated."""
import os, sys, dataclasses
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs
from fraglab import bench as benchmod
from fraglab.gemm import wgmma
from fraglab.gemm.api import prepare

V = os.environ.get("NEXT_GRID", "0")
_build = wgmma.WgmmaKernelSpec.build
wgmma.WgmmaKernelSpec.build = lambda self: dataclasses.replace(_build(self), options=tuple(_build(self).options) + (f"-DFRAGLAB_WGMMA_NEXT_GRID={V}",))
gen = torch.Generator(device="cuda").manual_seed(3)
for text in sys.argv[1].split(";"):
    m, n, k, order = text.split(","); m, n, k = int(m), int(n), int(k)
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
    runs = [prepare(a, b, bias=bias, bias_mode="per_n", act="relu", out=d) for a, b, bias, _ in xs]
    d.fill_(float("nan")); runs[0](); torch.cuda.synchronize()
    err = float(((d.float() - want).abs().max() / want.abs().max()).item())
    fns = {"fraglab": lambda i: runs[i](), "torch.mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
    res = {}
    for chain in (24, 1):
        t = benchmod.time_interleaved(fns, rounds=3, reps=10 if chain > 1 else 40, rotate=sets, chain=chain)
        res[chain] = {kk: v.median_ms * 1e3 for kk, v in t.items()}
    print(f"V{V} {text:>18} {runs[0].kernel_spec.tile:>10} err {err:.1e}  chain24 fraglab {res[24]['fraglab']:8.2f} torch {res[24]['torch.mm']:8.2f} ({res[24]['torch.mm']/res[24]['fraglab']:.3f})"
          f"  launch fraglab {res[1]['fraglab']:8.2f} torch {res[1]['torch.mm']:8.2f} ({res[1]['torch.mm']/res[1]['fraglab']:.3f})", flush=True)
    xs = runs = d = None; torch.cuda.empty_cache()
