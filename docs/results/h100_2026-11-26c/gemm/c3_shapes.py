"""192x192c2 against 128x192c2 where the schedule now gives 192x192c2: both B orders, L2 promotion none / 128B."""
import sys
from pathlib import Path
sys.path.insert(0, str(Path.cwd())); sys.path.insert(0, str(Path.cwd() / "benchmarks"))
import torch
from fraglab.gemm import wgmma, schedule
from fraglab.runtime import gpu
from wgmma_ragged import operand_sets, spec, bound, timed
gpu.cupy()
print(torch.cuda.get_device_name(), flush=True)
for m, n, k in [(3000, 3000, 3000), (3000, 3000, 1000), (1100, 3000, 1000), (3000, 3000, 6000), (6000, 3000, 3000), (2999, 3001, 3000)]:
    for order in "CF":
        print("schedule", (m, n, k), order, schedule.choose(m, n, k, "f16", order, "f16"), flush=True)
        sets, a, b, bias, b16, d = operand_sets(m, n, k)
        if order == "F":
            b = [x.t().contiguous().t() for x in b]
        fns = {}
        for t in ("192x192c2", "128x192c2"):
            for promo in ("none", "128B"):
                fns[f"{t}/{promo}/B {order}"] = bound(spec(m, n, k, t, promo, b_order=order), a, b, d, bias)
        timed(m, n, k, sets, a, b, b16, fns, f" B {order}")
