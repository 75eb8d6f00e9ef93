"""Which operand's 16-mod-32 row pitch costs: the scheduled spec with A, B, D each padded alone and together."""
import sys
from pathlib import Path
sys.path.insert(0, str(Path.cwd())); sys.path.insert(0, str(Path.cwd() / "benchmarks"))
import torch
from fraglab.gemm import wgmma
from fraglab.runtime import gpu
from wgmma_ragged import operand_sets, padded, round_up, spec, bound, timed
gpu.cupy()
print(torch.cuda.get_device_name(), flush=True)
for m, n, k in [(3000, 3000, 3000), (1000, 1000, 1000), (5000, 3000, 2000)]:
    sets, a, b, bias, b16, d = operand_sets(m, n, k)
    ap = [padded(x, round_up(k)) for x in a]; bp = [padded(x, round_up(n)) for x in b]; dp = padded(d, round_up(n))
    s = spec(m, n, k)
    print("sched", s.tile, s.l2_promotion, flush=True)
    fns = {}
    for name, A, B, D, kw in [("asis", a, b, d, {}), ("pad A", ap, b, d, dict(lda=round_up(k))),
                              ("pad B", a, bp, d, dict(ldb=round_up(n))), ("pad D", a, b, dp, dict(ldd=round_up(n))),
                              ("pad AB", ap, bp, d, dict(lda=round_up(k), ldb=round_up(n))),
                              ("pad ABD", ap, bp, dp, dict(lda=round_up(k), ldb=round_up(n), ldd=round_up(n)))]:
        for promo in ("none", "128B", "256B"):
            ss = wgmma.WgmmaKernelSpec(**{**s.__dict__, "l2_promotion": promo})
            fns[f"{name}/{promo}"] = bound(ss, A, B, D, bias, **kw)
    timed(m, n, k, sets, a, b, b16, fns)
    # torch on padded views too
    timed(m, n, k, sets, ap, bp, b16, {}, " (torch on padded A,B)")
