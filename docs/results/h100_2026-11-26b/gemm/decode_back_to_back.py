# (run from the repository root: PYTHONPATH=$PWD python3 docs/results/h100_2026-11-26b/gemm/decode_back_to_back.py)
# Does cuBLAS gain from following itself (programmatic dependent launch)? Time back to back, and alternating with
# fraglab's kernel or with a tiny torch kernel, N = K = 4096, weights rotated.
import sys, torch
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
from decode_inputs import decode_inputs
from fraglab import bench as benchmod
from fraglab.gemm.api import prepare
gen = torch.Generator(device="cuda").manual_seed(3)
for m in (16, 64):
    sets, xs, d, want = decode_inputs(torch, gen, m, 4096, 4096, "F")
    ours = [prepare(a, b, bias=bias, act="relu", out=d) for a, b, bias, _ in xs]
    tiny = torch.zeros(8, device="cuda")
    fns = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1]),
           "ours": lambda i: ours[i](),
           "tiny": lambda i: tiny.add_(1.0),
           "mm+ours": lambda i: (torch.mm(xs[i][0], xs[i][1]), ours[(i + 1) % len(ours)]()),
           "mm+tiny": lambda i: (torch.mm(xs[i][0], xs[i][1]), tiny.add_(1.0)),
           "ours+tiny": lambda i: (ours[i](), tiny.add_(1.0)),
           "mm+mm": lambda i: (torch.mm(xs[i][0], xs[i][1]), torch.mm(xs[(i + 1) % len(xs)][0], xs[(i + 1) % len(xs)][1])),
           "ours+ours": lambda i: (ours[i](), ours[(i + 1) % len(ours)]())}
    t = benchmod.time_interleaved(fns, rounds=3, reps=30, rotate=sets)
    print(m, "  ".join(f"{k} {v.median_ms * 1e3:.1f}" for k, v in t.items()), flush=True)
