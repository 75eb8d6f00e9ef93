# one launch each of fraglab's tiles and cuBLAS at M=64/128, N=K=4096, for ncu (durations in isolation)
import sys, torch
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
from fraglab.gemm.api import prepare
for m in (64, 128):
    a = (torch.rand(m, 4096, device="cuda") - .5).half(); w = (torch.rand(4096, 4096, device="cuda") - .5).half()
    b = w.t(); bias = torch.rand(4096, device="cuda"); d = torch.empty(m, 4096, device="cuda", dtype=torch.half)
    for tile in ("64x64p", "64x64pk2", "128x64k2"):
        prepare(a, b, bias=bias, act="relu", out=d, kernel="wgmma", tile=tile)()
    torch._addmm_activation(bias.half(), a, b); torch.mm(a, b)
torch.cuda.synchronize()
