"""One launch each (after a warm-up) of torch.mm, the rules' tile and extra tiles, for ncu; cold weights (ncu flushes caches)."""
import sys
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs
from fraglab.gemm import wgmma
from fraglab.gemm.api import prepare
gen = torch.Generator(device="cuda").manual_seed(11)
m, n, k, order, tiles = sys.argv[1].split(","); m, n, k = int(m), int(n), int(k)
sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
a, b, bias, _ = xs[0]
calls = [lambda: torch.mm(a, b), prepare(a, b, bias=bias, bias_mode="per_n", act="relu", out=d)]
for tile in [t for t in tiles.split("+") if t]:
    spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order, tile=tile)
    calls.append(wgmma.bind(spec, a, b, d, bias=bias, shared=False))
for c in calls:
    c(); c()
torch.cuda.synchronize()
