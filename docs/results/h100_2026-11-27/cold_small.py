"""Session 20: small ragged shapes with cold L2 (inputs rotated past 2x L2, as `gemm --bench --shapes` times them):
tiles x L2 promotion beside the schedule's, B row- and column-major, against torch.mm / _addmm_activation."""
import json, sys
from pathlib import Path
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from fraglab.bench.timing import rotation_count
import wgmma_ragged as wr


def operand_sets(m, n, k):
    sets = rotation_count((m * k + k * n) * 2)
    a = [torch.rand(m, k, device="cuda").sub_(0.5).half() for _ in range(sets)]
    b = [torch.rand(k, n, device="cuda").sub_(0.5).half() for _ in range(sets)]
    bias = [torch.rand(n, device="cuda") for _ in range(sets)]
    return sets, a, b, bias, [x.half() for x in bias], torch.empty(m, n, device="cuda", dtype=torch.float16)


out = {}
shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[2:]] or [(1000, 1000, 1000), (1000, 2000, 1000)]
for m, n, k in shapes:
    for order in ("C", "F"):
        sets, a, b, bias, b16, d = operand_sets(m, n, k)
        if order == "F":
            b = [x.t().contiguous().t() for x in b]
        now = wr.spec(m, n, k, b_order=order)
        fns = {f"scheduled {now.tile}/{now.l2_promotion}": wr.bound(now, a, b, d, bias)}
        for t in ("64x128pc2", "128x128c2x2", "128x128", "128x128c2", "64x128p", "128x64"):
            for promo in ("none", "64B", "128B", "256B"):
                fns[f"{t}/{promo}"] = wr.bound(wr.spec(m, n, k, t, promo, b_order=order), a, b, d, bias)
        out[f"{m}x{n}x{k}{order}"] = wr.timed(m, n, k, sets, a, b, b16, fns, label=f" B {order}, cold L2")
        del a, b, d, fns
        torch.cuda.empty_cache()
Path(sys.argv[1]).write_text(json.dumps(out, indent=1, default=str))
