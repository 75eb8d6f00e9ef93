"""Which row pitches slow the wgmma GEMM's TMA loads: shapes with 16-, 32- and 128-byte aligned rows of A, B and
D, each with L2 promotion 256B / 128B / none, f16 / f32 D and both B orders, against torch.mm and
torch._addmm_activation (the issue-25 exploration; results in docs/results/h100_2026-11-25b/gemm/).

Device: PYTHONPATH=$PWD python3 benchmarks/wgmma_explore_alignment.py OUT.json
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fraglab.gemm import wgmma
from fraglab.runtime import gpu
from wgmma_suite import time_kernels
import torch
gpu.cupy()
SHAPES = [(3000,3000,3000),(3008,3008,3008),(3072,3072,3072),(4096,4096,4000),(4096,4000,4096),(4096,4096,4032),
          (5000,3000,2000),(1000,1000,1000),(1024,1024,1024),(2048,2048,2000),(2048,2000,2048)]
res = {}
for m, n, k in SHAPES:
    sets = max(1, min(4, (200 << 20) // ((m * k + k * n) * 2)))
    a = [torch.rand(m, k, device="cuda").sub_(0.5).half() for _ in range(sets)]
    b = [torch.rand(k, n, device="cuda").sub_(0.5).half() for _ in range(sets)]
    bF = [x.t().contiguous().t() for x in b]
    bias = [torch.rand(n, device="cuda") for _ in range(sets)]
    b16 = [x.half() for x in bias]
    d16 = torch.empty(m, n, device="cuda", dtype=torch.float16)
    d32 = torch.empty(m, n, device="cuda")
    fns = {}
    for tile, prom, out, order in [("128x256","256B","f16","C"),("128x256","none","f16","C"),("128x256","128B","f16","C"),
                                   ("128x256","256B","f32","C"),("128x256","256B","f16","F"),("128x128","256B","f16","C"),
                                   ("128x128","none","f16","C")]:
        spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", tile=tile, out_dtype=out, b_order=order)
        spec = wgmma.WgmmaKernelSpec(**{**spec.__dict__, "l2_promotion": prom})
        bb = b if order == "C" else bF
        d = d16 if out == "f16" else d32
        ls = [wgmma.bind(spec, a[i], bb[i], d, bias=bias[i]) for i in range(sets)]
        fns[f"{tile}/{prom}/{out}/{order}"] = lambda i, ls=ls: ls[i](None)
    fns["torch.mm"] = lambda i: torch.mm(a[i], b[i])
    fns["torch.mm BF"] = lambda i: torch.mm(a[i], bF[i])
    fns["addmm_act"] = lambda i: torch._addmm_activation(b16[i], a[i], b[i])
    ms = time_kernels(torch, fns, sets)
    r = {k2: 2.0*m*n*k/v/1e9 for k2, v in ms.items()}
    res[f"{m}x{n}x{k}"] = r
    print(f"{m}x{n}x{k}: " + " ".join(f"{x} {v:.0f}" for x, v in r.items()), flush=True)
Path(sys.argv[1]).write_text(json.dumps(res, indent=1))
