"""One-wave shapes with rows 16 mod 32 bytes: 64x128pc2 (the schedule's) against 2x2 / 1x2 clusters."""
import sys
from pathlib import Path
sys.path.insert(0, str(Path.cwd())); sys.path.insert(0, str(Path.cwd() / "benchmarks"))
import torch
from fraglab.gemm import wgmma, schedule
from fraglab.runtime import gpu
from wgmma_ragged import operand_sets, spec, bound, timed
gpu.cupy()
print(torch.cuda.get_device_name(), flush=True)
for m, n, k in [(1000, 1000, 1000), (1000, 1000, 3000), (1000, 2000, 1000), (2000, 1000, 1000), (500, 1000, 1000),
                (1000, 1000, 500), (200, 1000, 360), (1000, 1000, 4000), (1000, 1000, 1000)]:
    for order in "CF":
        sets, a, b, bias, b16, d = operand_sets(m, n, k)
        if order == "F":
            b = [x.t().contiguous().t() for x in b]
        s0 = spec(m, n, k, b_order=order)
        fns = {f"sched {s0.tile}": bound(s0, a, b, d, bias)}
        for t in ("128x128c2x2", "128x128n2", "128x128c2", "128x64"):
            if t != s0.tile:
                fns[t] = bound(spec(m, n, k, t, b_order=order), a, b, d, bias)
        timed(m, n, k, sets, a, b, b16, fns, f" B {order}")
