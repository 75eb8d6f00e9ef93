"""Session 20: what one launch costs beyond its work, per-launch CUDA events (as `gemm --bench --shapes`): fraglab's
tiles against torch.mm at tiny and small shapes, cold inputs; run twice, FRAGLAB_PROGRAMMATIC_LAUNCH=1 and 0."""
import json, os, sys
sys.path.insert(0, ".")
import torch
from fraglab import bench as benchmod
from fraglab.gemm.api import prepare
from fraglab.runtime import gpu

cp = gpu.cupy()
out = {"programmatic": os.environ.get("FRAGLAB_PROGRAMMATIC_LAUNCH", "1")}
shapes = [(128, 128, 64, ("128x128", "128x128c2", "64x64p", "64x64pk2", "128x64k2")),
          (128, 128, 1024, ("128x128", "128x128c2", "64x64p", "64x64pk2", "128x64k2")),
          (1000, 1000, 1000, ("64x128pc2", "128x128", "128x128c2")),
          (64, 4096, 4096, ("64x64pk2", "64x64p")), (128, 4096, 4096, ("128x64k2", "64x64p", "128x64"))]
for m, n, k, tiles in shapes:
    per_set = (m * k + k * n) * 2
    sets = benchmod.rotation_count(per_set)
    xs = []
    for _ in range(sets):
        a = (torch.rand(m, k, device="cuda") - 0.5).half()
        w = (torch.rand(n, k, device="cuda") - 0.5).half()
        bias = torch.rand(n, device="cuda")
        xs.append((a, w.t(), bias))
    d = torch.empty(m, n, device="cuda", dtype=torch.float16)
    fns = {"torch.mm": lambda i: torch.mm(xs[i][0], xs[i][1]),
           "torch.add(bias)": lambda i: torch.add(xs[i][2], 1.0)}
    for t in tiles:
        runs = [prepare(a, b, bias=bias, bias_mode="per_n", act="relu", out=d, tile=t, kernel="wgmma") for a, b, bias in xs]
        fns[t] = (lambda rs: (lambda i: rs[i]()))(runs)
    timings = benchmod.time_interleaved(fns, rounds=5, reps=40, rotate=sets)
    key = f"{m}x{n}x{k}"
    out[key] = {name: t.median_ms * 1e3 for name, t in timings.items()}
    print(key, "  ".join(f"{name} {v:.2f}" for name, v in out[key].items()), flush=True)
    del xs, fns, d
    torch.cuda.empty_cache()
print(json.dumps(out))
