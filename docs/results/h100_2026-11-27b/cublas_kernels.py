"""Which kernel torch.mm runs for decode shapes (names, grid, block, cluster from the profiler's trace)."""
import json, sys, tempfile, os
import torch
from torch.profiler import profile, ProfilerActivity
shapes = [(8, 4096, 4096), (32, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096), (128, 11008, 4096),
          (128, 11008, 11008), (128, 14336, 4096), (64, 11008, 4096), (32, 11008, 4096)]
for m, n, k in shapes:
    for order in ("F", "C"):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        w = torch.randn(n, k, device="cuda", dtype=torch.float16)
        b = w.t() if order == "F" else w.t().contiguous()
        bias = torch.randn(n, device="cuda", dtype=torch.float16)
        for f in (lambda: torch.mm(a, b), lambda: torch._addmm_activation(bias, a, b, use_gelu=False)):
            f(); torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            torch.mm(a, b); torch._addmm_activation(bias, a, b, use_gelu=False); torch.cuda.synchronize()
        path = tempfile.mktemp(suffix=".json"); prof.export_chrome_trace(path)
        ev = [e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "kernel"]
        os.remove(path)
        for e in ev:
            args = e.get("args", {})
            print(f"{m}x{n}x{k} {order}: {e['name'][:90]} grid {args.get('grid')} block {args.get('block')} "
                  f"cluster {args.get('cluster', args.get('cluster dim'))} regs {args.get('registers per thread')} "
                  f"smem {args.get('shared memory')} dur {e.get('dur')}", flush=True)
